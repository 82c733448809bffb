"""TableRotator: create the next period's table, move older tables down capacity tiers, expire old ones.

Operations keep the names of the original pattern: ``create_new`` (before a boundary),
``resize_old`` (after it) and ``reconcile`` (converge any state; also runs at deploy time).
Every operation takes its reference time from the scheduled event, never from the clock, so a
23:45 run retried at 00:05 still acts on the period it was scheduled for.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cdk_ts_runtime._emf import EmfWriter
from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._inputs import number
from cdk_ts_runtime._periods import next_start, parse_table_name, period_start, require_utc, shift, table_name
from cdk_ts_runtime._rotation._creation import CREATE_ATTEMPTS as CREATE_ATTEMPTS
from cdk_ts_runtime._rotation._creation import CREATE_RETRY_BASE_SECONDS as CREATE_RETRY_BASE_SECONDS
from cdk_ts_runtime._rotation._creation import CREATE_RETRY_CAP_SECONDS as CREATE_RETRY_CAP_SECONDS
from cdk_ts_runtime._rotation._creation import WAIT_STEP_SECONDS as WAIT_STEP_SECONDS
from cdk_ts_runtime._rotation._creation import TableCreation
from cdk_ts_runtime._rotation._run_metrics import RunMetrics
from cdk_ts_runtime._rotation._settings import THROTTLED_KEYS_MODE as THROTTLED_KEYS_MODE
from cdk_ts_runtime._rotation._settings import TableSettings
from cdk_ts_runtime._rotation.config import OPERATIONS as OPERATIONS
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
from cdk_ts_runtime._rotation.metrics import RotationMetric
from cdk_ts_runtime._rotation.ownership import RunOwnership, is_owned
from cdk_ts_runtime._rotation.report import ChangeBudget, PeriodTable, RotationRunError, RunReport
from cdk_ts_runtime._rotation.tiers import TierChanges
from cdk_ts_runtime._stream_consumer import StreamConsumer
from cdk_ts_runtime._table_layout import TableLayout

# CREATE_ATTEMPTS, CREATE_RETRY_*_SECONDS, WAIT_STEP_SECONDS and THROTTLED_KEYS_MODE moved with the create and
# settings steps into _creation and _settings; the imports above (``X as X``) keep them importable from here.
#: How long a run holds the lock when it does not know its own time limit (Lambda's longest timeout); the
#: lock's ``LOCK_MARGIN_SECONDS`` is added to the limit (so the lock outlives the run, and a run that died
#: releases it soon after).
DEFAULT_LOCK_SECONDS = LONGEST_RUN_SECONDS
LOCK_RETRY_SECONDS = 5
#: How often one run tries to take over a malformed lock item that keeps changing under it.
LOCK_TAKEOVER_TRIES = 3
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
        ``ForeignLookalikeTables``, ``FailedTables`` and ``TtlDriftTables`` counts as EMF lines (its namespace is
        the metrics'),
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
    _metrics_of_run: RunMetrics | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **clients) -> TableRotator:
        """Build from the environment a ``RotatingTimeSeriesTables`` function receives.

        :param env: the environment, usually ``os.environ``.
        :param clients: the clients and options of the constructor (``dynamodb=...`` is required). With
            :data:`~cdk_ts_runtime._rotation.lock.LOCK_TABLE_ENV` set and no ``lock`` given, runs take the lock
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
        this_run._metrics_of_run = RunMetrics(
            metrics=self.metrics, config=self.config, layout=self.layout, dynamodb=self.dynamodb, clock=self.clock,
            dry_run=dry_run,
        )
        return this_run._execute(operation, when, report, wait_for_lock)

    def _execute(self, operation: str, when: datetime, report: RunReport, wait_for_lock: float) -> dict[str, Any]:
        """The body of :meth:`run`, on the run's own copy of the rotator."""
        if self._dry_run:
            self._run(operation, when, report)
            return report.as_dict()
        if self.lock is not None:
            holder = _take_lock(self.lock, operation, wait_for_lock, report, time_left=self.time_left, sleep=self.sleep)
            self._metrics_of_run.publish(report, "-", {RotationMetric.LOCK_HELD_RUNS: 0 if holder is None else 1})
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
        self._metrics_of_run.publish_run_counts(report)
        if report.count("error"):
            raise RotationRunError(report)
        return report.as_dict()

    def _run(self, operation: str, when: datetime, report: RunReport) -> None:
        """Set up this run's collaborators (they share its budget), run the operation, report the next table."""
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
        self._settings = TableSettings(
            dynamodb=self.dynamodb, config=self.config, owned=self._owned, stream_consumer=self.stream_consumer,
            lambda_client=self.lambda_client, dry_run=self._dry_run,
        )
        self._creation = TableCreation(
            layout=self.layout, config=self.config, dynamodb=self.dynamodb, cloudwatch=self.cloudwatch, budget=budget,
            ownership=self._ownership, tiers=self._tiers, settings=self._settings, run_metrics=self._metrics_of_run,
            sleep=self.sleep, rng=self.rng, dry_run=self._dry_run,
        )
        getattr(self, operation)(when, report)
        self._metrics_of_run.report_next_table(when, report)

    def check_window(self, when: datetime) -> datetime:
        """``when`` in UTC if it lies within the window around the clock, else :class:`RotationWindowError`.

        The window runs from one period (the previous one's length) plus :data:`TIME_MARGIN` behind
        the clock to ``create_lead`` plus :data:`TIME_MARGIN` ahead of it: a scheduled run is never
        earlier than its lead, and a late or retried one is never a whole period late.
        """
        return _in_window(when, self.clock, self.layout, self.config)

    def create_new(self, when: datetime, report: RunReport) -> None:
        """Create the NEXT period's table at current-tier capacity (never the current one).

        With right-sizing on the current tier, the capacity follows the current table's observed peak.
        """
        self._creation.ensure(self._name(next_start(self.layout.period, when)), report, when)

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
                self._creation.ensure(name, report, when)
        live = [t for t in tables.values() if t.start >= shift(self.layout.period, current, -1)]
        self._settings.ensure([t.name for t in live], report)
        kept, expired = self._expiry.split(list(tables.values()), current)
        self._tiers.apply(kept, lambda t: self.tier_for(t.start, current), when, report)
        self._expiry.expire(expired, report)

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

    # ---- names and ownership ----------------------------------------------------------------

    def _name(self, start: datetime) -> str:
        return table_name(self.layout.table_prefix, self.layout.period, start)

    def _owned(self, description: dict[str, Any]) -> bool:
        """Whether the described table is this rotation's: created by this run, or carrying its tags."""
        if self._ownership is None:
            return is_owned(self.dynamodb, description, self.layout)
        return self._ownership(description)


def _take_lock(
    lock: RunLock, operation: str, wait_for_lock: float, report: RunReport, *,
    time_left: Callable[[], float] | None, sleep: Callable[[float], None],
) -> LockHolder | None:
    """Take the lock, trying every :data:`LOCK_RETRY_SECONDS` for up to ``wait_for_lock`` s; the holder if not.

    A malformed lock item (see ``LockHolder.problem``) counts as lapsed: it is taken over, if still
    unchanged, and the takeover is reported with the item as it was.
    """
    limit = time_left() if time_left else DEFAULT_LOCK_SECONDS
    # never longer than the lock's longest hold: a longer one would look malformed to the other runs
    hold = min(timedelta(seconds=limit + LOCK_MARGIN_SECONDS), lock.longest_hold)
    waited = 0.0
    takeovers = LOCK_TAKEOVER_TRIES
    while True:
        holder = lock.acquire(operation, hold)
        if holder is not None and holder.problem and takeovers > 0:
            takeovers -= 1
            if lock.take_over(holder, operation, hold):
                report.add(
                    "lock_taken_over", "-", item=holder.item,
                    reason=f"the lock item was malformed ({holder.problem}): treated as lapsed and taken over",
                )
                return None
            continue  # it changed meanwhile: read it again
        if holder is None or waited >= wait_for_lock:
            return holder
        sleep(LOCK_RETRY_SECONDS)
        waited += LOCK_RETRY_SECONDS


def _in_window(when: datetime, clock: Callable[[], datetime], layout: TableLayout, config: RotationConfig) -> datetime:
    """``when`` in UTC when it lies in the window :meth:`TableRotator.check_window` describes; else refused."""
    when = require_utc(when)
    now = require_utc(clock())
    period = layout.period
    try:
        current = period_start(period, now)
        previous_length = current - shift(period, current, -1)
        earliest = now - previous_length - TIME_MARGIN
        latest = now + timedelta(seconds=config.create_lead_seconds) + TIME_MARGIN
    except (ValueError, OverflowError) as error:
        raise RotationWindowError(f"the clock {now.isoformat()} is out of range: {error}") from None
    if not earliest <= when <= latest:
        raise RotationWindowError(
            f"event time {when.isoformat()} is outside the window {earliest.isoformat()} .. {latest.isoformat()} "
            f"around the clock {now.isoformat()} (one {period.value} period + {TIME_MARGIN} behind, create lead "
            f"{config.create_lead_seconds} s + {TIME_MARGIN} ahead); nothing was changed"
        )
    return when


def _run_timeout(env: Mapping[str, str]) -> int:
    """The function's timeout from :data:`RUN_TIMEOUT_ENV`, or Lambda's longest when unset."""
    raw = env.get(RUN_TIMEOUT_ENV)
    if not raw:
        return LONGEST_RUN_SECONDS
    if not raw.isdigit() or not 1 <= int(raw) <= LONGEST_RUN_SECONDS:
        raise ValidationError(f"{RUN_TIMEOUT_ENV} {raw!r} must be whole seconds from 1 to {LONGEST_RUN_SECONDS}")
    return int(raw)
