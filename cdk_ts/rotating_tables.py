"""RotatingTimeSeriesTables: one DynamoDB table per period, created, resized and expired by a scheduled function."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any, Unpack

from aws_cdk import Annotations, CustomResource, Duration, Stack, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from constructs import Construct

from cdk_ts import _schedules
from cdk_ts._alarms import AlarmActions
from cdk_ts._defaults import dead_letter_queue, runtime_function
from cdk_ts._metrics import graph, metric_options
from cdk_ts._rotation_iam import grant_rotation_permissions, grant_stream_consumer_mappings
from cdk_ts._rotation_lock import (
    acknowledge_unreserved_concurrency,
    check_reserved_concurrency,
    grant_lock,
    lock_table,
)
from cdk_ts._rotation_texts import (
    CREATE_RETRY,
    alarm_descriptions,
    check_derived_texts,
    function_description,
    rule_description,
)
from cdk_ts._validation import Problems, check_keywords, keyword_names
from cdk_ts.period_tables import (
    LAYOUT_KEYWORDS,
    METRIC_NAMESPACE,
    PeriodTableOptions,
    PeriodTablesBase,
    layout_period,
    literal_prefix,
    table_layout,
)
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._periods import RotationPeriod, globs_overlap, table_name_glob
from cdk_ts_runtime._rotation.config import (
    DEFAULT_CURRENT,
    DEFAULT_OLDER,
    DEFAULT_PREVIOUS,
    ENV_ROTATION_CONFIG,
    CapacityTier,
    RotationConfig,
)
from cdk_ts_runtime._rotation.lock import LOCK_TABLE_ENV, RUN_TIMEOUT_ENV
from cdk_ts_runtime._rotation.metrics import RotationMetric
from cdk_ts_runtime._stream_consumer import STREAM_CONSUMER_ENV, StreamConsumer

TABLE_QUOTA = 2500
#: How long one rotation run may take (the function's timeout).
RUN_TIMEOUT = Duration.minutes(5)
#: How long CloudFormation waits for the deploy-time run's answer (its default is an hour). It invokes the
#: function asynchronously: a run that dies before answering is retried by Lambda after 1, then 2 minutes,
#: and then kept in the function's dead-letter queue; three runs and those waits fit in 20 minutes.
DEPLOY_TIME_RUN_TIMEOUT = Duration.minutes(20)


class RotatingTimeSeriesTables(AlarmActions, PeriodTablesBase):
    """One DynamoDB table per period (``{table_prefix}_{label}``), rotated by a scheduled Lambda function.

    Before each boundary the function creates the next period's table at the current tier's
    capacity (a refused create is tried again within the run, then by a second run at
    ``missing_table_alarm_lead`` before the boundary, and the ``next_table_missing`` alarm fires before the
    boundary if the table is still missing then); after it, it moves the previous table to the previous
    tier and older tables to the older tier; with ``retain_periods`` it exports (when ``archive_bucket``
    is given) and deletes tables past retention. A reconcile run at deploy time and every ``reconcile_every`` converges
    any state, so a missed run heals itself. Writers and readers use ``cdk_ts_runtime.router.PeriodRouter``.

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
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        table_prefix: str,
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
        **layout_options: Unpack[PeriodTableOptions],
    ) -> None:
        """Define the period tables' layout, capacity tiers, schedules and retention.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param table_prefix: the tables are named ``{table_prefix}_{label}`` (``metrics_2026-03-01``). Must be a
            literal string, since table names are derived from it at synth time; with the longest label of
            ``period`` it must give names of at most 255 characters of ``[A-Za-z0-9_.-]``, and every string
            made from it must fit its AWS limit, the function's description (``Rotates the daily DynamoDB
            tables {table_prefix}_*``, 256 characters) first: at most 220 characters for a daily rotation,
            219 weekly or yearly, 218 monthly, 216 quarterly. A longer one is refused at synth with the
            limit and the value.
        :param current_tier: capacity of the current period's table (and of the next one, created before the
            boundary): a ``CapacityTier.provisioned(...)`` or ``CapacityTier.on_demand(...)``, with warm
            throughput, table class and right-sizing from the observed peak if you want them.
            Default: ``CapacityTier.provisioned(300, 1000)`` — 300 RCU / 1000 WCU, no auto scaling.
        :param previous_tier: state the previous period's table is moved to after the boundary.
            Default: ``CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")`` — on-demand in
            Standard-IA: late writes and reads are billed per request, an idle table costs storage only
            (chosen with the planner, see the README).
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
        :param enable_reconcile_schedule: schedule the periodic reconcile run.
            Default: True; False leaves
            only the create and resize schedules (and the deploy-time run, see ``run_at_deploy``).
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
        :param point_in_time_recovery: enable point-in-time recovery on every period table.
            Default: True.
        :param time_to_live_attribute: the attribute holding each item's expiry (epoch seconds) for DynamoDB's
            TTL. Default: None — no TTL; items live as long as their table.
        :param stream: the stream view type every period table gets.
            Default: None — no stream (``StreamArchiver`` and ``add_stream_consumer`` need one).
        :param deletion_protection: enable deletion protection on every period table (expiry turns it off
            just before it deletes a table past retention). Default: False.
        :param throttled_keys_insights: turn on CloudWatch Contributor Insights in ``THROTTLED_KEYS`` mode on
            every period table, at run time (the tables are created by the function, not the template), so
            the keys DynamoDB throttles are named (see README, "Hot keys named"). Grants the function
            ``UpdateContributorInsights``/``DescribeContributorInsights`` on the prefix's tables and the
            creation of DynamoDB's Contributor Insights service-linked role.
            Default: False — no Contributor Insights rules (each rule is billed).
        :param run_at_deploy: reconcile during ``cdk deploy`` (a custom resource invokes the rotation
            function), so the current period's table exists when the deployment ends. Default: True.
        :param max_concurrency: how many tables one run updates in parallel.
            Default: 8.
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
        :param layout_options: the keywords of ``PeriodTableOptions``, documented there (``period``,
            ``partition_key``, ``sort_key``, ``time_unit``): how long one table covers, and the tables' keys.
        :raises ValueError: naming this construct's path and every problem at once, an unknown keyword (with
            the closest valid one), a token ``table_prefix``, an invalid prefix, period, key or time unit,
            ``reconcile_every`` under 5 minutes, a ``missing_table_alarm_lead`` under 3 minutes or not shorter
            than ``create_lead``, an inconsistent retention (see ``RotationConfig``) or
            ``reserved_concurrent_executions`` under 1.
        """
        problems = Problems(scope, construct_id)
        check_keywords(
            problems, layout_options, LAYOUT_KEYWORDS, also_valid=keyword_names(RotatingTimeSeriesTables.__init__)
        )
        layout = None
        if literal_prefix(problems, table_prefix):
            period_kind = _parsed_period(layout_period(layout_options))  # None: TableLayout reports the period
            if period_kind is not None:
                check_derived_texts(problems, table_prefix, period_kind, archive_prefix if archive_bucket else None)
            layout = problems.collect(lambda: table_layout(table_prefix, layout_options))
        lead = problems.collect(lambda: _to_timedelta("create_lead", create_lead, Duration.minutes(15)))
        alarm_lead = None
        if lead is not None:
            default = Duration.seconds(_schedules.default_alarm_lead(lead).total_seconds())
            alarm_lead = problems.collect(
                lambda: _to_timedelta("missing_table_alarm_lead", missing_table_alarm_lead, default)
            )
        if lead is not None and alarm_lead is not None:
            given = missing_table_alarm_lead is not None
            problems.collect(lambda: _schedules.check_alarm_lead(alarm_lead, lead, given=given))
        delay = problems.collect(lambda: _to_timedelta("resize_delay", resize_delay, Duration.minutes(15)))
        every = reconcile_every or Duration.hours(1)
        if enable_reconcile_schedule:
            problems.check(
                every.to_minutes() >= 5, f"reconcile_every {every.to_human_string()} must be at least 5 minutes"
            )
        config = problems.collect(lambda: RotationConfig(
            current=current_tier,
            previous=previous_tier,
            older=older_tier,
            retain_periods=retain_periods,
            archive_bucket=archive_bucket.bucket_name if archive_bucket else None,
            archive_prefix=archive_prefix,
            create_lead_seconds=int((lead or timedelta(minutes=15)).total_seconds()),
            missing_table_alarm_seconds=int(alarm_lead.total_seconds()) if alarm_lead else None,
            point_in_time_recovery=point_in_time_recovery,
            kms_key_arn=encryption_key.key_arn if encryption_key else None,
            ttl_attribute=time_to_live_attribute,
            stream_view_type=stream.value if stream else None,
            deletion_protection=deletion_protection,
            throttled_keys_insights=throttled_keys_insights,
            max_concurrency=max_concurrency,
            max_changes_per_run=max_changes_per_run,
            metric_namespace=METRIC_NAMESPACE,
        ))
        check_reserved_concurrency(problems, reserved_concurrent_executions)
        if layout is not None:
            _check_overlapping_rotations(problems, scope, table_name_glob(layout.table_prefix, layout.period))
        problems.raise_if_any()
        super().__init__(scope, construct_id, layout, stream_view_type=stream, encryption_key=encryption_key)
        self._init_alarm_actions()
        self.config: RotationConfig = config
        self.archive_bucket = archive_bucket
        create_fields = _schedules.before_boundary(self.period, lead)
        retry_fields = _schedules.before_boundary(self.period, alarm_lead, "missing_table_alarm_lead")
        resize_fields = _schedules.after_boundary(self.period, delay)
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
        self.function = runtime_function(
            self,
            "Rotation",
            handler="cdk_ts_runtime.handlers.rotation.handler",
            description=function_description(table_prefix, self.period),
            environment={
                **self.layout.to_env(),
                ENV_ROTATION_CONFIG: Stack.of(self).to_json_string(self.config.to_dict()),
                LOCK_TABLE_ENV: self.lock_table.table_name,
                # the longest a run can hold the lock, so a lock item expiring further ahead counts as malformed
                RUN_TIMEOUT_ENV: str(int(RUN_TIMEOUT.to_seconds())),
            },
            timeout=RUN_TIMEOUT,
            reserved_concurrent_executions=reserved_concurrent_executions,
            dead_letter_queue=self.function_dead_letter_queue,
        )
        grant_rotation_permissions(self)
        grant_lock(self.lock_table, self.function)
        if reserved_concurrent_executions is None:
            acknowledge_unreserved_concurrency(self.function)

        self.schedule_dead_letter_queue = dead_letter_queue(
            self, "ScheduleDeadLetterQueue", "the rotation schedules' EventBridge targets"
        )
        self.create_new_rule = self._schedule("CreateNew", "create_new", events.Schedule.cron(**create_fields))
        # The next table is needed at the boundary: a create DynamoDB refuses for longer than one run can wait
        # (too many tables changing in the account) is tried again before it. The hourly reconcile is no such
        # retry: a rate schedule runs at minutes set by the deploy time, rarely inside the lead window.
        self.create_new_retry_rule = self._schedule(
            "CreateNewRetry", "create_new", events.Schedule.cron(**retry_fields), described_as=CREATE_RETRY
        )
        self.resize_old_rule = self._schedule("ResizeOld", "resize_old", events.Schedule.cron(**resize_fields))
        self.reconcile_rule: events.Rule | None = None
        if enable_reconcile_schedule:
            self.reconcile_rule = self._schedule("Reconcile", "reconcile", events.Schedule.rate(every))

        self.deploy_time_run: CustomResource | None = None
        if run_at_deploy:
            self.deploy_time_run = CustomResource(
                self,
                "DeployTimeReconcile",
                service_token=self.function.function_arn,
                resource_type="Custom::CdkTsRotation",
                service_timeout=DEPLOY_TIME_RUN_TIMEOUT,
                # A changed configuration changes this property, so CloudFormation reconciles again.
                properties={"Layout": self.layout.to_env(), "ConfigHash": self._config_fingerprint()},
            )

        self.rotation_failures_alarm: cloudwatch.Alarm | None = None
        self.next_table_missing_alarm: cloudwatch.Alarm | None = None
        self.schedule_dead_letters_alarm: cloudwatch.Alarm | None = None
        self.function_dead_letters_alarm: cloudwatch.Alarm | None = None
        self.future_tables_alarm: cloudwatch.Alarm | None = None
        self.lock_held_alarm: cloudwatch.Alarm | None = None
        self.throttles_alarm: cloudwatch.Alarm | None = None
        if alarm_topic is not None:
            self.add_default_alarms(alarm_topic=alarm_topic)

    @classmethod
    def from_table_prefix(
        cls, scope: Construct, construct_id: str, *,
        table_prefix: str,
        stream: dynamodb.StreamViewType | None = None,
        encryption_key: kms.IKey | None = None,
        **layout_options: Unpack[PeriodTableOptions],
    ) -> PeriodTablesBase:
        """Period tables another stack or app rotates, for grants, ``bind`` and metrics; creates nothing.

        The result grants on the same ``?`` patterns as the owning construct (``{prefix}_????-??-??`` for
        daily), in the account and Region of ``scope``'s stack, and ``bind`` sets the same environment for
        ``PeriodRouter.from_env``. Pass the values the owning ``RotatingTimeSeriesTables`` was given.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param table_prefix: the owning rotation's ``table_prefix`` (a literal string).
        :param stream: the owning rotation's ``stream``.
            Default: None — no stream; ``grant_stream_read`` refuses.
        :param encryption_key: the owning rotation's ``encryption_key``, so grants include its KMS actions.
            Default: None — the tables use an AWS owned key.
        :param layout_options: the owning rotation's keywords of ``PeriodTableOptions``, documented there
            (``period``, ``partition_key``, ``sort_key``, ``time_unit``).
        :raises ValueError: naming the construct path, for an unknown keyword (with the closest valid one), a
            token or invalid prefix, period, key or time unit.
        """
        problems = Problems(scope, construct_id)
        check_keywords(
            problems, layout_options, LAYOUT_KEYWORDS,
            also_valid=keyword_names(RotatingTimeSeriesTables.from_table_prefix),
        )
        layout = None
        if literal_prefix(problems, table_prefix):
            layout = problems.collect(lambda: table_layout(table_prefix, layout_options))
        problems.raise_if_any()
        return PeriodTablesBase(scope, construct_id, layout, stream_view_type=stream, encryption_key=encryption_key)

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
                f"{self.node.path} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES"
            )
        if not isinstance(mapping, StreamConsumer):
            raise TypeError(
                f"mapping {mapping!r} is not a cdk_ts_runtime.stream_consumer.StreamConsumer; build one with "
                "StreamConsumer(function_name=consumer.function_arn, ...)"
            )
        self.function.add_environment(STREAM_CONSUMER_ENV, Stack.of(self).to_json_string(asdict(mapping)))
        grant_stream_consumer_mappings(self, consumer)

    # ---- monitoring -----------------------------------------------------------------------------

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The period tables' throttled requests, then the rotation's health in one graph.

        Function errors, next table missing, undelivered runs, failed runs kept in the function's
        dead-letter queue, future and failed tables, runs that found the lock held.
        """
        return [
            *super().dashboard_widgets(),
            graph(
                f"Rotation of {self.table_prefix}_* ({self.period.value})",
                self.metric_rotation_errors(label="rotation errors"),
                self.metric_next_table_missing(label="next table missing"),
                self.metric_schedule_dead_letters(label="undelivered runs"),
                self.metric_function_dead_letters(label="failed runs kept"),
                self.metric(RotationMetric.FUTURE_PERIOD_TABLES, label="future tables"),
                self.metric(RotationMetric.FAILED_TABLES, label="failed tables"),
                self.metric(RotationMetric.LOCK_HELD_RUNS, label="runs that found the lock held"),
            ),
        ]

    def metric_rotation_errors(self, **props: Any) -> cloudwatch.Metric:
        """Failed runs of the rotation function, any operation (``AWS/Lambda`` ``Errors``; Sum)."""
        return self.function.metric_errors(**metric_options(props, "Sum"))

    def metric_schedule_dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Scheduled runs EventBridge could not deliver after every retry (dead-letter queue depth; Maximum)."""
        queue = self.schedule_dead_letter_queue
        return queue.metric_approximate_number_of_messages_visible(**metric_options(props, "Maximum"))

    def metric_function_dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Runs that failed on every attempt Lambda made, kept in ``function_dead_letter_queue`` (its depth; Maximum).

        Each message is the invocation's event (a schedule's operation and time, or the custom resource's
        request), with the error in its ``ErrorCode`` and ``ErrorMessage`` attributes.
        """
        queue = self.function_dead_letter_queue
        return queue.metric_approximate_number_of_messages_visible(**metric_options(props, "Maximum"))

    def _default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        described = alarm_descriptions(self.table_prefix)
        alarms = {
            "rotation_failures": self._alarm_above(
                "RotationFailuresAlarm", self.metric_rotation_errors(), described["rotation_failures"]
            ),
            # One-minute periods: a datapoint published at the deadline is evaluated before the boundary.
            "next_table_missing": self._alarm_above(
                "NextTableMissingAlarm", self.metric_next_table_missing(period=Duration.minutes(1)),
                described["next_table_missing"],
            ),
            "schedule_dead_letters": self._alarm_above(
                "ScheduleDeadLettersAlarm", self.metric_schedule_dead_letters(), described["schedule_dead_letters"]
            ),
            "function_dead_letters": self._alarm_above(
                "FunctionDeadLettersAlarm", self.metric_function_dead_letters(), described["function_dead_letters"]
            ),
            "future_tables": self._alarm_above(
                "FuturePeriodTablesAlarm",
                self.metric(RotationMetric.FUTURE_PERIOD_TABLES),
                described["future_tables"],
            ),
            # Minimum over an hour is above 0 only when every run of that hour found the lock held.
            "lock_held": self._alarm_above(
                "LockHeldAlarm",
                self.metric(RotationMetric.LOCK_HELD_RUNS, statistic="Minimum", period=Duration.hours(1)),
                described["lock_held"],
                evaluation_periods=2,
            ),
            "throttles": self._alarm_above(
                "ThrottledRequestsAlarm",
                self.metric_throttled_requests_in_account(),
                described["throttles"],
                evaluation_periods=3,
            ),
        }
        self.rotation_failures_alarm = alarms["rotation_failures"]
        self.next_table_missing_alarm = alarms["next_table_missing"]
        self.schedule_dead_letters_alarm = alarms["schedule_dead_letters"]
        self.function_dead_letters_alarm = alarms["function_dead_letters"]
        self.future_tables_alarm = alarms["future_tables"]
        self.lock_held_alarm = alarms["lock_held"]
        self.throttles_alarm = alarms["throttles"]
        return alarms

    # ---- internals ------------------------------------------------------------------------------

    def _schedule(
        self, construct_id: str, operation: str, schedule: events.Schedule, *, described_as: str | None = None
    ) -> events.Rule:
        rule = events.Rule(
            self,
            construct_id,
            schedule=schedule,
            description=rule_description(described_as or operation, self.table_prefix, self.period),
        )
        rule.add_target(targets.LambdaFunction(
            self.function,
            # EventBridge's scheduled time, so a retried run acts on the period it was scheduled for.
            event=events.RuleTargetInput.from_object({"Operation": operation, "time": events.EventField.time}),
            retry_attempts=8,
            max_event_age=Duration.hours(2),
            dead_letter_queue=self.schedule_dead_letter_queue,
        ))
        return rule

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

    def _config_fingerprint(self) -> str:
        resolved = Stack.of(self).resolve(Stack.of(self).to_json_string(self.config.to_dict()))
        return hashlib.sha256(str(resolved).encode()).hexdigest()[:16]


def _parsed_period(period: RotationPeriod | str) -> RotationPeriod | None:
    try:
        return RotationPeriod.parse(period)
    except ValueError:
        return None


def _to_timedelta(name: str, value: Duration | None, default: Duration) -> timedelta:
    duration = value or default
    if Token.is_unresolved(duration.to_seconds()):
        raise ValidationError(f"{name} must be a literal duration")
    return timedelta(seconds=duration.to_seconds())


def _check_overlapping_rotations(problems: Problems, scope: Construct, pattern: str) -> None:
    """Two rotations in one app whose table names could match each other's IAM pattern are a synth error."""
    clashes = [
        other.node.path
        for other in scope.node.root.node.find_all()
        if isinstance(other, RotatingTimeSeriesTables) and globs_overlap(pattern, other.table_name_pattern)
    ]
    problems.check(
        not clashes,
        f"table names {pattern} overlap those of {', '.join(clashes)}; give each rotation a prefix that "
        "cannot produce the other's names (e.g. readings_eu and readings_us, not readings and readings_20)",
    )
