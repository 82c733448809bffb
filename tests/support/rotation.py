"""TableRotator's test doubles and period tables: an on-time rotator, tables as the rotation creates them,
what DynamoDB reports and moto does not."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import boto3

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.ownership import ownership_tags
from cdk_ts_runtime._rotation.rotator import TableRotator
from tests.support.waiting import wait_until

PREFIX = "telemetry"


class OnTimeRotator(TableRotator):
    """A rotator whose clock reads each run's scheduled time: every run here is on time (faults/ tests the window)."""

    def run(self, operation, when):
        self.clock = lambda: when
        return super().run(operation, when)


def make_rotator(dynamodb, layout=None, **config):
    return OnTimeRotator(
        layout or TableLayout(PREFIX),
        RotationConfig(**config),
        dynamodb=dynamodb,
        autoscaling=boto3.client("application-autoscaling", region_name="us-east-1"),
        sleep=lambda _s: None,
    )


def create_period_table(dynamodb, name, read=300, write=1000, *, owned=True, layout=None):
    """A period table as the rotation creates it (with its ownership tags), or a look-alike (``owned=False``)."""
    tags = ownership_tags(layout or TableLayout(PREFIX)) if owned else {}
    dynamodb.create_table(
        Tags=[{"Key": k, "Value": v} for k, v in tags.items()] or [{"Key": "owner", "Value": "someone-else"}],
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "N"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
    )


def actions(report, kind):
    """The actions of one kind (``"update"``, ``"defer"``, ``"error"``...) in a rotation run's report, in order."""
    return [a for a in report["actions"] if a["action"] == kind]


def capacity(dynamodb, name):
    table = dynamodb.describe_table(TableName=name)["Table"]
    if table.get("BillingModeSummary", {}).get("BillingMode") == "PAY_PER_REQUEST":
        return "on-demand"
    throughput = table["ProvisionedThroughput"]
    return (throughput["ReadCapacityUnits"], throughput["WriteCapacityUnits"])


def table_names(dynamodb):
    return sorted(dynamodb.list_tables()["TableNames"])


def report_export_time(dynamodb):
    """Add ``ExportTime`` to DescribeExport answers, as DynamoDB returns it and moto does not: the time exported."""

    def add(http_response, parsed, **_kwargs):
        parsed["ExportDescription"].setdefault("ExportTime", datetime.now(UTC))

    dynamodb.meta.events.register("after-call.dynamodb.DescribeExport", add)


def wait_for_export(dynamodb, export_arn, timeout=30.0):
    """Block until an export has left IN_PROGRESS (exports complete asynchronously)."""

    def finished_status():
        status = dynamodb.describe_export(ExportArn=export_arn)["ExportDescription"]["ExportStatus"]
        return None if status == "IN_PROGRESS" else status

    return wait_until(finished_status, what=f"export {export_arn} out of IN_PROGRESS", timeout=timeout)


class ReportedState:
    """Records CreateTable/UpdateTable requests and reports OnDemandThroughput, TableClass and warm
    throughput back in DescribeTable, as DynamoDB does and moto does not."""

    def __init__(self, dynamodb) -> None:
        self.requests: list[tuple[str, dict]] = []
        self.state: dict[str, dict] = {}
        self.overrides: dict[str, dict] = {}
        self._lock = threading.Lock()
        dynamodb.meta.events.register("provide-client-params.dynamodb.CreateTable", self._record)
        dynamodb.meta.events.register("provide-client-params.dynamodb.UpdateTable", self._record)
        dynamodb.meta.events.register("after-call.dynamodb.DescribeTable", self._report)

    def updates(self, table: str) -> list[dict]:
        return [p for op, p in self.requests if op == "UpdateTable" and p["TableName"] == table]

    def _record(self, params, model, **_kwargs) -> None:
        with self._lock:
            self.requests.append((model.name, dict(params)))
            state = self.state.setdefault(params["TableName"], {})
            if "OnDemandThroughput" in params:
                state["OnDemandThroughput"] = {k: v for k, v in params["OnDemandThroughput"].items() if v != -1}
            if params.get("BillingMode") == "PROVISIONED":
                state.pop("OnDemandThroughput", None)
            if "TableClass" in params:
                state["TableClassSummary"] = {"TableClass": params["TableClass"]}
            if "WarmThroughput" in params:  # moto replaces the pair with the dimensions sent
                state.setdefault("WarmThroughput", {}).update(params["WarmThroughput"])

    def _report(self, parsed, **_kwargs) -> None:
        table = parsed.get("Table")
        if not table:
            return
        state = self.state.get(table["TableName"], {})
        for key, value in state.items():
            if key == "WarmThroughput":
                table.setdefault("WarmThroughput", {}).update(value)
            else:
                table[key] = value
        for key, value in self.overrides.get(table["TableName"], {}).items():
            table.setdefault(key, {}).update(value)
