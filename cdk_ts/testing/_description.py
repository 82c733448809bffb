"""What DescribeTable (and every answer with a table description) reports from the harness's tracked state.

DynamoDB's own fields where the engine's are wrong or missing (status, capacity while UPDATING, decreases, billing,
class, warm throughput, deletion protection), each with the source that says how DynamoDB reports it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cdk_ts.testing._rules import TableState


def epoch(dt: datetime) -> float:
    """A timestamp as DynamoDB's JSON protocol sends it: seconds since the epoch."""
    return dt.timestamp()


# Description fields reported once set (by the request or the engine), and the request members that set them.
REPORTED_WHEN_SET = frozenset({"BillingModeSummary", "TableClassSummary", "WarmThroughput"})
_REPORTED_AS = {"BillingMode": "BillingModeSummary", "TableClass": "TableClassSummary"}


def reported_when_set(request: dict) -> set[str]:
    """The description fields a CreateTable or UpdateTable sets, which DynamoDB then reports."""
    return {_REPORTED_AS.get(k, k) for k in request if _REPORTED_AS.get(k, k) in REPORTED_WHEN_SET}


def described(state: TableState, description: dict, now: datetime) -> dict:
    """``description`` (the engine's) with what DynamoDB would report for ``state`` at ``now``."""
    status = state.current_status(now)
    description["TableStatus"] = status
    throughput = description.setdefault("ProvisionedThroughput", {})
    if status != "UPDATING":
        state.reported_capacity = None
    if state.billing_mode == "PAY_PER_REQUEST":
        throughput["ReadCapacityUnits"] = throughput["WriteCapacityUnits"] = 0
    else:
        # While UPDATING, "the table still has the provisioned throughput from before the call" (UpdateTable,
        # API version 2011-12-05; dynalite, written against DynamoDB's answers, reports it so too).
        reported = state.reported_capacity or (state.read_capacity, state.write_capacity)
        throughput["ReadCapacityUnits"], throughput["WriteCapacityUnits"] = reported
    # A decrease counts once it is done: dynalite's updateTable test (recorded against DynamoDB) reads the old
    # count while the table is UPDATING and one more after it is ACTIVE. The limits count it at the call.
    underway = status == "UPDATING" and state.pending_change == "decrease"
    throughput["NumberOfDecreasesToday"] = len(state.decreases_today(now)) - (1 if underway else 0)
    times = (("LastDecreaseDateTime", state.last_decrease), ("LastIncreaseDateTime", state.last_increase))
    for key, value in times:
        if value is None:
            throughput.pop(key, None)
        else:
            throughput[key] = epoch(value)
    # Fields the engine leaves out stay out until a request sets them: an older engine (dynalite) answers as
    # DynamoDB did when its suite was recorded, and the layer adds nothing DynamoDB was not seen to send.
    shown = state.explicit | {key for key in REPORTED_WHEN_SET if key in description}
    if state.pay_per_request_since is not None:
        shown.add("BillingModeSummary")
    if "BillingModeSummary" in shown:
        billing: dict[str, object] = {"BillingMode": state.billing_mode}
        if state.pay_per_request_since is not None and status != "CREATING":
            # API_BillingModeSummary: "the time when PAY_PER_REQUEST was last set", by CreateTable too; the
            # CreateTable answer itself has none (dynalite's createTable test, recorded against DynamoDB).
            billing["LastUpdateToPayPerRequestDateTime"] = epoch(state.pay_per_request_since)
        description["BillingModeSummary"] = billing
    if "TableClassSummary" in shown or state.class_updates:
        table_class: dict[str, object] = {"TableClass": state.table_class}
        if state.class_updates:
            table_class["LastUpdateDateTime"] = epoch(state.class_updates[-1])
        description["TableClassSummary"] = table_class
    if "WarmThroughput" in shown:
        description["WarmThroughput"] = {
            "ReadUnitsPerSecond": state.warm_read,
            "WriteUnitsPerSecond": state.warm_write,
            "Status": "UPDATING" if status == "UPDATING" else "ACTIVE",
        }
    if state.on_demand_throughput is not None:
        description["OnDemandThroughput"] = state.on_demand_throughput
    else:
        description.pop("OnDemandThroughput", None)
    # Always in DynamoDB's TableDescription since deletion protection came (API_TableDescription); CreateTable
    # answers recorded in 2023 and 2024 carry "DeletionProtectionEnabled": false.
    description["DeletionProtectionEnabled"] = state.deletion_protection
    if status == "DELETING":
        # A deleting table's description has no global secondary indexes (dynalite's deleteTable test, recorded
        # against DynamoDB: "should eventually delete").
        description.pop("GlobalSecondaryIndexes", None)
    return description
