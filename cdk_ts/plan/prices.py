"""DynamoDB prices the planner uses: one Region, one date. Check them before you rely on a figure.

Region us-east-1 (US East, N. Virginia). Each figure with its source (checked 2026-11-23):

- Standard provisioned WCU-hour $0.00065, RCU-hour $0.00013: AWS Price List, DynamoDB offer 20260911124422
  for us-east-1 (usage types ``WriteCapacityUnit-Hrs`` / ``ReadCapacityUnit-Hrs``), and
  https://aws.amazon.com/dynamodb/pricing/provisioned/.
- Standard on-demand $0.625 per million write request units, $0.125 per million read request units: the same
  Price List offer (``WriteRequestUnits`` / ``ReadRequestUnits``), after the 50% reduction of 1 November 2024
  (https://aws.amazon.com/dynamodb/pricing/on-demand/).
- Standard storage $0.25 per GB-month (first 25 GB free, not modelled): the same offer (``TimedStorage-ByteHrs``).
- Standard-IA storage $0.10 per GB-month, no free tier: the same offer (``IA-TimedStorage-ByteHrs``).
  Standard-IA throughput (``IA-WriteRequestUnits`` $0.78 and ``IA-ReadRequestUnits`` $0.155 per million,
  ``IA-WriteCapacityUnit-Hrs`` $0.00081, ``IA-ReadCapacityUnit-Hrs`` $0.00016) is not used: the planner
  assumes closed periods are not read.
- Warm throughput: default warm throughput is free and raising it is charged
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html), but no published
  us-east-1 figure was found on 2026-11-23, so :data:`US_EAST_1` leaves it unpriced (None): the planner
  reports the part as unpriced instead of inventing a number. Pass ``warm_write_per_1000`` /
  ``warm_read_per_1000`` (CLI ``--warm-write-price`` / ``--warm-read-price``) from your pricing page.
- Export to S3: billed per GB of the base table at the export time (usage type ``ExportDataSize-Bytes``,
  DynamoDB developer guide, "Understanding your billing and usage reports"); no published us-east-1 figure
  was found, so it is unpriced too (``export_gb``, CLI ``--export-price``).

Prices differ by Region and change; edit this module (or pass a ``Prices`` of your own) to plan for another
Region.
"""

from __future__ import annotations

from dataclasses import dataclass

REGION = "us-east-1"
AS_OF = "Price List offer 2026-09-11, checked 2026-11-23; warm throughput and exports unpriced"
HOURS_PER_MONTH = 730
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600


@dataclass(frozen=True)
class Prices:
    """USD prices of the capacity and storage the planner compares.

    :param wcu_hour: one provisioned write capacity unit for one hour.
        Default: 0.00065.
    :param rcu_hour: one provisioned read capacity unit for one hour.
        Default: 0.00013.
    :param write_request_unit: one on-demand write request unit.
        Default: 0.625 / 1,000,000.
    :param read_request_unit: one on-demand read request unit.
        Default: 0.125 / 1,000,000.
    :param storage_gb_month: one GB stored for a month, Standard table class.
        Default: 0.25.
    :param ia_storage_gb_month: one GB stored for a month, Standard-IA table class.
        Default: 0.10.
    :param warm_write_per_1000: raising warm throughput by 1,000 write units per second, once.
        Default: None — unpriced (no published figure found; see the module docstring).
    :param warm_read_per_1000: raising warm throughput by 1,000 read units per second, once.
        Default: None — unpriced.
    :param export_gb: a full export to S3, per GB of table size.
        Default: None — unpriced.
    :param region: the Region the prices are for.
        Default: ``"us-east-1"``.
    :param as_of: when the prices were published and copied.
        Default: :data:`AS_OF`.
    """

    wcu_hour: float = 0.00065
    rcu_hour: float = 0.00013
    write_request_unit: float = 0.625 / 1_000_000
    read_request_unit: float = 0.125 / 1_000_000
    storage_gb_month: float = 0.25
    ia_storage_gb_month: float = 0.10
    warm_write_per_1000: float | None = None
    warm_read_per_1000: float | None = None
    export_gb: float | None = None
    region: str = REGION
    as_of: str = AS_OF


US_EAST_1 = Prices()
