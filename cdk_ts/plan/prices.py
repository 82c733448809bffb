"""DynamoDB prices the planner uses: one table, one Region, one date. Check them before you rely on a figure.

Region us-east-1 (US East, N. Virginia), Standard table class, as published on the DynamoDB pricing
page after the on-demand price reduction of 1 November 2024; copied into this module on 2026-11-22
and not re-checked automatically. Prices differ by Region and change; edit this module (or pass a
``Prices`` of your own) to plan for another Region.
"""

from __future__ import annotations

from dataclasses import dataclass

REGION = "us-east-1"
AS_OF = "2024-11-01 (on-demand price reduction); copied 2026-11-22"
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
    region: str = REGION
    as_of: str = AS_OF


US_EAST_1 = Prices()
