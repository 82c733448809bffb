"""ArchiveCompaction: a scheduled function rewriting a StreamArchiver's closed partitions as Parquet (or Iceberg)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from aws_cdk import Acknowledgment, Duration, Size, Token, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._assets import compaction_code
from cdk_ts._defaults import LAMBDA_RUNTIME, MIN_RUNTIME_MINOR, dead_letter_queue, runtime_function
from cdk_ts._lookups import stack_of
from cdk_ts._nag import acknowledge_wildcard_resources
from cdk_ts._validation import Problems, check_iam_text
from cdk_ts.archive._compaction_fanout import CompactionFanOut
from cdk_ts.archive._monitoring import (
    CompactionMetricFactory,
    compaction_alarms,
    compaction_widgets,
    create_alarms,
)
from cdk_ts.archive.compacted_catalog import CompactedCatalog
from cdk_ts.archive.options import CompactionOptions, IcebergOptions
from cdk_ts_runtime._compaction_envelope import SingleFunctionEnvelope
from cdk_ts_runtime._compaction_iceberg import ENV_ICEBERG, s3_tables_catalog_properties
from cdk_ts_runtime._compaction_plan import ENV_SETTINGS, CompactionSettings, Granularity

if TYPE_CHECKING:
    from aws_cdk import aws_s3tables as s3tables

#: The AWS SDK for pandas layer's name: ``AWSSDKPandas-Python313`` (x86_64) or ``AWSSDKPandas-Python313-Arm64``.
_PANDAS_LAYER = re.compile(r":layer:AWSSDKPandas-Python3(?P<minor>\d+)(?P<arm>-Arm64)?:\d+$")
_ICEBERG_TYPES = {"string": "string", "bigint": "long", "double": "double", "boolean": "boolean"}


class ArchiveCompaction(AlarmingConstruct):
    """Compacts a StreamArchiver's closed partitions to zstd Parquet sorted by key and time, hourly.

    Each run (an EventBridge schedule, every hour at minute 20 by default) plans the partitions whose
    hour or day ended more than ``grace`` ago and that have no Parquet yet, or that received raw objects
    since (late records, replays), within ``lookback``; each is compacted by an invocation of its own
    (``CompactionFanOut``: a FIFO queue, at most ``max_concurrency`` at once, a partition that fails
    every attempt waits alone in ``partition_dead_letter_queue``): one row per ``eventID``, the keys, event and
    time, the images as JSON text and the declared columns typed. The raw JSON Lines stay (their own
    lifecycle: ``StreamArchiver(raw_expiration=...)``). With a Glue database it creates the Parquet table
    ``<raw>_compacted`` (partitions registered by the function) and the view ``<raw>_all``, which reads
    compacted partitions from Parquet and the others from the raw layer, each event once.

    A plan that fails is retried twice by Lambda, then lands in ``dead_letter_queue`` (encrypted SQS, 14 days;
    also the schedule's delivery DLQ); ``add_default_alarms()`` watches both queues, the function's errors and
    partitions above the single-function envelope (``envelope``), which are reported and never attempted.
    Exposes ``function`` (compacts one partition a message), ``planner_function``, ``partition_queue``,
    ``partition_dead_letter_queue``, ``envelope``, ``rule``, ``dead_letter_queue``, ``settings``,
    ``catalog`` (None without Glue), ``table_bucket``/``iceberg_namespace``/``iceberg_table`` (None
    without ``iceberg``); alarms ``dead_letter_alarm`` and ``errors_alarm`` (None until
    ``add_default_alarms``).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        bucket: s3.IBucket,
        prefix: str,
        options: CompactionOptions,
        glue_database_name: str | None = None,
        raw_glue_table_name: str | None = None,
        database: glue.CfnDatabase | None = None,
        alarm_topic: sns.ITopic | None = None,
        raw_retention: Duration | None = None,
    ) -> None:
        """Create the function, its schedule and failure queue, and the catalog entries.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param bucket: the archive bucket (raw and compacted layers).
        :param prefix: the raw layer's prefix (the archiver's).
        :param options: how to compact (``CompactionOptions``).
        :param glue_database_name: register the Parquet table and view here.
            Default: None — no Glue entries.
        :param raw_glue_table_name: the raw layer's Glue table (the view reads its ``_deduplicated`` view).
            Default: None.
        :param database: the database resource when this app creates it.
            Default: None.
        :param alarm_topic: create the default alarms now, notifying this topic.
            Default: None.
        :param raw_retention: how long the raw layer keeps its objects (``StreamArchiver(raw_expiration=...)``):
            a ``Since`` before it is refused. Default: None — kept until deleted (ten years are allowed).
        :raises ValueError: naming every bad option at once.
        """
        settings, runtime = _checked(scope, construct_id, bucket, prefix, options, glue_database_name,
                                     raw_glue_table_name, raw_retention)
        super().__init__(scope, construct_id)
        self.settings: CompactionSettings = settings
        self.bucket = bucket
        self.dead_letter_queue = dead_letter_queue(
            self, "DeadLetterQueue", "the compaction function's failed runs and undelivered schedule events"
        )
        self.table_bucket: s3tables.CfnTableBucket | None = None
        self.iceberg_namespace: s3tables.CfnNamespace | None = None
        self.iceberg_table: s3tables.CfnTable | None = None
        iceberg = self._create_iceberg_table(options.iceberg, settings) if options.iceberg is not None else None
        self.function = self._create_function(options, runtime, iceberg)
        self._grant_archive(bucket, settings)
        self.envelope = _envelope(options, runtime.timeout)
        fan_out = CompactionFanOut(
            self, "FanOut", worker=self.function, worker_timeout=runtime.timeout, bucket=bucket, settings=settings,
            envelope=self.envelope, max_concurrency=options.max_concurrency,
            planner_dead_letter_queue=self.dead_letter_queue,
        )
        self.planner_function = fan_out.planner
        self.partition_queue = fan_out.queue
        self.partition_dead_letter_queue = fan_out.dead_letter_queue
        self.catalog: CompactedCatalog | None = None
        if glue_database_name is not None and options.iceberg is None:
            self._create_catalog(glue_database_name, raw_glue_table_name, database)
        if self.iceberg_table is not None:
            self._grant_iceberg()
        self.rule = self._create_schedule(options.schedule, prefix)
        self.dead_letter_alarm: cloudwatch.Alarm | None = None
        self.errors_alarm: cloudwatch.Alarm | None = None
        self.failed_partitions_alarm: cloudwatch.Alarm | None = None
        self.partitions_over_envelope_alarm: cloudwatch.Alarm | None = None
        if alarm_topic is not None:
            self.add_default_alarms(alarm_topic=alarm_topic)

    # ---- steps of the constructor ---------------------------------------------------------------

    def _create_function(
        self, options: CompactionOptions, runtime: _LayerRuntime, iceberg: str | None
    ) -> lambda_.Function:
        # the bucket's name may be a deploy-time value: CloudFormation fills it into the JSON
        settings_json = stack_of(self).to_json_string({**self.settings.as_json(), "bucket": self.bucket.bucket_name})
        environment = {ENV_SETTINGS: settings_json, **({ENV_ICEBERG: iceberg} if iceberg is not None else {})}
        function = runtime_function(
            self,
            "Function",
            handler="cdk_ts_runtime.handlers.compaction_partition.handler",
            code=compaction_code(),
            description="Compacts one closed DynamoDB stream archive partition to Parquet per queue message",
            environment=environment,
            **({"runtime": runtime.runtime, "architecture": runtime.architecture} if runtime.runtime else {}),
            layers=[lambda_.LayerVersion.from_layer_version_arn(self, "Pyarrow", options.pyarrow_layer_arn),
                    *([options.duckdb_layer] if options.duckdb_layer else []), *options.extra_layers],
            memory_size=options.memory_size,
            timeout=runtime.timeout,
            ephemeral_storage_size=Size.mebibytes(options.ephemeral_storage_mib),
        )
        if runtime.runtime is not None and runtime.runtime.name != LAMBDA_RUNTIME.name:
            Validations.of(function).acknowledge(Acknowledgment(
                id="AwsSolutions-L1",
                reason=f"the function runs on {runtime.runtime.name} because the AWS SDK for pandas layer it uses "
                "for pyarrow is built for that Python (compiled extensions); a layer for a newer Python moves it there",
            ))
        return function

    def _create_catalog(self, database_name: str, raw_table_name: str, database: glue.CfnDatabase | None) -> None:
        settings = self.settings
        self.catalog = CompactedCatalog(
            self, "Catalog", bucket=self.bucket, compacted_prefix=settings.compacted_prefix,
            database_name=database_name, raw_table_name=raw_table_name, columns=settings.columns,
            granularity=settings.granularity, table_name=settings.glue_table, database=database,
        )
        self._grant_glue_partitions(database_name, self.catalog.table_name)

    def _create_schedule(self, schedule: events.Schedule | None, prefix: str) -> events.Rule:
        rule = events.Rule(
            self, "Schedule",
            schedule=schedule or events.Schedule.cron(minute="20"),
            description=f"Compacts closed partitions of s3://.../{prefix} (cdk-ts ArchiveCompaction)",
        )
        rule.add_target(targets.LambdaFunction(
            self.planner_function,
            # the scheduled time, so a retried run decides what is closed as the scheduled one would
            event=events.RuleTargetInput.from_object({"time": events.EventField.time}),
            retry_attempts=8,
            max_event_age=Duration.hours(2),
            dead_letter_queue=self.dead_letter_queue,
        ))
        return rule

    # ---- permissions ----------------------------------------------------------------------------

    def _grant_archive(self, bucket: s3.IBucket, settings: CompactionSettings) -> None:
        raw = bucket.arn_for_objects(f"{settings.prefix}*")
        compacted = bucket.arn_for_objects(f"{settings.compacted_prefix}*")
        self.function.add_to_role_policy(iam.PolicyStatement(
            actions=list(_perms.S3_COMPACTION_RAW_READ_ACTIONS), resources=[raw]))
        self.function.add_to_role_policy(iam.PolicyStatement(
            actions=list(_perms.S3_COMPACTION_WRITE_ACTIONS), resources=[compacted]))
        self.function.add_to_role_policy(iam.PolicyStatement(
            actions=list(_perms.S3_LIST_BUCKET_ACTIONS), resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{settings.prefix}*", f"{settings.compacted_prefix}*"]}},
        ))
        if bucket.encryption_key is not None:
            bucket.encryption_key.grant_encrypt_decrypt(self.function)
        acknowledge_wildcard_resources(
            self.function, self, [raw, compacted],
            f"reads the raw objects under {settings.prefix} (keys per table, day and hour) and writes, reads and "
            f"deletes Parquet generations and manifests under {settings.compacted_prefix} only",
        )

    def _grant_glue_partitions(self, database: str, table: str) -> None:
        stack = stack_of(self)
        self.function.add_to_role_policy(iam.PolicyStatement(
            actions=list(_perms.GLUE_PARTITION_ACTIONS),
            resources=[
                stack.format_arn(service="glue", resource="catalog"),
                stack.format_arn(service="glue", resource="database", resource_name=database),
                stack.format_arn(service="glue", resource="table", resource_name=f"{database}/{table}"),
            ],
        ))

    def _create_iceberg_table(self, options: IcebergOptions, settings: CompactionSettings) -> str:
        # Imported here: aws-cdk-lib's S3 Tables module cost every synth about 0.06 s, and only Iceberg uses it.
        from cdk_ts.archive._s3_tables import iceberg_table

        partitions = ["table", "dt"] + (["hour"] if settings.granularity is Granularity.HOUR else [])
        self.table_bucket, self.iceberg_namespace, self.iceberg_table = iceberg_table(
            self, table_bucket_name=options.table_bucket_name, namespace=options.namespace,
            table_name=options.table_name, fields=iceberg_fields(settings), partitions=partitions,
        )
        region = stack_of(self).region
        return stack_of(self).to_json_string({
            "identifier": f"{options.namespace}.{options.table_name}",
            "catalog": s3_tables_catalog_properties(self.table_bucket.attr_table_bucket_arn, region),
        })

    def _grant_iceberg(self) -> None:
        bucket_arn = self.table_bucket.attr_table_bucket_arn
        tables = f"{bucket_arn}/table/*"
        self.function.add_to_role_policy(iam.PolicyStatement(
            actions=list(_perms.S3_TABLES_COMMIT_ACTIONS),
            resources=[bucket_arn, tables],
        ))
        acknowledge_wildcard_resources(
            self.function, self, [tables],
            "S3 Tables names a table by an ID it chooses at creation (bucket/table/<id>): the grant covers the "
            "tables of this construct's own table bucket",
        )

    # ---- monitoring -----------------------------------------------------------------------------

    def _metrics(self) -> CompactionMetricFactory:
        return CompactionMetricFactory(self.function, self.dead_letter_queue, self.partition_dead_letter_queue,
                                       self.planner_function)

    def metric_dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Runs that failed after Lambda's retries, or schedule events not delivered (queue depth; Maximum)."""
        return self._metrics().dead_letters(**props)

    def metric_errors(self, **props: Any) -> cloudwatch.Metric:
        """Invocations of the compaction function that raised (``AWS/Lambda`` ``Errors``; Sum)."""
        return self._metrics().errors(**props)

    def metric_failed_partitions(self, **props: Any) -> cloudwatch.Metric:
        """Partitions that failed every attempt, waiting in ``partition_dead_letter_queue`` (queue depth; Maximum)."""
        return self._metrics().failed_partitions(**props)

    def metric_partitions_over_envelope(self, **props: Any) -> cloudwatch.Metric:
        """Partitions a plan found above the single-function envelope and did not send (``cdk-ts``; Maximum)."""
        return self._metrics().partitions_over_envelope(**props)

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """One graph: failed runs waiting in the queue, and errors."""
        return compaction_widgets(self.node.id, self._metrics())

    def _create_default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        alarms = create_alarms(self, compaction_alarms(self._metrics()))
        self.dead_letter_alarm = alarms["dead_letter_queue"]
        self.errors_alarm = alarms["errors"]
        self.failed_partitions_alarm = alarms["failed_partitions"]
        self.partitions_over_envelope_alarm = alarms["partitions_over_envelope"]
        return alarms


def iceberg_fields(settings: CompactionSettings) -> list[tuple[str, str, bool]]:
    """The Iceberg table's fields ``(name, Iceberg type, required)``: the compacted columns, then the partitions."""
    fields = [("eventid", "string", True), ("eventname", "string", True), ("sequencenumber", "string", True),
              ("approximatecreationdatetime", "timestamptz", True), ("keys", "string", False),
              ("newimage", "string", False), ("oldimage", "string", False), ("useridentity", "string", False)]
    fields += [(c.name, _ICEBERG_TYPES.get(c.type, c.type), False) for c in settings.columns]
    if settings.granularity is Granularity.DAY:
        fields.append(("hour", "string", True))
    fields += [("table", "string", True), ("dt", "string", True)]
    if settings.granularity is Granularity.HOUR:
        fields.append(("hour", "string", True))
    return fields


def _envelope(options: CompactionOptions, timeout: Duration) -> SingleFunctionEnvelope:
    """The largest partition one invocation takes: the option, else derived from the function's size."""
    if options.max_partition_raw_bytes is not None:
        return SingleFunctionEnvelope(options.max_partition_raw_bytes, "max_partition_raw_bytes")
    return SingleFunctionEnvelope.for_function(
        memory_mib=options.memory_size, timeout_seconds=int(timeout.to_seconds()),
        ephemeral_mib=options.ephemeral_storage_mib, out_of_core=options.duckdb_layer is not None,
    )


class _LayerRuntime(NamedTuple):
    """The function's Python and architecture (None: cdk-ts's own, the layer ARN being a token) and timeout."""

    runtime: lambda_.Runtime | None
    architecture: lambda_.Architecture | None
    timeout: Duration


def _checked(
    scope: Construct, construct_id: str, bucket: s3.IBucket, prefix: str, options: CompactionOptions,
    database: str | None, raw_table: str | None, raw_retention: Duration | None,
) -> tuple[CompactionSettings, _LayerRuntime]:
    """The run's settings and the function's runtime, or a ValueError naming every bad option at once."""
    problems = Problems(scope, construct_id)
    settings = problems.collect(lambda: _settings(bucket, prefix, options, database, raw_table, raw_retention))
    check_iam_text(problems, "prefix", prefix)
    check_iam_text(problems, "compacted_prefix", options.compacted_prefix)
    runtime, architecture = _runtime_for_layer(problems, options.pyarrow_layer_arn)
    timeout = options.timeout or Duration.minutes(15)
    problems.check(
        timeout.to_seconds() <= 900, lambda: f"timeout {timeout.to_human_string()} must be at most 15 minutes"
    )
    problems.check(
        (database is None) == (raw_table is None),
        "glue_database_name and raw_glue_table_name go together (the view reads the raw table's view)",
    )
    if options.iceberg is not None:
        problems.check(
            bool(re.fullmatch(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]", options.iceberg.table_bucket_name)),
            f"iceberg table_bucket_name {options.iceberg.table_bucket_name!r} must be 3-63 of [a-z0-9-]",
        )
    problems.raise_if_any()
    return settings, _LayerRuntime(runtime, architecture, timeout)


def _settings(
    bucket: s3.IBucket, prefix: str, options: CompactionOptions, database: str | None, raw_table: str | None,
    raw_retention: Duration | None = None,
) -> CompactionSettings:
    name = bucket.bucket_name
    return CompactionSettings(
        # a deploy-time bucket name is filled in by CloudFormation in the environment variable
        bucket=name if not Token.is_unresolved(name) else "deploy-time",
        prefix=prefix,
        compacted_prefix=options.compacted_prefix or f"parquet/{prefix}",
        granularity=Granularity(options.granularity),
        grace=timedelta(seconds=(options.grace or Duration.hours(1)).to_seconds()),
        lookback=timedelta(seconds=(options.lookback or Duration.days(3)).to_seconds()),
        columns=tuple(options.columns),
        target_file_bytes=options.target_file_size_mib * 1024 * 1024,
        row_group_rows=options.row_group_rows,
        glue_database=database if options.iceberg is None else None,
        glue_table=f"{raw_table}_compacted" if database and options.iceberg is None else None,
        raw_retention=timedelta(seconds=raw_retention.to_seconds()) if raw_retention else None,
    )


def _runtime_for_layer(problems: Problems, arn: str) -> tuple[lambda_.Runtime | None, lambda_.Architecture | None]:
    """The Python and architecture an AWS SDK for pandas layer is built for (its compiled pyarrow needs them).

    The layer's name is read even when the ARN holds deploy-time values (``Stack.region``); an ARN that is
    a token as a whole cannot be checked, and the function keeps cdk-ts's runtime and architecture.
    """
    match = _PANDAS_LAYER.search(arn)
    if match is None and Token.is_unresolved(arn):
        return None, None
    if not problems.check(
        match is not None and arn.startswith("arn:"),
        f"pyarrow_layer_arn {arn!r} is not an AWS SDK for pandas layer version ARN "
        "(arn:aws:lambda:<region>:336392948345:layer:AWSSDKPandas-Python3NN[-Arm64]:<version>, see "
        "https://aws-sdk-pandas.readthedocs.io/en/stable/layers.html)",
    ):
        return None, None
    minor = int(match["minor"])
    if not problems.check(
        minor >= MIN_RUNTIME_MINOR and hasattr(lambda_.Runtime, f"PYTHON_3_{minor}"),
        f"pyarrow_layer_arn is built for Python 3.{minor}; the compaction needs 3.{MIN_RUNTIME_MINOR} or newer "
        "that this aws-cdk-lib knows",
    ):
        return None, None
    architecture = lambda_.Architecture.ARM_64 if match["arm"] else lambda_.Architecture.X86_64
    return getattr(lambda_.Runtime, f"PYTHON_3_{minor}"), architecture

