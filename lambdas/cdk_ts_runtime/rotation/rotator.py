"""TableRotator: create the next period's table, move older tables down capacity tiers, expire old ones.

Operations keep the names of the original pattern: ``create_new`` (before a boundary),
``resize_old`` (after it) and ``reconcile`` (converge any state; also runs at deploy time).
Every operation takes its reference time from the scheduled event, never from the clock, so a
23:45 run retried at 00:05 still acts on the period it was scheduled for.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._inputs import number
from cdk_ts_runtime.errors import CdkTsError, ValidationError
from cdk_ts_runtime.periods import next_start, parse_table_name, period_start, require_utc, shift, table_name
from cdk_ts_runtime.rotation.expiry import TableExpiry
from cdk_ts_runtime.rotation.lock import LOCK_TABLE_ENV, LockHolder, RunLock
from cdk_ts_runtime.rotation.ownership import is_owned, ownership_tags
from cdk_ts_runtime.rotation.report import (
    ChangeBudget,
    PeriodTable,
    RotationRunError,
    RunReport,
    describe_table,
    record_failure,
)
from cdk_ts_runtime.rotation.sizing import right_sized
from cdk_ts_runtime.rotation.tiers import TierChanges, capacity_request
from cdk_ts_runtime.rotation_config import CapacityTier, RotationConfig
from cdk_ts_runtime.rotation_metrics import RotationMetric, publish
from cdk_ts_runtime.stream_consumer import StreamConsumer
from cdk_ts_runtime.table_layout import TableLayout

OPERATIONS = ("create_new", "resize_old", "reconcile")
#: How long a run holds the lock when it does not know its own time limit, and what is added to the limit
#: when it does (so the lock outlives the run, and a run that died releases it soon after).
DEFAULT_LOCK_SECONDS = 900
LOCK_MARGIN_SECONDS = 60
LOCK_RETRY_SECONDS = 5
#: How often a run looks whether a table it created is ACTIVE yet.
WAIT_STEP_SECONDS = 2
#: How far outside its expected window an event time may be: clock skew, late delivery, retries.
TIME_MARGIN = timedelta(minutes=15)


class RotationWindowError(CdkTsError, ValueError):
    """An event time too far from the clock to act on: nothing was changed."""


def _utc_now() -> datetime:
    """The system clock as an aware UTC datetime (the rotator's default ``clock``)."""
    return datetime.now(UTC)


@dataclass(eq=False)
class TableRotator:
    """Creates, resizes and expires the period tables of one prefix; every method is idempotent.

    Clients are injected and no AWS call is made until :meth:`run`. ``autoscaling`` is needed only
    when a tier uses auto scaling, ``stream_consumer`` (with ``lambda_client``) only when period tables
    feed a stream consumer, ``cloudwatch`` only to publish metrics and read consumed capacity.

    :param layout: the tables' prefix, period and key schema.
    :param config: capacity tiers, retention and the other rotation settings.
    :param dynamodb: the boto3 DynamoDB client.
    :param autoscaling: the boto3 Application Auto Scaling client.
        Default: None — fine unless a tier uses auto scaling (a run then raises ``RuntimeError``).
    :param lambda_client: the boto3 Lambda client that maps streams to ``stream_consumer``.
        Default: None — only needed with a stream consumer.
    :param cloudwatch: the boto3 CloudWatch client that publishes ``NextPeriodTableMissing`` and the
        run's ``FuturePeriodTables``, ``ForeignLookalikeTables`` and ``FailedTables`` counts, and reads
        consumed capacity for a right-sized current tier.
        Default: None — no metric is published and right-sizing keeps the configured tier.
    :param stream_consumer: the ``StreamConsumer`` every new table's stream is mapped to.
        Default: None — streams are not mapped.
    :param sleep: how to wait while a new table becomes ACTIVE (tests pass a fake).
        Default: ``time.sleep``.
    :param clock: returns "now" as an aware datetime; event times far from it are refused
        (see :meth:`check_window`).
        Default: the system clock in UTC.
    :param lock: the rotation's single-flight lock; a run that finds it held by another ends without
        changing anything and says so.
        Default: None — runs are not serialised (tests, one-off scripts).
    :param time_left: returns the seconds the run has left (in Lambda, the context's remaining time); no
        change starts in the last ``ChangeBudget`` margin, so the run reports before it is cut off.
        Default: None — no time limit.
    """

    layout: TableLayout
    config: RotationConfig
    _: KW_ONLY
    dynamodb: Any
    autoscaling: Any = None
    lambda_client: Any = None
    cloudwatch: Any = None
    stream_consumer: StreamConsumer | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], datetime] = _utc_now
    lock: RunLock | None = None
    time_left: Callable[[], float] | None = None
    _dry_run: bool = field(default=False, init=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **clients) -> TableRotator:
        """Build from the environment a ``RotatingTimeSeriesTables`` function receives.

        :param env: the environment, usually ``os.environ``.
        :param clients: the clients and options of the constructor (``dynamodb=...`` is required). With
            :data:`~cdk_ts_runtime.rotation.lock.LOCK_TABLE_ENV` set and no ``lock`` given, runs take the lock
            in that table.
        """
        layout = TableLayout.from_env(env)
        if env.get(LOCK_TABLE_ENV) and "lock" not in clients:
            clients["lock"] = RunLock(
                dynamodb=clients["dynamodb"], table_name=env[LOCK_TABLE_ENV], lock_id=layout.table_prefix,
                clock=clients.get("clock", _utc_now),
            )
        return cls(layout, RotationConfig.from_env(env), **clients)

    # ---- operations -------------------------------------------------------------------------

    def run(
        self, operation: str, when: datetime, *, wait_for_lock: float = 0, dry_run: bool = False
    ) -> dict[str, Any]:
        """Run one operation at reference time ``when`` (the scheduled time) and return its report.

        ``when`` must lie in a window around the clock (see :meth:`check_window`); otherwise
        :class:`RotationWindowError` is raised and nothing is changed. With a ``lock``, the run first takes
        it (waiting up to ``wait_for_lock`` seconds); a run that finds another one acting reports
        ``busy`` and changes nothing. A table whose change must wait (UPDATING, a DynamoDB limit, the
        run's budget) is ``defer``-red to the next run; a table whose change fails is reported and the
        run goes on with the others; a run with failures then raises :class:`RotationRunError` (carrying
        the report) so the function's error alarm fires.

        :param operation: ``create_new``, ``resize_old`` or ``reconcile``.
        :param when: the reference time (the scheduled time of the event).
        :param wait_for_lock: seconds to keep trying for a lock another run holds.
            Default: 0 — one try.
        :param dry_run: report what the run would do and change nothing (no CreateTable, UpdateTable,
            DeleteTable, export, PITR, TTL, tag, auto-scaling, event-source-mapping or metric call is made
            and no lock is taken; only reads such as ListTables, DescribeTable, ListTagsOfResource, ListExports,
            DescribeExport, and reads of auto scaling and CloudWatch). The report has the action names a real
            run would record, each marked ``"dry_run"`` true; failures are reported, not raised. A new
            table's settings (PITR, TTL, stream consumer) are reported as the steps a real run takes after
            creating it.
            Default: False — the run makes its changes.
        """
        if operation not in OPERATIONS:
            raise ValidationError(f"unknown Operation {operation!r}; use one of {', '.join(OPERATIONS)}")
        number("wait_for_lock", wait_for_lock, hint="seconds to keep trying for the lock (0: try once)")
        when = self.check_window(when)
        report = RunReport(operation, when.isoformat(), dry_run=dry_run)
        self._dry_run = dry_run
        if dry_run:
            self._run(operation, when, report)
            return report.as_dict()
        if self.lock is not None:
            holder = self._acquire(operation, wait_for_lock)
            if holder is not None:
                report.add(
                    "busy", "-", reason=f"another run ({holder.operation}, {holder.owner}) holds the rotation lock "
                    f"until {holder.expires_at.isoformat()}; this run changed nothing",
                )
                return report.as_dict()
        try:
            self._run(operation, when, report)
        finally:
            if self.lock is not None and not self.lock.release():
                report.add("lock_lapsed", "-", reason="the lock expired during the run and another run took it")
        self._publish_run_metrics(report)
        if report.count("error"):
            raise RotationRunError(report)
        return report.as_dict()

    def _run(self, operation: str, when: datetime, report: RunReport) -> None:
        budget = ChangeBudget(self.config.max_changes_per_run, time_left=self.time_left)
        self._tiers = TierChanges(
            dynamodb=self.dynamodb, autoscaling=self.autoscaling, budget=budget,
            max_concurrency=self.config.max_concurrency, owned=self._owned, dry_run=self._dry_run,
        )
        self._expiry = TableExpiry(
            dynamodb=self.dynamodb, config=self.config, period=self.layout.period, budget=budget,
            stream_consumer=self.stream_consumer, lambda_client=self.lambda_client, owned=self._owned,
            dry_run=self._dry_run,
        )
        self._budget = budget
        getattr(self, operation)(when, report)

    def _acquire(self, operation: str, wait_for_lock: float) -> LockHolder | None:
        """Take the lock, trying every :data:`LOCK_RETRY_SECONDS` for up to ``wait_for_lock`` s; the holder if not."""
        hold = timedelta(seconds=(self.time_left() if self.time_left else DEFAULT_LOCK_SECONDS) + LOCK_MARGIN_SECONDS)
        waited = 0.0
        while True:
            holder = self.lock.acquire(operation, hold)
            if holder is None or waited >= wait_for_lock:
                return holder
            self.sleep(LOCK_RETRY_SECONDS)
            waited += LOCK_RETRY_SECONDS

    def check_window(self, when: datetime) -> datetime:
        """``when`` in UTC if it lies within the window around the clock, else :class:`RotationWindowError`.

        The window runs from one period (the previous one's length) plus :data:`TIME_MARGIN` behind
        the clock to ``create_lead`` plus :data:`TIME_MARGIN` ahead of it: a scheduled run is never
        earlier than its lead, and a late or retried one is never a whole period late.
        """
        when = require_utc(when)
        now = require_utc(self.clock())
        period = self.layout.period
        try:
            current = period_start(period, now)
            previous_length = current - shift(period, current, -1)
            earliest = now - previous_length - TIME_MARGIN
            latest = now + timedelta(seconds=self.config.create_lead_seconds) + TIME_MARGIN
        except (ValueError, OverflowError) as error:
            raise RotationWindowError(f"the clock {now.isoformat()} is out of range: {error}") from None
        if not earliest <= when <= latest:
            raise RotationWindowError(
                f"event time {when.isoformat()} is outside the window {earliest.isoformat()} .. {latest.isoformat()} "
                f"around the clock {now.isoformat()} (one {period.value} period + {TIME_MARGIN} behind, create lead "
                f"{self.config.create_lead_seconds} s + {TIME_MARGIN} ahead); nothing was changed"
            )
        return when

    def create_new(self, when: datetime, report: RunReport) -> None:
        """Create the NEXT period's table at current-tier capacity (never the current one).

        With right-sizing on the current tier, the capacity follows the current table's observed peak.
        """
        self._ensure_table(self._name(next_start(self.layout.period, when)), report, when)

    def resize_old(self, when: datetime, report: RunReport) -> None:
        """Move the previous table to the previous tier and every older one to the older tier; expire old ones."""
        current = period_start(self.layout.period, when)
        listed = self.list_tables()
        self._report_future(listed, when, report)
        tables = [t for t in listed if t.start < current]
        kept, expired = self._expiry.split(tables, current)
        self._tiers.apply(kept, lambda t: self.tier_for(t.start, current), when, report)
        self._expiry.expire(expired, report)

    def reconcile(self, when: datetime, report: RunReport) -> None:
        """Converge: current (and, inside the lead window, next) table exist, every tier right, expiry done."""
        current = period_start(self.layout.period, when)
        upcoming = next_start(self.layout.period, when)
        wanted = [current]
        if upcoming - when <= timedelta(seconds=self.config.create_lead_seconds):
            wanted.append(upcoming)
        listed = self.list_tables()
        future = self._report_future(listed, when, report)
        tables = {t.name: t for t in listed if t not in future}
        for start in wanted:
            name = self._name(start)
            if name not in tables:
                self._ensure_table(name, report, when)
        live = [t for t in tables.values() if t.start >= shift(self.layout.period, current, -1)]
        self._ensure_settings([t.name for t in live], report)
        kept, expired = self._expiry.split(list(tables.values()), current)
        self._tiers.apply(kept, lambda t: self.tier_for(t.start, current), when, report)
        self._expiry.expire(expired, report)
        self._publish_next_table_metric(upcoming, when, tables, report)

    def _publish_run_metrics(self, report: RunReport) -> None:
        """Tables left alone (future-dated, foreign look-alikes) and failed, so alarms can watch them."""
        if self.cloudwatch is None or not self.config.metric_namespace or self._dry_run:
            return
        counts = {
            RotationMetric.FUTURE_PERIOD_TABLES: report.count("future"),
            RotationMetric.FOREIGN_LOOKALIKE_TABLES: report.count("not_owned"),
            RotationMetric.FAILED_TABLES: report.count("error"),
        }
        try:
            publish(self.cloudwatch, self.config.metric_namespace, self.layout.table_prefix, counts)
        except Exception as error:  # noqa: BLE001 - the run's own outcome is reported either way
            record_failure(report, "-", "metrics", error)

    def _report_future(self, tables: list[PeriodTable], when: datetime, report: RunReport) -> list[PeriodTable]:
        """Tables dated after the next period: reported every run, never treated as current or resized."""
        upcoming = next_start(self.layout.period, when)
        future = [t for t in tables if t.start > upcoming]
        for table in future:
            report.add("future", table.name, reason=f"dated after the next period ({upcoming:%Y-%m-%d}); left as it is")
        return future

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

    def _tier_for_new(self, name: str, when: datetime, report: RunReport) -> CapacityTier:
        """The current tier, right-sized from the table before ``name`` when the tier asks for it."""
        tier = self.config.current
        if tier.right_sizing is None or describe_table(self.dynamodb, name):
            return tier
        start = parse_table_name(self.layout.table_prefix, self.layout.period, name)
        observed_start = shift(self.layout.period, start, -1)
        end = min(when, start)
        return right_sized(tier, self.cloudwatch, self._name(observed_start), observed_start, end, name, report)

    def _ensure_table(self, name: str, report: RunReport, when: datetime) -> None:
        """Create table ``name`` unless it exists, then apply its settings; a failure is reported, not raised."""
        try:
            self._create_table(name, report, when)
        except Exception as error:  # noqa: BLE001 - reported; the run goes on with the other tables
            record_failure(report, name, "create", error)

    def _create_table(self, name: str, report: RunReport, when: datetime) -> None:
        key_schema, definitions = self.layout.key_schema()
        request: dict[str, Any] = {
            "TableName": name,
            "KeySchema": key_schema,
            "AttributeDefinitions": definitions,
            "Tags": [{"Key": k, "Value": v} for k, v in sorted(self._tags().items())],
            "DeletionProtectionEnabled": self.config.deletion_protection,
        }
        tier = self._tier_for_new(name, when, report)
        request.update(capacity_request(tier))
        if self.config.kms_key_arn:
            request["SSESpecification"] = {"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": self.config.kms_key_arn}
        if self.config.stream_view_type:
            request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": self.config.stream_view_type}
        if self._dry_run:
            self._report_dry_create(name, tier, report)
            return
        try:
            self.dynamodb.create_table(**request)
            report.add("create", name, tier=tier.describe())
            self._wait_active(name)
        except ClientError as error:
            if error_code(error) != "ResourceInUseException":
                record_failure(report, name, "create", error)
                return
            report.add("exists", name, reason="table already exists")
        self._ensure_settings([name], report)
        if tier.auto_scaling and self._owned(describe_table(self.dynamodb, name)):
            self._tiers.register_scaling(name, tier, self._tiers.autoscaled_tables([name]), report)

    def _report_dry_create(self, name: str, tier: CapacityTier, report: RunReport) -> None:
        """What creating ``name`` would record, without a call: create, then the new table's settings."""
        if describe_table(self.dynamodb, name):
            report.add("exists", name, reason="table already exists")
            self._ensure_settings([name], report)
            return
        report.add("create", name, tier=tier.describe())
        if self.config.point_in_time_recovery:
            report.add("enable_pitr", name)
        if self.config.ttl_attribute:
            report.add("enable_ttl", name, attribute=self.config.ttl_attribute)
        if self.stream_consumer is not None and self.config.stream_view_type:
            report.add("attach_stream_consumer", name, stream="(the new table's stream)")
        if tier.auto_scaling:
            report.add("register_autoscaling", name, target=tier.auto_scaling.target_utilization)

    def _tags(self) -> dict[str, str]:
        return {**self.config.tags, **ownership_tags(self.layout)}

    def _owned(self, description: dict[str, Any]) -> bool:
        return is_owned(self.dynamodb, description, self.layout)

    def _wait_active(self, name: str) -> None:
        """Wait up to ``wait_for_new_tables_seconds`` (and never into the run's last margin) for ACTIVE."""
        for _ in range(math.ceil(self.config.wait_for_new_tables_seconds / WAIT_STEP_SECONDS)):
            if describe_table(self.dynamodb, name).get("TableStatus") == "ACTIVE" or self._budget.out_of_time():
                return
            self.sleep(WAIT_STEP_SECONDS)

    def _ensure_settings(self, names: Iterable[str], report: RunReport) -> None:
        """PITR, TTL and the stream consumer need an ACTIVE table, so they are applied after creation."""
        for name in names:
            try:
                self._ensure_table_settings(name, report)
            except Exception as error:  # noqa: BLE001 - one table's failure must not stop the others
                record_failure(report, name, "settings", error)

    def _ensure_table_settings(self, name: str, report: RunReport) -> None:
        description = describe_table(self.dynamodb, name)
        status = description.get("TableStatus")
        if status == "UPDATING":  # a tier step is under way (reported by it); the next run checks the settings
            return
        if status != "ACTIVE":
            report.add("defer", name, reason=f"status {status}: settings next run")
            return
        if not self._owned(description):
            report.add("not_owned", name, reason="no cdk-ts:prefix/period tags of this rotation; left as it is")
            return
        if self.config.point_in_time_recovery:
            status = self.dynamodb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
            if status.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus") != "ENABLED":
                if not self._dry_run:
                    self.dynamodb.update_continuous_backups(
                        TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
                    )
                report.add("enable_pitr", name)
        if self.config.ttl_attribute:
            ttl = self.dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
            if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
                if not self._dry_run:
                    self.dynamodb.update_time_to_live(
                        TableName=name,
                        TimeToLiveSpecification={"Enabled": True, "AttributeName": self.config.ttl_attribute},
                    )
                report.add("enable_ttl", name, attribute=self.config.ttl_attribute)
        stream_arn = description.get("LatestStreamArn")
        if self.stream_consumer is None or not stream_arn:
            return
        if self._dry_run:
            if not self.stream_consumer.attached(self.lambda_client, stream_arn):
                report.add("attach_stream_consumer", name, stream=stream_arn)
        elif self.stream_consumer.attach(self.lambda_client, stream_arn):
            report.add("attach_stream_consumer", name, stream=stream_arn)

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
        missing = 0 if name in tables or describe_table(self.dynamodb, name).get("TableStatus") else 1
        if self._dry_run:  # what the real run would publish: 0 once it has created the table
            created = any(a["action"] == "create" and a["table"] == name for a in report.actions)
            report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: 0 if created else missing})
            return
        try:
            publish(
                self.cloudwatch, self.config.metric_namespace, self.layout.table_prefix,
                {RotationMetric.NEXT_PERIOD_TABLE_MISSING: missing},
            )
        except Exception as error:  # noqa: BLE001 - the tables were converged; only the metric is missing
            record_failure(report, name, "metrics", error)
            return
        report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: missing})

def scheduled_time(event: Mapping[str, Any], clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> datetime:
    """The event's ``time`` (EventBridge's scheduled time) as aware UTC; the clock only when it is absent.

    :param event: the scheduled event, with ``Operation`` and ``time``.
    :param clock: returns the current time when the event has none.
        Default: the current UTC time.
    :raises ValueError: when ``time`` is not ISO-8601.
    """
    raw = event.get("time")
    if not raw:
        return clock()
    try:
        parsed = datetime.fromisoformat(str(raw))
    except ValueError:
        raise ValidationError(f"event time {raw!r} is not ISO-8601 (e.g. 2026-03-01T23:45:00Z)") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
