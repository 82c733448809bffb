"""Table rotation: create the next period's table, move older tables down capacity tiers, expire old ones.

Operations keep the names of the original pattern: ``create_new`` (before a boundary),
``resize_old`` (after it) and ``reconcile`` (converge any state; also runs at deploy time).
Every operation takes its reference time from the scheduled event, never from the clock, so a
23:45 run retried at 00:05 still acts on the period it was scheduled for.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from botocore.exceptions import ClientError

from lambdas import cfn_response
from lambdas.periods import next_start, parse_table_name, period_start, shift, table_name
from lambdas.rotation_config import CapacityTier, RotationConfig
from lambdas.stream_mappings import StreamConsumer
from lambdas.table_layout import ENV_TABLE_PREFIX, TableLayout

logger = logging.getLogger(__name__)

OPERATIONS = ("create_new", "resize_old", "reconcile")
DECREASES_PER_DAY = 27
FREE_DECREASES = 4  # any time in a UTC day; after these, one more per hour without a decrease
_SCALING_DIMENSIONS = {
    "read": ("dynamodb:table:ReadCapacityUnits", "DynamoDBReadCapacityUtilization"),
    "write": ("dynamodb:table:WriteCapacityUnits", "DynamoDBWriteCapacityUtilization"),
}


@dataclass
class RunReport:
    """What one run did and why: returned by the handler and logged as structured JSON."""

    operation: str
    reference_time: str
    actions: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, action: str, table: str, **details: Any) -> None:
        """Record one action (``create``, ``update``, ``skip``, ``defer``, ``export``, ``delete``...)."""
        entry = {"action": action, "table": table, **details}
        with self._lock:
            self.actions.append(entry)
        logger.info("%s %s", action, table, extra={"rotation": entry})

    def count(self, action: str) -> int:
        """How many actions of one kind were recorded."""
        return sum(1 for a in self.actions if a["action"] == action)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for the Lambda response."""
        return {"operation": self.operation, "time": self.reference_time, "actions": list(self.actions)}


@dataclass(frozen=True)
class PeriodTable:
    """A table of this rotation found by ListTables, with the start of the period it holds."""

    name: str
    start: datetime


class TableRotator:
    """Creates, resizes and expires the period tables of one prefix; every method is idempotent.

    Clients are injected. ``autoscaling`` is needed only when a tier uses auto scaling,
    ``stream_consumer`` (with ``lambda_client``) only when period tables feed a stream consumer,
    ``cloudwatch`` only to publish the next-table-ready metric.
    """

    def __init__(
        self,
        layout: TableLayout,
        config: RotationConfig,
        *,
        dynamodb,
        autoscaling=None,
        lambda_client=None,
        cloudwatch=None,
        stream_consumer=None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.layout = layout
        self.config = config
        self.dynamodb = dynamodb
        self.autoscaling = autoscaling
        self.lambda_client = lambda_client
        self.cloudwatch = cloudwatch
        self.stream_consumer = stream_consumer
        self.sleep = sleep
        self._changes_left = config.max_changes_per_run
        self._changes_lock = threading.Lock()

    @classmethod
    def from_env(cls, env: Mapping[str, str], **clients) -> TableRotator:
        """Build from the environment a ``RotatingTimeSeriesTables`` function receives."""
        return cls(TableLayout.from_env(env), RotationConfig.from_env(env), **clients)

    # ---- operations -------------------------------------------------------------------------

    def run(self, operation: str, when: datetime) -> dict[str, Any]:
        """Run one operation at reference time ``when`` (the scheduled time) and return its report."""
        if operation not in OPERATIONS:
            raise ValueError(f"unknown Operation {operation!r}; use one of {', '.join(OPERATIONS)}")
        when = when.astimezone(UTC)
        self._changes_left = self.config.max_changes_per_run
        report = RunReport(operation, when.isoformat())
        getattr(self, operation)(when, report)
        return report.as_dict()

    def create_new(self, when: datetime, report: RunReport) -> None:
        """Create the NEXT period's table at current-tier capacity (never the current one)."""
        self._ensure_table(self._name(next_start(self.layout.period, when)), report)

    def resize_old(self, when: datetime, report: RunReport) -> None:
        """Move the previous table to the previous tier and every older one to the older tier; expire old ones."""
        current = period_start(self.layout.period, when)
        tables = [t for t in self.list_tables() if t.start < current]
        kept, expired = self._split_expired(tables, current)
        self._apply_tiers(kept, current, when, report)
        self._expire(expired, report)

    def reconcile(self, when: datetime, report: RunReport) -> None:
        """Converge: current (and, inside the lead window, next) table exist, every tier right, expiry done."""
        current = period_start(self.layout.period, when)
        upcoming = next_start(self.layout.period, when)
        wanted = [current]
        if upcoming - when <= timedelta(seconds=self.config.create_lead_seconds):
            wanted.append(upcoming)
        tables = {t.name: t for t in self.list_tables()}
        for start in wanted:
            name = self._name(start)
            if name not in tables:
                self._ensure_table(name, report)
        live = [t for t in tables.values() if t.start >= shift(self.layout.period, current, -1)]
        self._ensure_settings([t.name for t in live], report)
        kept, expired = self._split_expired(list(tables.values()), current)
        self._apply_tiers(kept, current, when, report)
        self._expire(expired, report)
        self._publish_next_table_metric(upcoming, when, tables, report)

    # ---- discovery --------------------------------------------------------------------------

    def list_tables(self) -> list[PeriodTable]:
        """Every table whose name parses as ``{prefix}_{label}`` for this period, oldest first (all pages)."""
        found: list[PeriodTable] = []
        kwargs: dict[str, Any] = {}
        while True:
            page = self.dynamodb.list_tables(**kwargs)
            for name in page.get("TableNames", []):
                start = parse_table_name(self.layout.table_prefix, self.layout.period, name)
                if start is not None:
                    found.append(PeriodTable(name, start))
            if not page.get("LastEvaluatedTableName"):
                break
            kwargs["ExclusiveStartTableName"] = page["LastEvaluatedTableName"]
        return sorted(found, key=lambda t: t.start)

    def tier_for(self, start: datetime, current: datetime) -> CapacityTier:
        """The tier a table starting at ``start`` belongs to when ``current`` is the current period's start."""
        if start >= current:
            return self.config.current
        if start == shift(self.layout.period, current, -1):
            return self.config.previous
        return self.config.older

    # ---- creation ---------------------------------------------------------------------------

    def _name(self, start: datetime) -> str:
        return table_name(self.layout.table_prefix, self.layout.period, start)

    def _ensure_table(self, name: str, report: RunReport) -> None:
        key_schema, definitions = self.layout.key_schema()
        request: dict[str, Any] = {
            "TableName": name,
            "KeySchema": key_schema,
            "AttributeDefinitions": definitions,
            "Tags": [{"Key": k, "Value": v} for k, v in sorted(self._tags().items())],
            "DeletionProtectionEnabled": self.config.deletion_protection,
        }
        request.update(_capacity_request(self.config.current))
        if self.config.kms_key_arn:
            request["SSESpecification"] = {"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": self.config.kms_key_arn}
        if self.config.stream_view_type:
            request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": self.config.stream_view_type}
        try:
            self.dynamodb.create_table(**request)
        except ClientError as error:
            if _code(error) == "ResourceInUseException":
                report.add("exists", name, reason="table already exists")
            elif _code(error) == "LimitExceededException":
                report.add("defer", name, reason=f"create refused: {_message(error)}")
                return
            else:
                raise
        else:
            report.add("create", name, tier=self.config.current.describe())
        self._wait_active(name)
        self._ensure_settings([name], report)
        if self.config.current.auto_scaling:
            self._register_scaling(name, self.config.current, self._autoscaled_tables([name]), report)

    def _tags(self) -> dict[str, str]:
        return {
            **self.config.tags,
            "cdk-ts:prefix": self.layout.table_prefix,
            "cdk-ts:period": self.layout.period.value,
        }

    def _wait_active(self, name: str) -> None:
        deadline = time.monotonic() + self.config.wait_for_new_tables_seconds
        while time.monotonic() < deadline:
            if self._describe(name).get("TableStatus") == "ACTIVE":
                return
            self.sleep(2)

    def _ensure_settings(self, names: Iterable[str], report: RunReport) -> None:
        """PITR, TTL and the stream consumer need an ACTIVE table, so they are applied after creation."""
        for name in names:
            description = self._describe(name)
            if description.get("TableStatus") != "ACTIVE":
                report.add("skip", name, reason=f"status {description.get('TableStatus')}: settings next run")
                continue
            if self.config.point_in_time_recovery:
                status = self.dynamodb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
                if status.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus") != "ENABLED":
                    self.dynamodb.update_continuous_backups(
                        TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
                    )
                    report.add("enable_pitr", name)
            if self.config.ttl_attribute:
                ttl = self.dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
                if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
                    self.dynamodb.update_time_to_live(
                        TableName=name,
                        TimeToLiveSpecification={"Enabled": True, "AttributeName": self.config.ttl_attribute},
                    )
                    report.add("enable_ttl", name, attribute=self.config.ttl_attribute)
            stream_arn = description.get("LatestStreamArn")
            has_consumer = self.stream_consumer is not None and stream_arn
            if has_consumer and self.stream_consumer.attach(self.lambda_client, stream_arn):
                report.add("attach_stream_consumer", name, stream=stream_arn)

    # ---- capacity ---------------------------------------------------------------------------

    def _apply_tiers(self, tables: list[PeriodTable], current: datetime, when: datetime, report: RunReport) -> None:
        scaled = self._autoscaled_tables([t.name for t in tables])
        jobs = [(t, self.tier_for(t.start, current)) for t in tables]
        with ThreadPoolExecutor(max_workers=self.config.max_concurrency) as pool:
            list(pool.map(lambda job: self._apply_tier(job[0], job[1], when, scaled, report), jobs))

    def _apply_tier(
        self, table: PeriodTable, tier: CapacityTier, when: datetime, scaled: set[str], report: RunReport
    ) -> None:
        description = self._describe(table.name)
        status = description.get("TableStatus")
        if status != "ACTIVE":
            report.add("skip", table.name, reason=f"status {status}: retried next run")
            return
        if table.name in scaled and not tier.auto_scaling:
            self._deregister_scaling(table.name, report)
        if tier.auto_scaling and not tier.on_demand:
            self._register_scaling(table.name, tier, scaled, report)
        request = _tier_change(description, tier)
        if request is None:
            return
        if request.pop("_decrease", False):
            reason = _decrease_refusal(description, when)
            if reason:
                report.add("defer", table.name, tier=tier.describe(), reason=reason)
                return
        if not self._take_change():
            report.add("defer", table.name, tier=tier.describe(), reason="max_changes_per_run reached")
            return
        try:
            self.dynamodb.update_table(TableName=table.name, **request)
        except ClientError as error:
            if _code(error) in ("LimitExceededException", "ResourceInUseException"):
                report.add("defer", table.name, tier=tier.describe(), reason=_message(error))
                return
            raise
        report.add("update", table.name, tier=tier.describe(), was=_current_capacity(description))

    def _take_change(self) -> bool:
        with self._changes_lock:
            if self._changes_left <= 0:
                return False
            self._changes_left -= 1
            return True

    def _autoscaled_tables(self, names: list[str]) -> set[str]:
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

    def _register_scaling(self, name: str, tier: CapacityTier, scaled: set[str], report: RunReport) -> None:
        if self.autoscaling is None:
            raise RuntimeError("a tier uses auto scaling but the rotator has no application-autoscaling client")
        if name in scaled:
            return
        scaling = tier.auto_scaling
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
        for dimension, _metric in _SCALING_DIMENSIONS.values():
            try:
                self.autoscaling.deregister_scalable_target(
                    ServiceNamespace="dynamodb", ResourceId=f"table/{name}", ScalableDimension=dimension
                )
            except ClientError as error:
                if _code(error) != "ObjectNotFoundException":
                    raise
        report.add("deregister_autoscaling", name)

    # ---- expiry -----------------------------------------------------------------------------

    def _split_expired(
        self, tables: list[PeriodTable], current: datetime
    ) -> tuple[list[PeriodTable], list[PeriodTable]]:
        """(kept, expired): expired tables get no capacity change, which would only delay their deletion."""
        if self.config.retain_periods is None:
            return tables, []
        cutoff = shift(self.layout.period, current, -(self.config.retain_periods - 1))
        return [t for t in tables if t.start >= cutoff], [t for t in tables if t.start < cutoff]

    def _expire(self, tables: list[PeriodTable], report: RunReport) -> None:
        for table in tables:
            if self.config.archive_bucket and not self._archived(table.name, report):
                continue
            if not self._take_change():
                report.add("defer", table.name, reason="max_changes_per_run reached")
                continue
            self._delete(table.name, report)

    def _archived(self, name: str, report: RunReport) -> bool:
        """True once a completed export exists; otherwise starts (or waits for) one. Never loses data."""
        description = self._describe(name)
        arn = description.get("TableArn")
        if arn is None or description.get("TableStatus") != "ACTIVE":
            report.add("skip", name, reason=f"status {description.get('TableStatus')}: expiry retried next run")
            return False
        statuses = [s["ExportStatus"] for s in _all_exports(self.dynamodb, arn)]
        if "COMPLETED" in statuses:
            return True
        if "IN_PROGRESS" in statuses:
            report.add("wait_export", name, reason="export in progress: delete after it completes")
            return False
        try:
            self.dynamodb.export_table_to_point_in_time(
                TableArn=arn,
                S3Bucket=self.config.archive_bucket,
                S3Prefix=f"{self.config.archive_prefix}{name}/",
                ExportFormat="DYNAMODB_JSON",
                ClientToken=f"{name}-{statuses.count('FAILED')}"[:64],
            )
        except ClientError as error:
            report.add("export_failed", name, reason=f"{_code(error)}: {_message(error)}; table kept")
            return False
        report.add("export", name, bucket=self.config.archive_bucket, retry=statuses.count("FAILED"))
        return False

    def _delete(self, name: str, report: RunReport) -> None:
        description = self._describe(name)
        if description.get("TableStatus") not in ("ACTIVE", None):
            report.add("skip", name, reason=f"status {description.get('TableStatus')}: expiry retried next run")
            return
        stream_arn = description.get("LatestStreamArn")
        if self.stream_consumer is not None and stream_arn:
            self.stream_consumer.detach(self.lambda_client, stream_arn)
        if description.get("DeletionProtectionEnabled"):
            # Deletion protection guards against people; expiry is the configured retention policy.
            self.dynamodb.update_table(TableName=name, DeletionProtectionEnabled=False)
        try:
            self.dynamodb.delete_table(TableName=name)
        except ClientError as error:
            if _code(error) == "ResourceNotFoundException":
                return
            if _code(error) in ("ResourceInUseException", "LimitExceededException"):
                report.add("defer", name, reason=_message(error))
                return
            raise
        report.add("delete", name, archived=bool(self.config.archive_bucket))

    # ---- metrics ----------------------------------------------------------------------------

    def _publish_next_table_metric(
        self, upcoming: datetime, when: datetime, tables: Mapping[str, PeriodTable], report: RunReport
    ) -> None:
        """Publish ``NextPeriodTableMissing`` (1/0) inside the lead window so an alarm can catch a failed create."""
        if self.cloudwatch is None or not self.config.metric_namespace:
            return
        if upcoming - when > timedelta(seconds=self.config.create_lead_seconds):
            return
        name = self._name(upcoming)
        missing = 0 if name in tables or self._describe(name).get("TableStatus") else 1
        self.cloudwatch.put_metric_data(
            Namespace=self.config.metric_namespace,
            MetricData=[{
                "MetricName": "NextPeriodTableMissing",
                "Dimensions": [{"Name": "TablePrefix", "Value": self.layout.table_prefix}],
                "Value": missing,
                "Unit": "Count",
            }],
        )
        report.add("metric", name, NextPeriodTableMissing=missing)

    def _describe(self, name: str) -> dict[str, Any]:
        try:
            return self.dynamodb.describe_table(TableName=name)["Table"]
        except ClientError as error:
            if _code(error) == "ResourceNotFoundException":
                return {}
            raise


# ---- pure helpers ---------------------------------------------------------------------------


def _capacity_request(tier: CapacityTier) -> dict[str, Any]:
    if tier.on_demand:
        return {"BillingMode": "PAY_PER_REQUEST"}
    return {
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": {"ReadCapacityUnits": tier.read_capacity, "WriteCapacityUnits": tier.write_capacity},
    }


def _current_capacity(description: Mapping[str, Any]) -> str:
    if description.get("BillingModeSummary", {}).get("BillingMode") == "PAY_PER_REQUEST":
        return "on-demand"
    throughput = description.get("ProvisionedThroughput", {})
    return f"{throughput.get('ReadCapacityUnits')}/{throughput.get('WriteCapacityUnits')}"


def _tier_change(description: Mapping[str, Any], tier: CapacityTier) -> dict[str, Any] | None:
    """The UpdateTable arguments that move a table to ``tier``, or None when it is there already.

    A request that would change nothing is never built: DynamoDB rejects no-op updates. Auto-scaled
    tables keep whatever capacity the scaler chose at or above the tier's floor.
    """
    on_demand = description.get("BillingModeSummary", {}).get("BillingMode") == "PAY_PER_REQUEST"
    if tier.on_demand:
        return None if on_demand else {"BillingMode": "PAY_PER_REQUEST"}
    if on_demand:
        return _capacity_request(tier)
    throughput = description.get("ProvisionedThroughput", {})
    read, write = throughput.get("ReadCapacityUnits"), throughput.get("WriteCapacityUnits")
    if tier.auto_scaling and read >= tier.read_capacity and write >= tier.write_capacity:
        return None
    if (read, write) == (tier.read_capacity, tier.write_capacity):
        return None
    request = _capacity_request(tier)
    del request["BillingMode"]
    request["_decrease"] = tier.read_capacity < read or tier.write_capacity < write
    return request


def _decrease_refusal(description: Mapping[str, Any], when: datetime) -> str | None:
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


def _all_exports(dynamodb, table_arn: str) -> list[dict[str, Any]]:
    exports, kwargs = [], {"TableArn": table_arn}
    while True:
        page = dynamodb.list_exports(**kwargs)
        exports.extend(page.get("ExportSummaries", []))
        if not page.get("NextToken"):
            return exports
        kwargs["NextToken"] = page["NextToken"]


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for index in range(0, len(items), size):
        yield items[index : index + size]


def _code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")


def _message(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Message", str(error))


def scheduled_time(event: Mapping[str, Any], clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> datetime:
    """The event's ``time`` (EventBridge's scheduled time) as aware UTC; the clock only when it is absent."""
    raw = event.get("time")
    if not raw:
        return clock()
    try:
        parsed = datetime.fromisoformat(str(raw))
    except ValueError:
        raise ValueError(f"event time {raw!r} is not ISO-8601 (e.g. 2026-03-01T23:45:00Z)") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def build_rotator(env: Mapping[str, str]) -> TableRotator:
    """The rotator for this function's environment, with boto3 clients created now (at call time)."""
    config = RotationConfig.from_env(env)
    uses_scaling = any(t.auto_scaling for t in (config.current, config.previous, config.older))
    consumer = StreamConsumer.from_env(env)
    return TableRotator(
        TableLayout.from_env(env),
        config,
        dynamodb=boto3.client("dynamodb"),
        autoscaling=boto3.client("application-autoscaling") if uses_scaling else None,
        lambda_client=boto3.client("lambda") if consumer else None,
        cloudwatch=boto3.client("cloudwatch") if config.metric_namespace else None,
        stream_consumer=consumer,
    )


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Lambda entry point: a scheduled ``{"Operation", "time"}`` event, or a CloudFormation custom resource."""
    if "RequestType" in event and "ResponseURL" in event:
        return _custom_resource(event, context)
    rotator = build_rotator(os.environ)
    return rotator.run(event.get("Operation", ""), scheduled_time(event))


def _custom_resource(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Deploy-time reconcile, so the current period's table exists once ``cdk deploy`` finishes.

    Delete does nothing: period tables hold data and outlive the stack.
    """
    physical_id = event.get("PhysicalResourceId") or f"rotation-{os.environ.get(ENV_TABLE_PREFIX, 'tables')}"
    try:
        data: dict[str, Any] = {}
        if event["RequestType"] in ("Create", "Update"):
            report = build_rotator(os.environ).run("reconcile", datetime.now(UTC))
            data = {"Actions": str(len(report["actions"]))}
        cfn_response.send(event, context, "SUCCESS", data, physical_id)
        return data
    except Exception as error:  # CloudFormation waits an hour for a reply that never comes otherwise
        logger.exception("deploy-time reconcile failed")
        cfn_response.send(event, context, "FAILED", {}, physical_id, reason=f"{type(error).__name__}: {error}")
        raise
