"""TableRotator: create the next period's table, move older tables down capacity tiers, expire old ones.

Operations keep the names of the original pattern: ``create_new`` (before a boundary),
``resize_old`` (after it) and ``reconcile`` (converge any state; also runs at deploy time).
Every operation takes its reference time from the scheduled event, never from the clock, so a
23:45 run retried at 00:05 still acts on the period it was scheduled for.
"""

from __future__ import annotations

import copy
import math
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import Backoff, error_code
from cdk_ts_runtime._emf import EmfWriter
from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._inputs import number
from cdk_ts_runtime._periods import next_start, parse_table_name, period_start, require_utc, shift, table_name
from cdk_ts_runtime._rotation.config import CapacityTier, RotationConfig
from cdk_ts_runtime._rotation.expiry import TableExpiry
from cdk_ts_runtime._rotation.lock import (
    LOCK_MARGIN_SECONDS,
    LOCK_TABLE_ENV,
    LONGEST_RUN_SECONDS,
    RUN_TIMEOUT_ENV,
    LockHolder,
    RunLock,
)
from cdk_ts_runtime._rotation.metrics import RotationMetric, publish
from cdk_ts_runtime._rotation.ownership import RunOwnership, is_owned, ownership_tags
from cdk_ts_runtime._rotation.report import (
    RETRY_LATER_CODES,
    ChangeBudget,
    PeriodTable,
    RotationRunError,
    RunReport,
    describe_table,
    record_failure,
)
from cdk_ts_runtime._rotation.sizing import right_sized
from cdk_ts_runtime._rotation.tiers import TierChanges, capacity_request
from cdk_ts_runtime._stream_consumer import StreamConsumer
from cdk_ts_runtime._table_layout import TableLayout

OPERATIONS = ("create_new", "resize_old", "reconcile")
#: How long a run holds the lock when it does not know its own time limit (Lambda's longest timeout); the
#: lock's ``LOCK_MARGIN_SECONDS`` is added to the limit (so the lock outlives the run, and a run that died
#: releases it soon after).
DEFAULT_LOCK_SECONDS = LONGEST_RUN_SECONDS
LOCK_RETRY_SECONDS = 5
#: How often one run tries to take over a malformed lock item that keeps changing under it.
LOCK_TAKEOVER_TRIES = 3
#: A CreateTable DynamoDB answers with "not now" (a throttle, ``LimitExceededException``, a same-named table
#: still being deleted) is sent again after full-jitter backoff of up to ``base * 2**n`` s, capped, while
#: the run has time for the wait, at most ``CREATE_ATTEMPTS`` times. The SDK's own retries (5 attempts,
#: ``_retries.CONTROL_PLANE``) come first and last seconds; these waits are longer, because the next
#: period's table is wanted before its boundary and the next scheduled try may come too late.
CREATE_RETRY_BASE_SECONDS = 5.0
CREATE_RETRY_CAP_SECONDS = 60.0
CREATE_ATTEMPTS = 8
#: How often a run looks whether a table it created is ACTIVE yet.
WAIT_STEP_SECONDS = 2
#: The Contributor Insights mode that names only throttled keys (``ContributorInsightsMode``, botocore's model).
THROTTLED_KEYS_MODE = "THROTTLED_KEYS"
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
    feed a stream consumer, ``cloudwatch`` only to read consumed capacity (right-sizing). Metrics are EMF
    lines (``metrics``), never a CloudWatch API call.

    :param layout: the tables' prefix, period and key schema.
    :param config: capacity tiers, retention and the other rotation settings.
    :param dynamodb: the boto3 DynamoDB client.
    :param autoscaling: the boto3 Application Auto Scaling client.
        Default: None — fine unless a tier uses auto scaling (a run then raises ``RuntimeError``).
    :param lambda_client: the boto3 Lambda client that maps streams to ``stream_consumer``.
        Default: None — only needed with a stream consumer.
    :param cloudwatch: the boto3 CloudWatch client that reads consumed capacity for a right-sized current tier.
        Default: None — right-sizing keeps the configured tier.
    :param metrics: writes ``NextPeriodTableMissing``, ``LockHeldRuns`` and the run's ``FuturePeriodTables``,
        ``ForeignLookalikeTables`` and ``FailedTables`` counts as EMF lines (its namespace is the metrics'),
        when ``config.metric_namespace`` is set. Default: None — no metric is written (:meth:`from_env`
        gives one that writes to stdout in ``config.metric_namespace``).
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
    :param rng: a source of floats in [0, 1) for the jitter of CreateTable retries (tests pass a fixed one).
        Default: ``random.random``.

    A run never changes the rotator: each acts through a copy of it that holds that run's state (its
    report's budget, tier and expiry steps, dry-run flag), so one rotator can serve runs one after the
    other or at once, a dry run among them.
    """

    layout: TableLayout
    config: RotationConfig
    _: KW_ONLY
    dynamodb: Any
    autoscaling: Any = None
    lambda_client: Any = None
    cloudwatch: Any = None
    metrics: EmfWriter | None = None
    stream_consumer: StreamConsumer | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], datetime] = _utc_now
    lock: RunLock | None = None
    time_left: Callable[[], float] | None = None
    rng: Callable[[], float] = random.random
    _dry_run: bool = field(default=False, init=False, repr=False)
    _ownership: RunOwnership | None = field(default=None, init=False, repr=False)
    _told_missing: bool = field(default=False, init=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **clients) -> TableRotator:
        """Build from the environment a ``RotatingTimeSeriesTables`` function receives.

        :param env: the environment, usually ``os.environ``.
        :param clients: the clients and options of the constructor (``dynamodb=...`` is required). With
            :data:`~cdk_ts_runtime.rotation.lock.LOCK_TABLE_ENV` set and no ``lock`` given, runs take the lock
            in that table.
        """
        layout = TableLayout.from_env(env)
        config = RotationConfig.from_env(env)
        if config.metric_namespace and "metrics" not in clients:
            clients["metrics"] = EmfWriter(config.metric_namespace)
        if env.get(LOCK_TABLE_ENV) and "lock" not in clients:
            timeout = _run_timeout(env)
            clients["lock"] = RunLock(
                dynamodb=clients["dynamodb"], table_name=env[LOCK_TABLE_ENV], lock_id=layout.table_prefix,
                clock=clients.get("clock", _utc_now), longest_hold=timedelta(seconds=timeout + LOCK_MARGIN_SECONDS),
            )
        return cls(layout, config, **clients)

    # ---- operations -------------------------------------------------------------------------

    def run(
        self, operation: str, when: datetime, *, wait_for_lock: float = 0, dry_run: bool = False
    ) -> dict[str, Any]:
        """Run one operation at reference time ``when`` (the scheduled time) and return its report.

        ``when`` must lie in a window around the clock (see :meth:`check_window`); otherwise
        :class:`RotationWindowError` is raised and nothing is changed. With a ``lock``, the run first takes
        it (waiting up to ``wait_for_lock`` seconds); a run that finds another one acting reports
        ``busy`` and changes nothing. A table whose change must wait (UPDATING, a DynamoDB limit, the
        run's budget, a new table's backups still being enabled, a TTL changed within the hour) is
        ``defer``-red to the next run; a table whose change fails is reported and the
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
        this_run = copy.copy(self)  # the run's state lives on its own copy: the shared rotator never changes
        this_run._dry_run = dry_run
        this_run._told_missing = False
        return this_run._execute(operation, when, report, wait_for_lock)

    def _execute(self, operation: str, when: datetime, report: RunReport, wait_for_lock: float) -> dict[str, Any]:
        """The body of :meth:`run`, on the run's own copy of the rotator."""
        if self._dry_run:
            self._run(operation, when, report)
            return report.as_dict()
        if self.lock is not None:
            holder = self._acquire(operation, wait_for_lock, report)
            self._publish(report, "-", {RotationMetric.LOCK_HELD_RUNS: 0 if holder is None else 1})
            if holder is not None:
                until = holder.expires_at.isoformat() if holder.expires_at else "it lapses"
                report.add(
                    "busy", "-", reason=f"another run ({holder.operation}, {holder.owner}) holds the rotation lock "
                    f"until {until}; this run changed nothing",
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
        self._ownership = RunOwnership(self.dynamodb, self.layout)
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
        self._report_next_table(when, report)

    def _acquire(self, operation: str, wait_for_lock: float, report: RunReport) -> LockHolder | None:
        """Take the lock, trying every :data:`LOCK_RETRY_SECONDS` for up to ``wait_for_lock`` s; the holder if not.

        A malformed lock item (see ``LockHolder.problem``) counts as lapsed: it is taken over, if still
        unchanged, and the takeover is reported with the item as it was.
        """
        limit = self.time_left() if self.time_left else DEFAULT_LOCK_SECONDS
        # never longer than the lock's longest hold: a longer one would look malformed to the other runs
        hold = min(timedelta(seconds=limit + LOCK_MARGIN_SECONDS), self.lock.longest_hold)
        waited = 0.0
        takeovers = LOCK_TAKEOVER_TRIES
        while True:
            holder = self.lock.acquire(operation, hold)
            if holder is not None and holder.problem and takeovers > 0:
                takeovers -= 1
                if self.lock.take_over(holder, operation, hold):
                    report.add(
                        "lock_taken_over", "-", item=holder.item,
                        reason=f"the lock item was malformed ({holder.problem}): treated as lapsed and taken over",
                    )
                    return None
                continue  # it changed meanwhile: read it again
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

    def _publish_run_metrics(self, report: RunReport) -> None:
        """Tables left alone (future-dated, foreign look-alikes) and failed, so alarms can watch them."""
        self._publish(report, "-", {
            RotationMetric.FUTURE_PERIOD_TABLES: report.count("future"),
            RotationMetric.FOREIGN_LOOKALIKE_TABLES: report.count("not_owned"),
            RotationMetric.FAILED_TABLES: report.count("error"),
        })

    def _publish(self, report: RunReport, table: str, values: Mapping[RotationMetric, float]) -> bool:
        """Publish ``values`` (never in a dry run); a failure is reported, never raised. True when sent."""
        if self.metrics is None or not self.config.metric_namespace or self._dry_run:
            return False
        try:
            publish(self.metrics, self.layout.table_prefix, values)
        except Exception as error:  # noqa: BLE001 - the run's own outcome is reported either way
            record_failure(report, table, "metrics", error)
            return False
        return True

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
        if not self._send_create(name, request, tier, report):
            return
        self._ensure_settings([name], report)
        if tier.auto_scaling and self._owned(describe_table(self.dynamodb, name)):
            self._tiers.register_scaling(name, tier, self._tiers.autoscaled_tables([name]), report)

    def _send_create(self, name: str, request: dict[str, Any], tier: CapacityTier, report: RunReport) -> bool:
        """CreateTable, sent again while DynamoDB answers "not now" and the run has time; True when the table is there.

        Waits follow :data:`CREATE_RETRY_BASE_SECONDS` and :data:`CREATE_RETRY_CAP_SECONDS` (full jitter), at
        most :data:`CREATE_ATTEMPTS` tries, and none once a wait of the cap would reach the run's last margin.
        Past the missing-table deadline the metric says so at once, while the tries go on. A create still
        refused when they end is deferred: the create-retry schedule and reconcile try again, and the alarm
        tells someone if the table is still missing at the deadline.
        """
        backoff = Backoff(base=CREATE_RETRY_BASE_SECONDS, cap=CREATE_RETRY_CAP_SECONDS, sleep=self.sleep, rng=self.rng)
        for attempt in range(1, CREATE_ATTEMPTS + 1):
            try:
                self._ownership.created(self.dynamodb.create_table(**request)["TableDescription"])
            except ClientError as error:
                if error_code(error) == "ResourceInUseException" and self._table_there(name):
                    report.add("exists", name, reason="table already exists")
                    return True
                if error_code(error) not in RETRY_LATER_CODES:
                    record_failure(report, name, "create", error)
                    return False
                self._tell_if_late(name, report)
                if attempt == CREATE_ATTEMPTS or not self._budget.has_time_for(CREATE_RETRY_CAP_SECONDS):
                    record_failure(report, name, "create", error, attempts=attempt)
                    return False
                backoff.wait(attempt)
                continue
            report.add("create", name, tier=tier.describe(), **({"attempts": attempt} if attempt > 1 else {}))
            self._wait_active(name)
            return True
        return False

    def _table_there(self, name: str) -> bool:
        """True when ``name`` exists and is not being deleted (CreateTable's ResourceInUseException means either)."""
        return describe_table(self.dynamodb, name).get("TableStatus") in ("CREATING", "ACTIVE", "UPDATING")

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
        if self.config.throttled_keys_insights:
            report.add("enable_contributor_insights", name, mode=THROTTLED_KEYS_MODE)
        if self.stream_consumer is not None and self.config.stream_view_type:
            report.add("attach_stream_consumer", name, stream="(the new table's stream)")
        if tier.auto_scaling:
            report.add("register_autoscaling", name, target=tier.auto_scaling.target_utilization)

    def _tags(self) -> dict[str, str]:
        return {**self.config.tags, **ownership_tags(self.layout)}

    def _owned(self, description: dict[str, Any]) -> bool:
        """Whether the described table is this rotation's: created by this run, or carrying its tags."""
        if self._ownership is None:
            return is_owned(self.dynamodb, description, self.layout)
        return self._ownership(description)

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
        # Each setting on its own: one DynamoDB refuses for now (a new table's backups still being enabled, a
        # TTL changed within the hour) is deferred to the next run without holding back the others.
        steps = (
            ("pitr", self._ensure_pitr), ("ttl", self._ensure_ttl), ("contributor_insights", self._ensure_insights),
            ("stream_consumer", self._ensure_consumer),
        )
        for step, ensure in steps:
            try:
                ensure(name, description, report)
            except Exception as error:  # noqa: BLE001 - reported (deferred or failed); the other settings go on
                record_failure(report, name, step, error)

    def _ensure_pitr(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        if not self.config.point_in_time_recovery:
            return
        status = self.dynamodb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
        if status.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus") == "ENABLED":
            return
        if not self._dry_run:
            self.dynamodb.update_continuous_backups(
                TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
            )
        report.add("enable_pitr", name)

    def _ensure_ttl(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        if not self.config.ttl_attribute:
            return
        ttl = self.dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
        if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
            return
        if not self._dry_run:
            self.dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": self.config.ttl_attribute},
            )
        report.add("enable_ttl", name, attribute=self.config.ttl_attribute)

    def _ensure_insights(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        """Contributor Insights naming the throttled keys; insights already on in either mode are left as they are.

        ``ENABLE`` with a mode is how the mode is set (API_UpdateContributorInsights); ``ACCESSED_AND_THROTTLED_KEYS``
        names the throttled keys too, so a table someone is debugging with it keeps it.
        """
        if not self.config.throttled_keys_insights:
            return
        current = self.dynamodb.describe_contributor_insights(TableName=name)
        if current.get("ContributorInsightsStatus") in ("ENABLED", "ENABLING"):
            return
        if not self._dry_run:
            self.dynamodb.update_contributor_insights(
                TableName=name, ContributorInsightsAction="ENABLE", ContributorInsightsMode=THROTTLED_KEYS_MODE
            )
        report.add("enable_contributor_insights", name, mode=THROTTLED_KEYS_MODE)

    def _ensure_consumer(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        stream_arn = description.get("LatestStreamArn")
        if self.stream_consumer is None or not stream_arn:
            return
        if self._dry_run:
            if not self.stream_consumer.attached(self.lambda_client, stream_arn):
                report.add("attach_stream_consumer", name, stream=stream_arn)
        elif self.stream_consumer.attach(self.lambda_client, stream_arn):
            report.add("attach_stream_consumer", name, stream=stream_arn)

    # ---- the next period's table: metric and deadline -------------------------------------

    def _deadline(self, upcoming: datetime) -> datetime:
        """When a still-missing next table starts to count as missing: ``missing_table_alarm_seconds`` before it."""
        return upcoming - timedelta(seconds=self.config.missing_table_alarm_seconds)

    def _tell_if_late(self, name: str, report: RunReport) -> None:
        """Past the deadline, publish ``NextPeriodTableMissing`` 1 now (once a run), before the tries go on."""
        start = parse_table_name(self.layout.table_prefix, self.layout.period, name)
        if self._told_missing or start is None or self.clock() < self._deadline(start):
            return
        if self._publish(report, name, {RotationMetric.NEXT_PERIOD_TABLE_MISSING: 1}):
            self._told_missing = True
            report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: 1})

    def _report_next_table(self, when: datetime, report: RunReport) -> None:
        """Publish ``NextPeriodTableMissing`` (1 or 0) from every run that ends past the deadline.

        The deadline is ``missing_table_alarm_seconds`` before the next boundary, by the later of the event
        time and the clock (a run that retried its create for minutes may end past it). A dry run reports
        what the real run would publish.
        """
        if self.metrics is None or not self.config.metric_namespace:
            return
        upcoming = next_start(self.layout.period, when)
        if max(when, require_utc(self.clock())) < self._deadline(upcoming):
            return
        name = self._name(upcoming)
        missing = 0 if describe_table(self.dynamodb, name).get("TableStatus") else 1
        if self._dry_run:  # what the real run would publish: 0 once it has created the table
            created = any(a["action"] == "create" and a["table"] == name for a in report.actions)
            report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: 0 if created else missing})
            return
        if self._publish(report, name, {RotationMetric.NEXT_PERIOD_TABLE_MISSING: missing}):
            report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: missing})


def _run_timeout(env: Mapping[str, str]) -> int:
    """The function's timeout from :data:`RUN_TIMEOUT_ENV`, or Lambda's longest when unset."""
    raw = env.get(RUN_TIMEOUT_ENV)
    if not raw:
        return LONGEST_RUN_SECONDS
    if not raw.isdigit() or not 1 <= int(raw) <= LONGEST_RUN_SECONDS:
        raise ValidationError(f"{RUN_TIMEOUT_ENV} {raw!r} must be whole seconds from 1 to {LONGEST_RUN_SECONDS}")
    return int(raw)


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
