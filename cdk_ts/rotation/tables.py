"""RotatingTimeSeriesTables: one DynamoDB table per period, created, resized and expired by a scheduled function."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any, Unpack

from aws_cdk import Annotations, CustomResource, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._defaults import dead_letter_queue, runtime_function
from cdk_ts._validation import keyword_names
from cdk_ts.rotation._iam import grant_rotation_permissions, grant_stream_consumer_mappings
from cdk_ts.rotation._lock import acknowledge_unreserved_concurrency, grant_lock, lock_table
from cdk_ts.rotation._monitoring import rotation_alarms, rotation_health_graph
from cdk_ts.rotation._settings import RotationSettings, rotation_settings
from cdk_ts.rotation._texts import CREATE_RETRY, function_description, rule_description
from cdk_ts.rotation.base import PeriodTableOptions, RotatingTimeSeriesTablesBase
from cdk_ts.rotation.imported import _ImportedPeriodTables, imported_layout
from cdk_ts.rotation.options import RotationOptions
from cdk_ts_runtime._errors import ValidationError, WrongTypeError
from cdk_ts_runtime._periods import RotationPeriod
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG, RotationConfig
from cdk_ts_runtime._rotation.lock import LOCK_TABLE_ENV, RUN_TIMEOUT_ENV
from cdk_ts_runtime._stream_consumer import STREAM_CONSUMER_ENV, StreamConsumer

TABLE_QUOTA = 2500
#: How long one rotation run may take (the function's timeout).
RUN_TIMEOUT = Duration.minutes(5)
#: How long CloudFormation waits for the deploy-time run's answer (its default is an hour). It invokes the
#: function asynchronously: a run that dies before answering is retried by Lambda after 1, then 2 minutes,
#: and then kept in the function's dead-letter queue; three runs and those waits fit in 20 minutes.
DEPLOY_TIME_RUN_TIMEOUT = Duration.minutes(20)


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
    """

    rotation_failures_alarm: cloudwatch.Alarm | None = None
    next_table_missing_alarm: cloudwatch.Alarm | None = None
    schedule_dead_letters_alarm: cloudwatch.Alarm | None = None
    function_dead_letters_alarm: cloudwatch.Alarm | None = None
    future_tables_alarm: cloudwatch.Alarm | None = None
    lock_held_alarm: cloudwatch.Alarm | None = None
    throttles_alarm: cloudwatch.Alarm | None = None

    def __init__(
        self, scope: Construct, construct_id: str, *, table_prefix: str, **options: Unpack[RotationOptions]
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
        :param options: the keywords of ``RotationOptions`` (capacity tiers, schedules, retention, table
            settings, ``alarm_topic``) and of ``PeriodTableOptions`` (``period``, ``partition_key``, ``sort_key``,
            ``time_unit``), each optional and documented there with its default.
        :raises ValueError: naming this construct's path and every problem at once, an unknown keyword (with
            the closest valid one), a token ``table_prefix``, an invalid prefix, period, key or time unit,
            ``reconcile_every`` under 5 minutes, a ``missing_table_alarm_lead`` under 3 minutes or not shorter
            than ``create_lead``, an inconsistent retention (see ``RotationConfig``) or
            ``reserved_concurrent_executions`` under 1.
        """
        settings = rotation_settings(scope, construct_id, table_prefix, options, RotatingTimeSeriesTables)
        given = settings.options
        super().__init__(
            scope, construct_id, settings.layout,
            stream_view_type=given["stream"], encryption_key=given["encryption_key"],
        )
        self.config: RotationConfig = settings.config
        self.archive_bucket = given["archive_bucket"]
        if given["retain_periods"] is None and self.period in (RotationPeriod.DAILY, RotationPeriod.WEEKLY):
            self._warn_about_table_quota()
        self.lock_table = lock_table(
            self, "LockTable",
            encryption_key=given["encryption_key"], point_in_time_recovery=given["point_in_time_recovery"],
        )
        # Lambda retries a failed asynchronous invocation twice, then drops it unless the function has a
        # dead-letter queue. A DLQ (DeadLetterConfig) rather than an on-failure destination: it keeps the
        # same event, and it is what cdk-nag's LambdaDLQ and checkov's CKV_AWS_116 look for.
        self.function_dead_letter_queue = dead_letter_queue(
            self, "FunctionDeadLetterQueue",
            "the rotation function's asynchronous invocations (the schedules and the deploy-time custom resource)",
        )
        self.function = self._create_function(given["reserved_concurrent_executions"])
        self.schedule_dead_letter_queue = dead_letter_queue(
            self, "ScheduleDeadLetterQueue", "the rotation schedules' EventBridge targets"
        )
        self._create_schedules(settings, reconcile=given["enable_reconcile_schedule"])
        self.deploy_time_run: CustomResource | None = (
            self._create_deploy_time_run() if given["run_at_deploy"] else None
        )
        if given["alarm_topic"] is not None:
            self.add_default_alarms(alarm_topic=given["alarm_topic"])

    @classmethod
    def from_table_prefix(
        cls, scope: Construct, construct_id: str, *,
        table_prefix: str,
        stream: dynamodb.StreamViewType | None = None,
        encryption_key: kms.IKey | None = None,
        **layout_options: Unpack[PeriodTableOptions],
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
        :param layout_options: the owning rotation's keywords of ``PeriodTableOptions``, documented there.
        :raises ValueError: naming the construct path, for an unknown keyword (with the closest valid one), a
            token or invalid prefix, period, key or time unit, an ``encryption_key`` that is not a ``kms.IKey``, or
            a ``stream`` that is not a ``dynamodb.StreamViewType``.
        """
        layout = imported_layout(
            scope, construct_id, table_prefix, layout_options, also_valid=keyword_names(cls.from_table_prefix),
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
                f"{self.node.path} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES"
            )
        if not isinstance(mapping, StreamConsumer):
            raise WrongTypeError(
                f"mapping {mapping!r} is not a cdk_ts.StreamConsumer; build one with "
                "cdk_ts.StreamConsumer(function_name=consumer.function_arn, ...)"
            )
        self.function.add_environment(STREAM_CONSUMER_ENV, Stack.of(self).to_json_string(asdict(mapping)))
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

    def _create_function(self, reserved_concurrent_executions: int | None) -> lambda_.Function:
        self.function = runtime_function(
            self,
            "Rotation",
            handler="cdk_ts_runtime.handlers.rotation.handler",
            description=function_description(self.table_prefix, self.period),
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
        grant_rotation_permissions(self)  # reads self.function
        grant_lock(self.lock_table, self.function)
        if reserved_concurrent_executions is None:
            acknowledge_unreserved_concurrency(self.function)
        return self.function

    def _create_schedules(self, settings: RotationSettings, *, reconcile: bool) -> None:
        self.create_new_rule = self._schedule("CreateNew", "create_new", events.Schedule.cron(**settings.create_new))
        # The next table is needed at the boundary: a create DynamoDB refuses for longer than one run can wait
        # (too many tables changing in the account) is tried again before it. The hourly reconcile is no such
        # retry: a rate schedule runs at minutes set by the deploy time, rarely inside the lead window.
        self.create_new_retry_rule = self._schedule(
            "CreateNewRetry", "create_new", events.Schedule.cron(**settings.create_new_retry),
            described_as=CREATE_RETRY,
        )
        self.resize_old_rule = self._schedule("ResizeOld", "resize_old", events.Schedule.cron(**settings.resize_old))
        self.reconcile_rule: events.Rule | None = None
        if reconcile:
            every = events.Schedule.rate(settings.reconcile_every)
            self.reconcile_rule = self._schedule("Reconcile", "reconcile", every)

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

    def _create_deploy_time_run(self) -> CustomResource:
        return CustomResource(
            self,
            "DeployTimeReconcile",
            service_token=self.function.function_arn,
            resource_type="Custom::CdkTsRotation",
            service_timeout=DEPLOY_TIME_RUN_TIMEOUT,
            # A changed configuration changes this property, so CloudFormation reconciles again.
            properties={"Layout": self.layout.to_env(), "ConfigHash": self._config_fingerprint()},
        )

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

    def _config_fingerprint(self) -> str:
        resolved = Stack.of(self).resolve(Stack.of(self).to_json_string(self.config.to_dict()))
        return hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
