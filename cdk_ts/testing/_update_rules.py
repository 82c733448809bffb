"""The UpdateTable rules of the harness's control plane: what a call changes, and when DynamoDB refuses it.

``_control_plane.ControlPlane.check_update`` applies them in DynamoDB's order; each names its source next to its code.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from cdk_ts.testing._rules import (
    RuleError,
    RulesSettings,
    TableState,
    _aws_time,
    _day_start,
    _is_decrease,
    validation_error,
)


def update_changes(request: dict, state: TableState) -> dict:
    """What an UpdateTable changes on the tracked state (the fields the harness keeps); the rest goes to the engine."""
    changes: dict = {}
    billing = request.get("BillingMode", state.billing_mode)
    if billing != state.billing_mode:
        changes["BillingMode"] = billing
    throughput = request.get("ProvisionedThroughput")
    if throughput is not None:
        read, write = int(throughput["ReadCapacityUnits"]), int(throughput["WriteCapacityUnits"])
        if state.billing_mode == "PAY_PER_REQUEST" or (read, write) != (state.read_capacity, state.write_capacity):
            changes["ProvisionedThroughput"] = (read, write)
    if "TableClass" in request and request["TableClass"] != state.table_class:
        changes["TableClass"] = request["TableClass"]
    warm = request.get("WarmThroughput")
    if warm is not None and (
        int(warm.get("ReadUnitsPerSecond", state.warm_read)) != state.warm_read
        or int(warm.get("WriteUnitsPerSecond", state.warm_write)) != state.warm_write
    ):
        changes["WarmThroughput"] = warm
    if "OnDemandThroughput" in request and request["OnDemandThroughput"] != state.on_demand_throughput:
        changes["OnDemandThroughput"] = request["OnDemandThroughput"]
    protection = request.get("DeletionProtectionEnabled")
    if protection is not None and bool(protection) != state.deletion_protection:
        changes["DeletionProtectionEnabled"] = bool(protection)
    # Streams, indexes, SSE, replicas: the harness does not model them; the engine judges them.
    for key in ("StreamSpecification", "GlobalSecondaryIndexUpdates", "SSESpecification", "ReplicaUpdates",
                "AttributeDefinitions"):
        if key in request:
            changes[key] = request[key]
    return changes


def no_op_error(request: dict, state: TableState) -> RuleError:
    """DynamoDB's refusal of an UpdateTable that changes nothing."""
    # Equal provisioned throughput is refused. DynamoDB's wording, as reported
    # in cortexproject/cortex#441 and crossplane-contrib/provider-aws#464 (and mirrored by dynalite):
    if "ProvisionedThroughput" in request:
        t = request["ProvisionedThroughput"]
        return validation_error(
            "The provisioned throughput for the table will not change. The requested value equals the "
            f"current value. Current ReadCapacityUnits provisioned for the table: {state.read_capacity}. "
            f"Requested ReadCapacityUnits: {t['ReadCapacityUnits']}. Current WriteCapacityUnits provisioned "
            f"for the table: {state.write_capacity}. Requested WriteCapacityUnits: {t['WriteCapacityUnits']}. "
            "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
        )
    # DynamoDB's wording for an UpdateTable with nothing in it (dynalite mirrors it).
    return validation_error(
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
        "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required"
    )


# Only equal provisioned throughput and an empty request are refused as no-ops. Other values equal to the
# current ones are accepted (nothing changes, the table is UPDATING like after any accepted UpdateTable):
# no public source says DynamoDB refuses BillingMode PAY_PER_REQUEST on an on-demand table, the same table
# class, deletion protection, warm throughput or on-demand maximum (the documented refusals above are for
# equal provisioned throughput and an empty request), so the harness does not refuse what ordinary clients
# send: accepting them is a guess.


def check_index_changes(request: dict) -> None:
    """Refuse more than one index created or deleted in one call."""
    # "You can only create or delete one global secondary index per UpdateTable operation"; more is refused
    # with DynamoDB's LimitExceededException as taoensso/faraday#80 quotes it for two creates in one call
    # (and architect/architect#334, noppoMan/npdynamodb#29).
    updates = request.get("GlobalSecondaryIndexUpdates") or []
    if sum(1 for u in updates if "Create" in u or "Delete" in u) > 1:
        raise RuleError(
            "LimitExceededException",
            "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
        )


def check_alone_with_index_changes(request: dict, changes: dict) -> None:
    """Refuse an index created or deleted together with a throughput change."""
    # "You can only perform one of the following operations at once: Modify the provisioned throughput
    # settings of the table. Remove a global secondary index from the table. Create a new global secondary
    # index on the table." (API_UpdateTable, and botocore's service model documentation of UpdateTable.)
    # Older versions of the page also listed enabling/disabling streams; the current one does not, so the
    # harness does not refuse streams with an index change. Harness wording, DynamoDB's exception.
    updates = request.get("GlobalSecondaryIndexUpdates") or []
    if "ProvisionedThroughput" in changes and any("Create" in u or "Delete" in u for u in updates):
        raise validation_error(
            "One or more parameter values were invalid: a global secondary index can be created or deleted "
            "only in an UpdateTable that does not also modify the table's provisioned throughput"
        )


def check_warm(request: dict, state: TableState) -> None:
    """Refuse a warm throughput lower than the table's."""
    # "You can increase the warm throughput value ... " and it cannot be decreased:
    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
    # (update-warm-throughput.html: "Increase your existing DynamoDB table's warm throughput").
    warm = request.get("WarmThroughput")
    if warm is None:
        return
    for key, current in (("ReadUnitsPerSecond", state.warm_read), ("WriteUnitsPerSecond", state.warm_write)):
        if key in warm and int(warm[key]) < current:
            raise validation_error(
                f"One or more parameter values were invalid: WarmThroughput {key} {int(warm[key])} is lower "
                f"than the table's current warm throughput {current}; warm throughput can only be increased"
            )


def check_decrease(settings: RulesSettings, changes: dict, state: TableState, now: datetime) -> None:
    """Refuse a capacity decrease past the day's allowance."""
    # "On a given day, you can start by performing up to four decreases within one hour as long as you
    # have not performed any other decreases yet during that day. Subsequently, you can perform one
    # additional decrease per hour (once every 60 minutes). This effectively brings the maximum number
    # of decreases in a day to 27 times."
    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
    # (section "Decreasing provisioned throughput"). The message is DynamoDB's LimitExceededException text.
    if not _is_decrease(changes, state):
        return
    s = settings
    today = state.decreases_today(now)
    if len(today) < s.decreases_any_time:
        return
    last = max(today)
    if len(today) < s.decreases_per_day and now - last >= timedelta(hours=1):
        return
    next_at = last + timedelta(hours=1) if len(today) < s.decreases_per_day else _day_start(now) + timedelta(days=1)
    raise RuleError(
        "LimitExceededException",
        "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. "
        f"After the first {s.decreases_any_time} decreases, each subsequent decrease in the same UTC day can be "
        f"performed at most once every 3600 seconds. Number of decreases today: {len(today)}. "
        f"Last decrease at {_aws_time(last)}. Next decrease can be made at {_aws_time(next_at)}",
    )


def check_on_demand_switch(settings: RulesSettings, changes: dict, state: TableState, now: datetime) -> None:
    """Refuse a switch to on-demand past the 24-hour allowance."""
    # "You can switch tables from provisioned capacity mode to on-demand mode up to four times in a
    # 24-hour rolling window. You can switch tables from on-demand mode to provisioned capacity mode at
    # any time." https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/switching.capacitymode.html
    # DynamoDB's exact message is not documented: harness wording, DynamoDB's exception.
    if changes.get("BillingMode") != "PAY_PER_REQUEST":
        return
    recent = [t for t in state.on_demand_switches if t > now - timedelta(hours=24)]
    if len(recent) >= settings.on_demand_switches_per_day:
        raise RuleError(
            "LimitExceededException",
            "Subscriber limit exceeded: a table can be switched from provisioned to on-demand capacity mode "
            f"{settings.on_demand_switches_per_day} times in a 24-hour rolling window; "
            f"{state.name} was switched at {', '.join(t.isoformat() for t in recent)}",
        )


def check_class_change(settings: RulesSettings, changes: dict, state: TableState, now: datetime) -> None:
    """Refuse a table-class change past the 30-day allowance."""
    # Table class changes: at most two in a trailing 30-day period, per the developer guide
    # ("Considerations when choosing a table class",
    # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithTables.tableclasses.html,
    # and the UpdateTable TableClass parameter). DynamoDB's exact message is not documented:
    # harness wording, DynamoDB's exception.
    if "TableClass" not in changes:
        return
    recent = [t for t in state.class_updates if t > now - timedelta(days=30)]
    if len(recent) >= settings.table_class_changes_per_30_days:
        raise RuleError(
            "LimitExceededException",
            f"Subscriber limit exceeded: the table class of {state.name} can be updated "
            f"{settings.table_class_changes_per_30_days} times in a trailing 30-day period; it was updated "
            f"at {', '.join(t.isoformat() for t in recent)}",
        )
