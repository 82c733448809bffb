"""DynamoDB prices the planner uses: one Region, one date. Check them before you rely on a figure.

Region us-east-1 (US East, N. Virginia). Source and status of each figure (looked up 2026-11-23):

- Standard provisioned WCU-hour $0.00065, RCU-hour $0.00013: https://aws.amazon.com/dynamodb/pricing/provisioned/
  (copied 2026-11-22, unchanged since the 2018 page).
- Standard on-demand $0.625 per million write request units, $0.125 per million read request units: after the
  50% reduction of 1 November 2024 (https://aws.amazon.com/dynamodb/pricing/on-demand/; the same figures are
  quoted by third-party summaries of the reduction, read 2026-11-23).
- Standard storage $0.25 per GB-month (first 25 GB free, not modelled): the on-demand pricing page.
- Standard-IA storage $0.10 per GB-month (60% below Standard): the on-demand pricing page. NOT re-verified
  with the search tool on 2026-11-23.
- Standard-IA throughput is 1.25x Standard (the ratio published for the AWS China Regions, read 2026-11-23:
  CNY 0.0725 vs 0.058 per 10 WCU-hours); the us-east-1 IA figures below are that ratio applied to the Standard
  figures, NOT verified against the us-east-1 page.
- Warm throughput, charged once when raised: $0.013 per 1,000 write units/s and $0.0026 per 1,000 read units/s
  raised above the table's current warm throughput. From memory of the pricing page; NOT verified.
- Export to S3 (full export): $0.10 per GB of table size: the on-demand pricing page; NOT re-verified.

Prices differ by Region and change; edit this module (or pass a ``Prices`` of your own) to plan for another
Region.
"""

from __future__ import annotations

from dataclasses import dataclass

REGION = "us-east-1"
AS_OF = "2024-11-01 (on-demand price reduction); copied 2026-11-22, IA/warm/export figures unverified"
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
        Default: 0.10 (unverified, see the module docstring).
    :param ia_throughput_factor: Standard-IA throughput price over Standard's (provisioned and on-demand).
        Default: 1.25 (unverified for us-east-1).
    :param warm_write_per_1000: raising warm throughput by 1,000 write units per second, once.
        Default: 0.013 (unverified).
    :param warm_read_per_1000: raising warm throughput by 1,000 read units per second, once.
        Default: 0.0026 (unverified).
    :param export_gb: a full export to S3, per GB of table size.
        Default: 0.10 (unverified).
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
    ia_throughput_factor: float = 1.25
    warm_write_per_1000: float = 0.013
    warm_read_per_1000: float = 0.0026
    export_gb: float = 0.10
    region: str = REGION
    as_of: str = AS_OF


US_EAST_1 = Prices()
