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
    """USD prices of the capacity and storage the planner compares."""

    wcu_hour: float = 0.00065  # provisioned write capacity unit, per hour
    rcu_hour: float = 0.00013  # provisioned read capacity unit, per hour
    write_request_unit: float = 0.625 / 1_000_000  # on-demand, per write request unit
    read_request_unit: float = 0.125 / 1_000_000  # on-demand, per read request unit
    storage_gb_month: float = 0.25  # Standard table class, per GB-month
    region: str = REGION
    as_of: str = AS_OF


US_EAST_1 = Prices()
