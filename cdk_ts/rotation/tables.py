"""RotatingTimeSeriesTables: one DynamoDB table per period, created, resized and expired by a scheduled function."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from aws_cdk import Annotations, CustomResource, Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from constructs import Construct

from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._defaults import dead_letter_queue
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._validation import refuses_unknown_keywords
from cdk_ts.rotation._iam import grant_stream_consumer_mappings
from cdk_ts.rotation._lock import lock_table
from cdk_ts.rotation._monitoring import rotation_alarms, rotation_health_graph
from cdk_ts.rotation._runs import deploy_time_run, rotation_function, schedules
from cdk_ts.rotation._settings import rotation_keywords, rotation_settings
from cdk_ts.rotation.base import RotatingTimeSeriesTablesBase
from cdk_ts.rotation.imported import _ImportedPeriodTables, imported_layout
from cdk_ts_runtime._errors import ValidationError, WrongTypeError
from cdk_ts_runtime._periods import RotationPeriod
from cdk_ts_runtime._rotation.config import (
    DEFAULT_CURRENT,
    DEFAULT_OLDER,
    DEFAULT_PREVIOUS,
    CapacityTier,
    RotationConfig,
)
from cdk_ts_runtime._stream_consumer import STREAM_CONSUMER_ENV, StreamConsumer

TABLE_QUOTA = 2500


class RotatingTimeSeriesTables(AlarmingConstruct, RotatingTimeSeriesTablesBase):
    """One DynamoDB table per period (``{table_prefix}_{label}``), rotated by a scheduled Lambda function.

    Before each boundary the function creates the next period's table at the current tier's
    capacity (a refused create is tried again within the run, then by a second run at
    ``missing_table_alarm_lead`` before the boundary, and the ``next_table_missing`` alarm fires before the
    boundary if the table is still missing then); after it, it moves the previous table to the previous
    tier and older tables to the older tier; with ``retain_periods`` it exports (when ``archive_bucket``
    is given) and deletes tables past retention. A reconcile run at deploy time and every ``reconcile_every`` converges
    any state, so a missed run heals itself. Writers and readers use ``cdk_ts_runtime.PeriodRouter``.

    Runs are single-flight: each takes the lock of its table prefix in ``lock_table`` (a conditional
    write with an expiry) before it acts, and a run that finds another one holding it ends without error
    and says so. The function reserves no concurrency unless ``reserved_concurrent_executions`` is given.

    Failures are kept: EventBridge retries a scheduled run it cannot deliver and then puts it in
    ``schedule_dead_letter_queue``; a run that fails on every attempt Lambda makes (the first and two
    retries, for the schedules' and the deploy-time custom resource's asynchronous invocations) goes to
    ``function_dead_letter_queue``. Both are encrypted, SSL-only SQS queues keeping messages 14 days.

    Exposes what it creates: ``function`` (the rotation function), ``lock_table``, ``layout``
    (``TableLayout``), ``config`` (``RotationConfig``), the rules ``create_new_rule``,
    ``create_new_retry_rule``, ``resize_old_rule`` and ``reconcile_rule`` (None when disabled) and
    ``deploy_time_run`` (None without ``run_at_deploy``).

    Monitoring: ``metric_*()`` methods give the metrics (graph them, or alarm on them your way), and
    ``metric(RotationMetric...)`` any metric the rotation function publishes; each takes CloudWatch
    metric options (``period``, ``statistic``, ``label``...) over its defaults, a five-minute period
    and the statistic its docstring names. ``add_default_alarms()`` creates the recommended alarms,
    kept in ``alarms`` by name and as the attributes ``rotation_failures_alarm``,
    ``next_table_missing_alarm``, ``schedule_dead_letters_alarm``, ``function_dead_letters_alarm``,
    ``future_tables_alarm``, ``lock_held_alarm`` and ``throttles_alarm`` (None until then).

    Keyword arguments of the constructor (the same names make a ``RotationOptions`` dict, for settings several
    rotations share: ``RotatingTimeSeriesTables(stack, "R", table_prefix="r", **shared)``):

    :param table_prefix: the tables are named ``{table_prefix}_{label}`` (``metrics_2026-03-01``). A literal
        string (table names are derived from it at synth time); with the longest label of ``period`` it must
        give names of at most 255 characters of ``[A-Za-z0-9_.-]``, and every string made from it must fit its
        AWS limit, the function's description (256 characters) first: at most 220 characters for a daily
        rotation, 219 weekly or yearly, 218 monthly, 216 quarterly. Required.
    :param period: how long one table covers (UTC boundaries; weeks are ISO weeks). A ``RotationPeriod``
        or its value (``"weekly"``). Default: ``RotationPeriod.DAILY`` — one table per UTC day.
    :param partition_key: the partition key of every period table. Default: None — ``pk``, a Number.
    :param sort_key: the sort key of every period table; it holds the event time that picks the table.
        Default: None — ``sk``, a Number (the event time in ``time_unit`` since the Unix epoch).
    :param time_unit: what a Number sort key counts since the epoch (``"s"``, ``"ms"``, ``"us"`` or
        ``"ns"``); a String sort key must hold ISO-8601 (``"iso"``). Default: None — ``"ms"`` for a Number
        sort key, ``"iso"`` for a String one.
    :param current_tier: capacity of the current period's table (and of the next one, created before the
        boundary): a ``CapacityTier.provisioned(...)`` or ``CapacityTier.on_demand(...)``, with warm
        throughput, table class and right-sizing from the observed peak if you want them.
        Default: ``CapacityTier.provisioned(300, 1000)`` — 300 RCU / 1000 WCU, no auto scaling.
    :param previous_tier: state the previous period's table is moved to after the boundary.
        Default: ``CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")`` — on-demand in
        Standard-IA: late writes and reads are billed per request, an idle table costs storage only
        (chosen with the planner, docs/planner.md).
    :param older_tier: state of every table older than the previous one.
        Default: the same on-demand Standard-IA tier (no second class change when a table ages).
    :param create_lead: how long before each boundary the next period's table is created.
        Default: None — 15 minutes (23:45 UTC on a daily rotation).
    :param missing_table_alarm_lead: how long before each boundary a next period's table that is still
        missing counts as missing: a second ``create_new`` run is scheduled then (a create refused for
        longer than the first run could wait is tried again before the boundary), every run from then on
        publishes ``NextPeriodTableMissing``, and the ``next_table_missing`` alarm, evaluated every minute,
        fires before the boundary while the table is missing. Whole minutes, at least 3 (a minute's
        datapoint and an evaluation), shorter than ``create_lead``.
        Default: None — 5 minutes (a retry at 23:55 UTC on a daily rotation), or a minute less than a
        ``create_lead`` of 6 minutes or less.
    :param resize_delay: how long after each boundary older tables are moved down their tiers and
        expired tables are removed. Default: None — 15 minutes (00:15 UTC on a daily rotation).
    :param reconcile_every: how often the reconcile run converges any state (creates missing tables,
        fixes tiers, expires). At least 5 minutes. Default: None — every hour.
    :param enable_reconcile_schedule: schedule the periodic reconcile run. Default: True; False leaves only the
        create and resize schedules (and the deploy-time run, see ``run_at_deploy``).
    :param retain_periods: how many periods are kept, counting the current one (at least 2; 7 on a
        daily rotation keeps today and six days back); older tables are exported (with
        ``archive_bucket``) and deleted. Default: None — tables are kept forever (on a daily or weekly
        rotation a synth warning states when the quota of 2,500 tables per account and Region is reached).
    :param archive_bucket: the bucket expired tables are exported to (``ExportTableToPointInTime``, DynamoDB
        JSON) before they are deleted; a table is deleted only after its export completed. Needs
        ``retain_periods`` and ``point_in_time_recovery``. Default: None — expired tables are deleted
        without an export.
    :param archive_prefix: key prefix of the exports in ``archive_bucket``; each table's export goes under
        ``{archive_prefix}{table name}/``. Default: ``"exports/"``.
    :param encryption_key: the KMS key every period table is encrypted with; grants include its use.
        Default: None — tables are encrypted with an AWS owned key.
    :param point_in_time_recovery: enable point-in-time recovery on every period table. Default: True.
    :param time_to_live_attribute: the attribute holding each item's expiry (epoch seconds) for DynamoDB's
        TTL. Default: None — no TTL; items live as long as their table.
    :param stream: the stream view type of every period table. Default: None — no stream (``StreamArchiver``
        and ``add_stream_consumer`` need one).
    :param deletion_protection: enable deletion protection on every period table (expiry turns it off
        just before it deletes a table past retention). Default: False.
    :param throttled_keys_insights: turn on CloudWatch Contributor Insights in ``THROTTLED_KEYS`` mode on
        every period table, at run time (the tables are created by the function, not the template), so
        the keys DynamoDB throttles are named (docs/monitoring.md, "Hot keys named"). Grants the function
        ``UpdateContributorInsights``/``DescribeContributorInsights`` on the prefix's tables and the
        creation of DynamoDB's Contributor Insights service-linked role.
        Default: False — no Contributor Insights rules (each rule is billed).
    :param run_at_deploy: reconcile during ``cdk deploy`` (a custom resource invokes the rotation
        function), so the current period's table exists when the deployment ends. Default: True.
    :param max_concurrency: how many tables one run updates in parallel. Default: 8.
    :param max_changes_per_run: how many mutating calls (UpdateTable, DeleteTable) one run may make; the
        rest is deferred to the next run. Default: 50.
    :param reserved_concurrent_executions: concurrency reserved for the rotation function (at least 1),
        as a second guard beside the lock. Default: None — no reservation: a template that reserves
        any concurrency fails to deploy in an account whose Lambda concurrency quota is 10 or 50 (new
        accounts), because Lambda keeps 100 executions unreserved; the lock makes runs single-flight
        without it.
    :param alarm_topic: create the default alarms now, notifying this SNS topic (same as calling
        ``add_default_alarms(alarm_topic=topic)``). Default: None — no alarms until
        ``add_default_alarms`` is called.
    :raises ValueError: naming this construct's path and every problem at once, an unknown keyword (with
        the closest valid one), a token ``table_prefix``, an invalid prefix, period, key or time unit,
        ``reconcile_every`` under 5 minutes, a ``missing_table_alarm_lead`` under 3 minutes or not shorter than
        ``create_lead``, an inconsistent retention (see ``RotationConfig``) or ``reserved_concurrent_executions``
        under 1.
    """

    rotation_failures_alarm: cloudwatch.Alarm | None = None
    next_table_missing_alarm: cloudwatch.Alarm | None = None
    schedule_dead_letters_alarm: cloudwatch.Alarm | None = None
    function_dead_letters_alarm: cloudwatch.Alarm | None = None
    future_tables_alarm: cloudwatch.Alarm | None = None
    lock_held_alarm: cloudwatch.Alarm | None = None
    throttles_alarm: cloudwatch.Alarm | None = None

    @refuses_unknown_keywords
    def __init__(
        self, scope: Construct, construct_id: str, *,
        table_prefix: str,
        period: RotationPeriod | str = RotationPeriod.DAILY,
        partition_key: dynamodb.Attribute | None = None,
        sort_key: dynamodb.Attribute | None = None,
        time_unit: str | None = None,
        current_tier: CapacityTier = DEFAULT_CURRENT,
        previous_tier: CapacityTier = DEFAULT_PREVIOUS,
        older_tier: CapacityTier = DEFAULT_OLDER,
        create_lead: Duration | None = None,
        missing_table_alarm_lead: Duration | None = None,
        resize_delay: Duration | None = None,
        reconcile_every: Duration | None = None,
        enable_reconcile_schedule: bool = True,
        retain_periods: int | None = None,
        archive_bucket: s3.IBucket | None = None,
        archive_prefix: str = "exports/",
        encryption_key: kms.IKey | None = None,
        point_in_time_recovery: bool = True,
        time_to_live_attribute: str | None = None,
        stream: dynamodb.StreamViewType | None = None,
        deletion_protection: bool = False,
        throttled_keys_insights: bool = False,
        run_at_deploy: bool = True,
        max_concurrency: int = 8,
        max_changes_per_run: int = 50,
        reserved_concurrent_executions: int | None = None,
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        """Define the period tables' layout, capacity tiers, schedules and retention (keywords: see the class)."""
        options = rotation_keywords(locals())  # checked together, every problem reported at once
        settings = rotation_settings(scope, construct_id, table_prefix, options, RotatingTimeSeriesTables)
        super().__init__(
            scope, construct_id, settings.layout, stream_view_type=stream, encryption_key=encryption_key
        )
        self.config: RotationConfig = settings.config
        self.archive_bucket = archive_bucket
        if retain_periods is None and self.period in (RotationPeriod.DAILY, RotationPeriod.WEEKLY):
            self._warn_about_table_quota()
        self.lock_table = lock_table(
            self, "LockTable", encryption_key=encryption_key, point_in_time_recovery=point_in_time_recovery
        )
        # Lambda retries a failed asynchronous invocation twice, then drops it unless the function has a
        # dead-letter queue. A DLQ (DeadLetterConfig) rather than an on-failure destination: it keeps the
        # same event, and it is what cdk-nag's LambdaDLQ and checkov's CKV_AWS_116 look for.
        self.function_dead_letter_queue = dead_letter_queue(
            self, "FunctionDeadLetterQueue",
            "the rotation function's asynchronous invocations (the schedules and the deploy-time custom resource)",
        )
        self.function = rotation_function(self, reserved_concurrent_executions)
        self.schedule_dead_letter_queue = dead_letter_queue(
            self, "ScheduleDeadLetterQueue", "the rotation schedules' EventBridge targets"
        )
        self.create_new_rule, self.create_new_retry_rule, self.resize_old_rule, self.reconcile_rule = schedules(
            self, settings, reconcile=enable_reconcile_schedule
        )
        self.deploy_time_run: CustomResource | None = deploy_time_run(self) if run_at_deploy else None
        if alarm_topic is not None:
            self.add_default_alarms(alarm_topic=alarm_topic)

    @classmethod
    @refuses_unknown_keywords
    def from_table_prefix(
        cls, scope: Construct, construct_id: str, *,
        table_prefix: str,
        period: RotationPeriod | str = RotationPeriod.DAILY,
        partition_key: dynamodb.Attribute | None = None,
        sort_key: dynamodb.Attribute | None = None,
        time_unit: str | None = None,
        stream: dynamodb.StreamViewType | None = None,
        encryption_key: kms.IKey | None = None,
    ) -> RotatingTimeSeriesTablesBase:
        """Period tables another stack or app rotates, for grants, ``bind`` and metrics; creates nothing.

        Returns a :class:`RotatingTimeSeriesTablesBase` that creates nothing: it grants on the same
        ``?`` patterns as the owning construct, in the account and Region of ``scope``'s stack, and ``bind``
        sets the same environment for ``PeriodRouter.from_env``. Pass the values the owning
        ``RotatingTimeSeriesTables`` was given.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param table_prefix: the owning rotation's ``table_prefix`` (a literal string).
        :param stream: the owning rotation's ``stream``.
            Default: None — no stream; ``grant_stream_read`` refuses.
        :param encryption_key: the owning rotation's ``encryption_key``, so grants include its KMS actions.
            Default: None — the tables use an AWS owned key.
        :param period: the owning rotation's ``period``. Default: ``RotationPeriod.DAILY``.
        :param partition_key: the owning rotation's ``partition_key``. Default: None — ``pk``, a Number.
        :param sort_key: the owning rotation's ``sort_key``. Default: None — ``sk``, a Number.
        :param time_unit: the owning rotation's ``time_unit``. Default: None — ``"ms"`` for a Number sort key,
            ``"iso"`` for a String one.
        :raises ValueError: naming the construct path, for an unknown keyword (with the closest valid one), a
            token or invalid prefix, period, key or time unit, an ``encryption_key`` that is not a ``kms.IKey``, or
            a ``stream`` that is not a ``dynamodb.StreamViewType``.
        """
        layout = imported_layout(
            scope, construct_id, table_prefix,
            {"period": period, "partition_key": partition_key, "sort_key": sort_key, "time_unit": time_unit},
            encryption_key=encryption_key, stream=stream,
        )
        return _ImportedPeriodTables(
            scope, construct_id, layout, stream_view_type=stream, encryption_key=encryption_key
        )

    # ---- public API -----------------------------------------------------------------------------

    def add_stream_consumer(self, consumer: lambda_.IFunction, mapping: StreamConsumer) -> None:
        """Have every new period table's stream feed ``consumer`` (the rotation function maps it on creation).

        :param consumer: the function the mappings invoke; the rotation role may manage mappings of
            this function only.
        :param mapping: the mapping settings every period table's stream gets; its ``function_name``
            must name ``consumer``. Mappings of expired tables are removed before the table is deleted.
        """
        if self.stream_view_type is None:
            raise ValidationError(
                f"{path_of(self)} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES"
            )
        if not isinstance(mapping, StreamConsumer):
            raise WrongTypeError(
                f"mapping {mapping!r} is not a cdk_ts.StreamConsumer; build one with "
                "cdk_ts.StreamConsumer(function_name=consumer.function_arn, ...)"
            )
        self.function.add_environment(STREAM_CONSUMER_ENV, stack_of(self).to_json_string(asdict(mapping)))
        grant_stream_consumer_mappings(self, consumer)

    # ---- monitoring -----------------------------------------------------------------------------

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The period tables' throttled requests, then the rotation's health in one graph.

        Function errors, next table missing, undelivered runs, failed runs kept in the function's
        dead-letter queue, future and failed tables, runs that found the lock held.
        """
        return [*super().dashboard_widgets(), rotation_health_graph(self)]

    def metric_rotation_errors(self, **props: Any) -> cloudwatch.Metric:
        """Failed runs of the rotation function, any operation (``AWS/Lambda`` ``Errors``; Sum)."""
        return self._metrics.function_errors(self.function, **props)

    def metric_schedule_dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Scheduled runs EventBridge could not deliver after every retry (dead-letter queue depth; Maximum)."""
        return self._metrics.messages_waiting(self.schedule_dead_letter_queue, **props)

    def metric_function_dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Runs that failed on every attempt Lambda made, kept in ``function_dead_letter_queue`` (its depth; Maximum).

        Each message is the invocation's event (a schedule's operation and time, or the custom resource's
        request), with the error in its ``ErrorCode`` and ``ErrorMessage`` attributes.
        """
        return self._metrics.messages_waiting(self.function_dead_letter_queue, **props)

    # ---- the constructor's steps ----------------------------------------------------------------

    def _create_default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        alarms = rotation_alarms(self, self._alarm_book)
        for name, alarm in alarms.items():  # rotation_failures -> rotation_failures_alarm, ...
            setattr(self, f"{name}_alarm", alarm)
        return alarms

    def _warn_about_table_quota(self) -> None:
        unit, step = ("day", timedelta(days=1)) if self.period is RotationPeriod.DAILY else ("week", timedelta(weeks=1))
        reached = datetime.now(UTC) + step * TABLE_QUOTA
        Annotations.of(self).add_warning_v2(
            "cdk-ts:table-quota",
            f"{self.table_prefix}: a {self.period.value} rotation with no retain_periods adds a table every {unit}; "
            f"the default quota of {TABLE_QUOTA} tables per account and Region is reached after {TABLE_QUOTA} "
            f"{unit}s, around {reached:%Y-%m} (sooner with other tables). "
            "Set retain_periods (and archive_bucket to keep the data in S3).",
        )
