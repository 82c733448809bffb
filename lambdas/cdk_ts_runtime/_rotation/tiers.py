"""Capacity tiers applied to period tables: UpdateTable requests, DynamoDB's decrease budget, auto scaling."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._errors import MissingClientError
from cdk_ts_runtime._rotation.config import CapacityTier
from cdk_ts_runtime._rotation.report import ChangeBudget, PeriodTable, RunReport, describe_table, record_failure

DECREASES_PER_DAY = 27
FREE_DECREASES = 4  # any time in a UTC day; after these, one more per hour without a decrease
_SCALING_DIMENSIONS = {
    "read": ("dynamodb:table:ReadCapacityUnits", "DynamoDBReadCapacityUtilization"),
    "write": ("dynamodb:table:WriteCapacityUnits", "DynamoDBWriteCapacityUtilization"),
}


@dataclass(eq=False, kw_only=True)
class TierChanges:
    """Moves period tables to their capacity tiers, within the run's change budget and DynamoDB's limits.

    :param dynamodb: the boto3 DynamoDB client.
    :param autoscaling: the boto3 Application Auto Scaling client; may be None unless a tier uses auto
        scaling.
    :param budget: the run's change budget, shared with expiry.
    :param max_concurrency: tables updated in parallel.
    :param owned: whether a table, given its DescribeTable description, belongs to this rotation (its tags).
    :param dry_run: decide and report every step as a real run would, but make no UpdateTable or
        auto-scaling call.
        Default: False.
    """

    dynamodb: Any
    autoscaling: Any
    budget: ChangeBudget
    max_concurrency: int
    owned: Callable[[dict[str, Any]], bool]
    dry_run: bool = False

    def apply(
        self,
        tables: list[PeriodTable],
        tier_for: Callable[[PeriodTable], CapacityTier],
        when: datetime,
        report: RunReport,
    ) -> None:
        """Take each table one step towards ``tier_for(table)``, tables in parallel.

        A table gets at most one UpdateTable per run (it is UPDATING afterwards); the next step is the next
        run's. Steps a DynamoDB limit or the run's change budget refuse, tables not ACTIVE and answers
        that mean "later" are deferred; a table whose change fails otherwise is reported as an ``error``
        and the others go on.
        """
        scaled = self.autoscaled_tables([t.name for t in tables])
        jobs = [(t, tier_for(t)) for t in tables]

        def one(table: PeriodTable, tier: CapacityTier) -> None:
            try:
                self._apply(table, tier, when, scaled, report)
            except Exception as error:  # noqa: BLE001 - one table's failure must not stop the others
                record_failure(report, table.name, "tier", error)

        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            list(pool.map(lambda job: one(*job), jobs))

    def _apply(
        self, table: PeriodTable, tier: CapacityTier, when: datetime, scaled: set[str], report: RunReport
    ) -> None:
        """Take the table one step towards ``tier``: at most one UpdateTable, and only on an ACTIVE table."""
        description = describe_table(self.dynamodb, table.name)
        steps = tier_steps(description, tier)
        needs_scaling_change = (table.name in scaled) != bool(tier.auto_scaling and not tier.is_on_demand)
        if not steps and not needs_scaling_change:
            return
        status = description.get("TableStatus")
        if status != "ACTIVE":
            report.add("defer", table.name, tier=tier.describe(),
                       reason=f"status {status}: the next change waits until the table is ACTIVE again")
            return
        if self.budget.spent():  # before the ownership check: its ListTagsOfResource would be wasted
            report.add("defer", table.name, tier=tier.describe(), reason=self.budget.reason)
            return
        if not self.owned(description):
            report.add("not_owned", table.name, reason="no cdk-ts:prefix/period tags of this rotation; left as it is")
            return
        if table.name in scaled and not tier.auto_scaling:
            self._deregister_scaling(table.name, report)
        if tier.auto_scaling and not tier.is_on_demand:
            self.register_scaling(table.name, tier, scaled, report)
        index, request = self._first_allowed(table, tier, steps, description, when, report)
        if not request:
            return
        if not self.budget.take():
            report.add("defer", table.name, tier=tier.describe(), reason=self.budget.reason)
            return
        if not self.dry_run:
            self.dynamodb.update_table(TableName=table.name, **request)
        report.add(
            "update", table.name, tier=tier.describe(), was=current_capacity(description), changes=sorted(request),
            steps_left=len(steps) - index - 1,
        )

    @staticmethod
    def _first_allowed(
        table: PeriodTable, tier: CapacityTier, steps: list[dict[str, Any]], description: Mapping[str, Any],
        when: datetime, report: RunReport,
    ) -> tuple[int, dict[str, Any]]:
        """The first step no DynamoDB limit refuses at ``when``, with its index; each refused one is deferred."""
        for index, step in enumerate(steps):
            request, refusals = split_refused(step, description, when)
            for reason in refusals:
                report.add("defer", table.name, tier=tier.describe(), reason=reason)
            if request:
                return index, request
        return len(steps), {}

    def autoscaled_tables(self, names: list[str]) -> set[str]:
        """The subset of ``names`` that has an Application Auto Scaling target."""
        if self.autoscaling is None or not names:
            return set()
        found: set[str] = set()
        for chunk in _chunks([f"table/{n}" for n in names], 50):
            pages = self.autoscaling.get_paginator("describe_scalable_targets").paginate(
                ServiceNamespace="dynamodb", ResourceIds=chunk
            )
            for page in pages:
                found.update(t["ResourceId"].removeprefix("table/") for t in page["ScalableTargets"])
        return found

    def register_scaling(self, name: str, tier: CapacityTier, scaled: set[str], report: RunReport) -> None:
        """Register target tracking between the tier's units and its auto-scaling maximum (once per table)."""
        if self.autoscaling is None:
            raise MissingClientError(
                "a tier uses auto scaling but the rotator has no application-autoscaling client: pass "
                "TableRotator(autoscaling=boto3.client('application-autoscaling'))"
            )
        if name in scaled:
            return
        scaling = tier.auto_scaling
        if self.dry_run:
            report.add("register_autoscaling", name, target=scaling.target_utilization)
            return
        limits = {
            "read": (tier.read_capacity, scaling.max_read_capacity),
            "write": (tier.write_capacity, scaling.max_write_capacity),
        }
        for kind, (dimension, metric) in _SCALING_DIMENSIONS.items():
            low, high = limits[kind]
            self.autoscaling.register_scalable_target(
                ServiceNamespace="dynamodb", ResourceId=f"table/{name}", ScalableDimension=dimension,
                MinCapacity=low, MaxCapacity=high,
            )
            self.autoscaling.put_scaling_policy(
                PolicyName=f"{name}-{kind}", ServiceNamespace="dynamodb", ResourceId=f"table/{name}",
                ScalableDimension=dimension, PolicyType="TargetTrackingScaling",
                TargetTrackingScalingPolicyConfiguration={
                    "TargetValue": scaling.target_utilization,
                    "PredefinedMetricSpecification": {"PredefinedMetricType": metric},
                },
            )
        report.add("register_autoscaling", name, target=scaling.target_utilization)

    def _deregister_scaling(self, name: str, report: RunReport) -> None:
        if self.dry_run:
            report.add("deregister_autoscaling", name)
            return
        for dimension, _metric in _SCALING_DIMENSIONS.values():
            try:
                self.autoscaling.deregister_scalable_target(
                    ServiceNamespace="dynamodb", ResourceId=f"table/{name}", ScalableDimension=dimension
                )
            except ClientError as error:
                if error_code(error) != "ObjectNotFoundException":
                    raise
        report.add("deregister_autoscaling", name)


#: Provisioned -> on-demand switches DynamoDB allows in a rolling 24 h (on-demand -> provisioned: any time).
ON_DEMAND_SWITCHES_PER_DAY = 4
#: Table class updates DynamoDB allows in a trailing 30 days.
CLASS_UPDATES_PER_30_DAYS = 2


def capacity_request(tier: CapacityTier) -> dict[str, Any]:
    """CreateTable arguments for ``tier``'s whole state: billing mode, units or caps, warm throughput, class."""
    request: dict[str, Any] = {"BillingMode": tier.billing.value}
    if tier.is_on_demand:
        caps = {"MaxReadRequestUnits": tier.max_read_request_units,
                "MaxWriteRequestUnits": tier.max_write_request_units}
        caps = {k: v for k, v in caps.items() if v is not None}
        if caps:
            request["OnDemandThroughput"] = caps
    else:
        request["ProvisionedThroughput"] = {
            "ReadCapacityUnits": tier.read_capacity, "WriteCapacityUnits": tier.write_capacity,
        }
    warm = {"ReadUnitsPerSecond": tier.warm_read_units_per_second,
            "WriteUnitsPerSecond": tier.warm_write_units_per_second}
    warm = {k: v for k, v in warm.items() if v is not None}
    if warm:
        request["WarmThroughput"] = warm
    if tier.table_class != "STANDARD":
        request["TableClass"] = tier.table_class
    return request


def current_capacity(description: Mapping[str, Any]) -> str:
    """A described table's capacity as ``read/write`` or ``on-demand``, for reports."""
    if _is_on_demand(description):
        return "on-demand"
    throughput = description.get("ProvisionedThroughput", {})
    return f"{throughput.get('ReadCapacityUnits')}/{throughput.get('WriteCapacityUnits')}"


def _is_on_demand(description: Mapping[str, Any]) -> bool:
    return description.get("BillingModeSummary", {}).get("BillingMode") == "PAY_PER_REQUEST"


def tier_steps(description: Mapping[str, Any], tier: CapacityTier) -> list[dict[str, Any]]:
    """The UpdateTable requests that move a table to ``tier``'s whole state, in order; empty when it is there.

    DynamoDB takes one kind of change per UpdateTable, and a table is UPDATING after each: a table-class
    change must be alone in its call ("TableClass modification must be the only operation in the request",
    hashicorp/terraform-provider-aws#28497, fixed by #29816), and an UpdateTable that changes nothing is
    refused. So the steps are, each only what differs: billing mode with its units or on-demand caps; then
    warm throughput (only the dimensions that rise: it is never lowered); then table class. Auto-scaled
    tables keep whatever capacity the scaler chose at or above the tier's floor; right-sized tiers keep
    units inside the sizing's floor and ceiling. A capacity decrease is marked ``_decrease`` for
    :func:`split_refused`.
    """
    steps: list[dict[str, Any]] = []
    billing = _billing_change(description, tier)
    if billing:
        steps.append(billing)
    warm = _warm_raise(description, tier)
    if warm:
        steps.append({"WarmThroughput": warm})
    described_class = (description.get("TableClassSummary") or {}).get("TableClass", "STANDARD")
    if described_class != tier.table_class:
        steps.append({"TableClass": tier.table_class})
    return steps


def _billing_change(description: Mapping[str, Any], tier: CapacityTier) -> dict[str, Any]:
    """Billing mode with its throughput or caps, as one request; empty when they are as the tier wants."""
    on_demand = _is_on_demand(description)
    if tier.is_on_demand:
        wanted = {"MaxReadRequestUnits": tier.max_read_request_units or -1,
                  "MaxWriteRequestUnits": tier.max_write_request_units or -1}
        described = description.get("OnDemandThroughput") or {}
        have = {k: described.get(k) or -1 for k in wanted} if on_demand else {k: -1 for k in wanted}
        request: dict[str, Any] = {} if on_demand else {"BillingMode": "PAY_PER_REQUEST"}
        if wanted != have:
            request["OnDemandThroughput"] = wanted
        return request
    if on_demand:
        return {"BillingMode": "PROVISIONED", "ProvisionedThroughput": {
            "ReadCapacityUnits": tier.read_capacity, "WriteCapacityUnits": tier.write_capacity}}
    return _provisioned_change(description, tier)


def _provisioned_change(description: Mapping[str, Any], tier: CapacityTier) -> dict[str, Any]:
    throughput = description.get("ProvisionedThroughput", {})
    read, write = throughput.get("ReadCapacityUnits"), throughput.get("WriteCapacityUnits")
    sizing = tier.right_sizing
    if sizing and all(sizing.floor <= units <= sizing.ceiling for units in (read, write)):
        return {}
    if tier.auto_scaling and read >= tier.read_capacity and write >= tier.write_capacity:
        return {}
    if (read, write) == (tier.read_capacity, tier.write_capacity):
        return {}
    return {
        "ProvisionedThroughput": {"ReadCapacityUnits": tier.read_capacity, "WriteCapacityUnits": tier.write_capacity},
        "_decrease": tier.read_capacity < read or tier.write_capacity < write,
    }


def _warm_raise(description: Mapping[str, Any], tier: CapacityTier) -> dict[str, int]:
    """The warm-throughput dimensions the tier wants above what the table has (never one at or below it)."""
    have = description.get("WarmThroughput") or {}
    wanted = {"ReadUnitsPerSecond": tier.warm_read_units_per_second,
              "WriteUnitsPerSecond": tier.warm_write_units_per_second}
    return {k: v for k, v in wanted.items() if v is not None and v > int(have.get(k) or 0)}


def split_refused(
    request: Mapping[str, Any], description: Mapping[str, Any], when: datetime
) -> tuple[dict[str, Any], list[str]]:
    """Drop the parts of ``request`` a DynamoDB limit refuses at ``when``; return what is left and why.

    Capacity decreases follow :func:`decrease_refusal`; a switch to on-demand and a table-class change
    follow :func:`mode_switch_refusal` and :func:`class_change_refusal`. What is dropped is retried by a
    later run.
    """
    left = dict(request)
    reasons: list[str] = []
    if left.pop("_decrease", False):
        reason = decrease_refusal(description, when)
        if reason:
            reasons.append(reason)
            left.pop("ProvisionedThroughput", None)
    if left.get("BillingMode") == "PAY_PER_REQUEST":
        reason = mode_switch_refusal(description, when)
        if reason:
            reasons.append(reason)
            left.pop("BillingMode")
            left.pop("OnDemandThroughput", None)
    if "TableClass" in left:
        reason = class_change_refusal(description, when)
        if reason:
            reasons.append(reason)
            left.pop("TableClass")
    return left, reasons


def mode_switch_refusal(description: Mapping[str, Any], when: datetime) -> str | None:
    """Why a switch from provisioned to on-demand must wait, or None when it is allowed now.

    DynamoDB allows four such switches in a rolling 24 hours. DescribeTable reports only the last one
    (``BillingModeSummary.LastUpdateToPayPerRequestDateTime``), so the rotation switches a table at most
    once in 24 hours: always inside the quota, whatever else switched it.
    """
    last = (description.get("BillingModeSummary") or {}).get("LastUpdateToPayPerRequestDateTime")
    return _once_per(
        last, when, timedelta(hours=24), "24 h",
        f"switched to on-demand at {{last}}: "
        f"DynamoDB allows {ON_DEMAND_SWITCHES_PER_DAY} switches to on-demand in 24 h",
    )


def class_change_refusal(description: Mapping[str, Any], when: datetime) -> str | None:
    """Why a table-class change must wait, or None when it is allowed now.

    DynamoDB allows two table-class updates in a trailing 30 days. DescribeTable reports only the last
    (``TableClassSummary.LastUpdateDateTime``), so the rotation changes a table's class at most once in
    30 days: always inside the quota.
    """
    last = (description.get("TableClassSummary") or {}).get("LastUpdateDateTime")
    return _once_per(
        last, when, timedelta(days=30), "30 days",
        f"table class updated at {{last}}: DynamoDB allows {CLASS_UPDATES_PER_30_DAYS} class updates in 30 days",
    )


def _once_per(last: datetime | None, when: datetime, window: timedelta, window_text: str, reason: str) -> str | None:
    """``reason`` (its ``{last}`` filled in) while ``when`` is less than ``window`` after ``last``, else None."""
    if last is None or when - last.astimezone(UTC) >= window:
        return None
    return reason.format(last=last.isoformat()) + f"; the next is made {window_text} after the last"


def decrease_refusal(description: Mapping[str, Any], when: datetime) -> str | None:
    """Why a capacity decrease must wait (DynamoDB's daily budget), or None when it is allowed now.

    Four decreases are allowed at any time of a UTC day; after those, one more in any hour that
    follows an hour without a decrease, up to 27 a day.
    """
    throughput = description.get("ProvisionedThroughput", {})
    used = int(throughput.get("NumberOfDecreasesToday", 0))
    if used < FREE_DECREASES:
        return None
    if used >= DECREASES_PER_DAY:
        return f"{used} decreases today: the daily budget of {DECREASES_PER_DAY} is spent"
    last = throughput.get("LastDecreaseDateTime")
    if last is not None and when - last.astimezone(UTC) < timedelta(hours=1):
        return f"{used} decreases today and one at {last.isoformat()}: the next is allowed an hour after it"
    return None


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for index in range(0, len(items), size):
        yield items[index : index + size]
