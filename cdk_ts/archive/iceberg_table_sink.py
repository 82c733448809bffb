"""IcebergTableSink: DynamoDB -> Kinesis Data Streams -> Amazon Data Firehose -> an Iceberg table in S3 Tables.

AWS's own columnar path for DynamoDB changes ("Stream Amazon DynamoDB table data to Amazon S3 Tables for
analytics", AWS Database Blog; "Deliver data to Apache Iceberg Tables with Amazon Data Firehose",
https://docs.aws.amazon.com/firehose/latest/dev/apache-iceberg-destination.html). Firehose routes each record
to the table and applies insert, update or delete with the table's unique keys; S3 Tables compacts the files
and expires snapshots itself, so no compaction function runs for a table with this sink.

CloudFormation: ``AWS::KinesisFirehose::DeliveryStream`` with ``IcebergDestinationConfiguration``
(``CatalogConfiguration.CatalogArn`` ``arn:aws:glue:<region>:<account>:catalog/s3tablescatalog/<bucket>``,
``DestinationTableConfigurationList`` with ``UniqueKeys``), ``AWS::S3Tables::TableBucket``/``Namespace``/``Table``,
``AWS::DynamoDB::Table`` ``KinesisStreamSpecification`` (the table's Kinesis streaming destination) and
``AWS::LakeFormation::PrincipalPermissions`` (template reference, AWS CloudFormation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import jsii
from aws_cdk import ArnFormat, Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kinesis as kinesis
from aws_cdk import aws_kinesisfirehose as firehose
from aws_cdk import aws_lakeformation as lakeformation
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from constructs import Construct, IValidation

from cdk_ts import _perms, buckets
from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._assets import compaction_code
from cdk_ts._defaults import runtime_function
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._nag import acknowledge, acknowledge_wildcard_resources
from cdk_ts._validation import Problems
from cdk_ts.archive._s3_tables import iceberg_table
from cdk_ts.archive.compaction import iceberg_fields
from cdk_ts.protocols import HasTable
from cdk_ts_runtime._compaction_plan import PARTITION_NAMES, ColumnSpec, CompactionSettings
from cdk_ts_runtime._firehose_iceberg import ENV_ROUTE, IcebergRoute, SinkMode, partition_columns, unique_keys
from cdk_ts_runtime._inputs import whole

#: S3 Tables table bucket names: 3-63 lower-case letters, digits and hyphens, a letter or digit at each end.
_TABLE_BUCKET = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")
#: Firehose's CloudWatch log stream for Iceberg delivery errors (in the sink's own log group).
LOG_STREAM = "IcebergDelivery"


def sink_fields(mode: SinkMode, columns: Sequence[ColumnSpec]) -> list[tuple[str, str, bool]]:
    """The sink table's fields ``(name, Iceberg type, required)``: the compacted layer's, by hour for every change.

    The same fields :func:`~cdk_ts.archive.compaction.iceberg_fields` gives the compacted layer at hour
    granularity; latest images keep ``table`` of the partition columns (see ``partition_columns``).
    """
    # The bucket name only satisfies CompactionSettings' checks: the fields do not depend on it.
    settings = CompactionSettings(bucket="sink", columns=tuple(columns))
    kept = partition_columns(mode)
    return [f for f in iceberg_fields(settings) if f[0] in kept or f[0] not in PARTITION_NAMES]


class IcebergTableSink(AlarmingConstruct):
    """A DynamoDB table's changes, streamed into an Apache Iceberg table in Amazon S3 Tables by Firehose.

    Creates a Kinesis data stream (unless given) that the source table writes its changes to, an S3 Tables
    table bucket with a namespace and a table of the compacted layer's columns, a transformation function
    (``cdk_ts_runtime.handlers.firehose_iceberg``) that turns each change into a row with Iceberg routing
    metadata, and the Firehose stream with its role, error bucket and log group. Exposes ``stream``,
    ``table_bucket``, ``namespace``, ``table``, ``function``, ``delivery_stream``, ``role``,
    ``error_bucket``, ``log_group`` and ``lake_formation_grant`` (None when not granted here).

    Before deploying, the account must have S3 Tables integrated with AWS analytics services (once per
    Region: "Streaming data to tables with Amazon Data Firehose", Amazon S3 user guide), and the deploying
    role must be a Lake Formation data lake administrator for the grant this construct makes to Firehose's
    role (pass ``lake_formation_grant=False`` and grant it yourself otherwise).

    Monitoring: ``add_default_alarms()`` creates ``data_freshness`` (records older than 15 minutes not yet
    delivered: the best practice of "Implement best practices with CloudWatch Alarms", Firehose developer
    guide), ``failed_rows`` (rows written to the error bucket instead) and ``transform_errors``.

    :param scope: the parent construct.
    :param construct_id: the construct ID.
    :param table_bucket_name: the S3 Tables table bucket to create (3-63 of ``[a-z0-9-]``).
    :param source: the DynamoDB table whose changes are streamed: a ``dynamodb.Table`` of this app (its
        ``KinesisStreamSpecification`` is set to ``stream``, microsecond timestamps) or a construct exposing
        one as ``.table`` (``DeviceLogTable``). Default: None — connect your table yourself
        (``dynamodb.Table(kinesis_stream=sink.stream)``).
    :param namespace: the namespace (database) of the table: 1-255 of ``[a-z0-9_]``.
        Default: ``"archive"``.
    :param table_name: the Iceberg table: 1-255 of ``[a-z0-9_]``.
        Default: ``"changes"``.
    :param mode: ``SinkMode.CHANGES`` (a row per change, inserts only, partitioned like the archive) or
        ``SinkMode.LATEST`` (a row per item, insert/update/delete). Default: ``SinkMode.CHANGES``.
    :param columns: typed columns read from the items, as ``CompactionOptions.columns``.
        Default: none.
    :param kinesis_stream: the data stream the table writes to. Default: None — a new on-demand stream,
        encrypted with the AWS managed key for Kinesis, keeping records 24 hours.
    :param buffering_interval: how long Firehose gathers records before a commit (0-900 seconds).
        Default: None — 300 seconds: fewer, larger files and commits.
    :param buffering_size_mib: how much Firehose gathers before a commit (1-128 MiB).
        Default: 128.
    :param retry_duration: how long Firehose retries a failed commit before writing the rows to the error
        bucket (0-7200 seconds). Default: None — 300 seconds.
    :param error_bucket: where rows Firehose could not deliver and records the function could not transform
        go. Default: None — a new secure bucket (SSE-S3, SSL only, versioned, access logs).
    :param error_prefix: the key prefix of everything Firehose writes to ``error_bucket``; ends with ``/``.
        Default: ``"iceberg-errors/"``.
    :param access_logs_bucket: where the error bucket this construct creates logs its access.
        Default: None — the stack's one access-log bucket.
    :param lake_formation_grant: grant Firehose's role DESCRIBE, SELECT, INSERT, DELETE and ALTER on the
        table in Lake Formation. Default: True.
    :param alarm_topic: create the default alarms now, notifying this topic. Default: None — no alarms
        until ``add_default_alarms`` is called.
    :raises ValueError: naming this construct's path and every problem at once.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        table_bucket_name: str,
        source: dynamodb.Table | HasTable | None = None,
        namespace: str = "archive",
        table_name: str = "changes",
        mode: SinkMode | str = SinkMode.CHANGES,
        columns: Sequence[ColumnSpec | dict[str, Any] | str] = (),
        kinesis_stream: kinesis.IStream | None = None,
        buffering_interval: Duration | None = None,
        buffering_size_mib: int = 128,
        retry_duration: Duration | None = None,
        error_bucket: s3.IBucket | None = None,
        error_prefix: str = "iceberg-errors/",
        access_logs_bucket: s3.IBucket | None = None,
        lake_formation_grant: bool = True,
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        """Create the stream, table, function and Firehose stream; parameters: see the class."""
        problems = Problems(scope, construct_id)
        route = problems.collect(lambda: IcebergRoute(namespace, table_name, mode, tuple(columns)))
        hints = _check_delivery(problems, buffering_interval, buffering_size_mib, retry_duration, error_prefix)
        problems.check(bool(_TABLE_BUCKET.fullmatch(table_bucket_name or "")),
                       f"table_bucket_name {table_bucket_name!r} must be 3-63 of [a-z0-9-], starting and ending "
                       "with a letter or digit")
        source_table = _source_table(problems, source)
        problems.raise_if_any()
        super().__init__(scope, construct_id)
        self.route: IcebergRoute = route
        self.stream = kinesis_stream or kinesis.Stream(
            self, "Stream", stream_mode=kinesis.StreamMode.ON_DEMAND,
            encryption=kinesis.StreamEncryption.MANAGED, retention_period=Duration.hours(24),
        )
        if source_table is not None:
            _stream_changes(source_table, self.stream)
            self.node.add_validation(_NoCompaction(self, source_table))
        self.table_bucket, self.namespace, self.table = iceberg_table(
            self, table_bucket_name=table_bucket_name, namespace=namespace, table_name=table_name,
            fields=sink_fields(route.mode, route.columns), partitions=partition_columns(route.mode),
        )
        self.error_prefix = error_prefix
        self.error_bucket = error_bucket or self._create_error_bucket(access_logs_bucket)
        self.function = runtime_function(
            self, "TransformFunction", handler="cdk_ts_runtime.handlers.firehose_iceberg.handler",
            description="Turns DynamoDB changes into Iceberg rows routed by Firehose",
            environment={ENV_ROUTE: route.to_json()},
            # CPU-bound (about 280 CPU-ms per 1,000 changes, bench/README.md); Lambda allots CPU by memory, so
            # 1 GB runs a batch ~4x sooner than 256 MB for the same GB-seconds
            memory_size=1024,
            code=compaction_code(),  # the transformation types columns with the compaction's own readers
        )
        self.log_group = logs.LogGroup(self, "DeliveryLogs", retention=logs.RetentionDays.THREE_MONTHS,
                                       removal_policy=RemovalPolicy.DESTROY)
        logs.LogStream(self, "DeliveryLogStream", log_group=self.log_group, log_stream_name=LOG_STREAM,
                       removal_policy=RemovalPolicy.DESTROY)
        self.role = self._create_role()
        self.lake_formation_grant = self._grant_lake_formation() if lake_formation_grant else None
        self.delivery_stream = self._create_delivery_stream(hints)
        self.data_freshness_alarm: cloudwatch.Alarm | None = None
        self.failed_rows_alarm: cloudwatch.Alarm | None = None
        self.transform_errors_alarm: cloudwatch.Alarm | None = None
        if alarm_topic is not None:
            self.add_default_alarms(alarm_topic=alarm_topic)

    # ---- steps of the constructor ---------------------------------------------------------------

    def _create_error_bucket(self, access_logs: s3.IBucket | None) -> s3.Bucket:
        return buckets.secure_bucket(
            self, "ErrorBucket",
            server_access_logs_bucket=access_logs or buckets.stack_access_logs_bucket(self),
            server_access_logs_prefix=f"{path_of(self)}/errors/",
            lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=Duration.days(30))],
        )

    @property
    def catalog_arn(self) -> str:
        """The table bucket's Glue catalog: ``arn:aws:glue:<region>:<account>:catalog/s3tablescatalog/<bucket>``."""
        return stack_of(self).format_arn(service="glue", resource="catalog",
                                         resource_name=f"s3tablescatalog/{self.table_bucket.table_bucket_name}")

    def _glue_arns(self) -> list[str]:
        """The catalog, table bucket catalog, database and table Firehose reads and commits through, by name.

        The forms of the S3 Tables federated catalog ("Prerequisites", AWS Glue developer guide:
        ``catalog/s3tablescatalog``, ``database/s3tablescatalog/*/*``, ``table/s3tablescatalog/*/*/*``),
        named for this bucket, namespace and table instead of the guide's wildcards.
        """
        stack, bucket = stack_of(self), self.table_bucket.table_bucket_name
        space, table = self.route.database, self.route.table
        return [
            stack.format_arn(service="glue", resource="catalog"),
            stack.format_arn(service="glue", resource="catalog", resource_name="s3tablescatalog"),
            self.catalog_arn,
            stack.format_arn(service="glue", resource="database", resource_name=f"s3tablescatalog/{bucket}/{space}"),
            stack.format_arn(service="glue", resource="table",
                             resource_name=f"s3tablescatalog/{bucket}/{space}/{table}"),
        ]

    def _create_role(self) -> iam.Role:
        """Firehose's role, statement by statement as "Streaming data to tables with Amazon Data Firehose" lists."""
        role = iam.Role(self, "DeliveryRole", assumed_by=iam.ServicePrincipal("firehose.amazonaws.com"),
                        description=f"Firehose delivery of {path_of(self)} into S3 Tables")
        errors = self.error_bucket.arn_for_objects(f"{self.error_prefix}*")
        stack = stack_of(self)
        statements = [
            (_perms.FIREHOSE_GLUE_ACTIONS, self._glue_arns()),
            (_perms.FIREHOSE_KINESIS_READ_ACTIONS, [self.stream.stream_arn]),
            (_perms.FIREHOSE_ERROR_BUCKET_ACTIONS, [self.error_bucket.bucket_arn]),
            (_perms.FIREHOSE_ERROR_OBJECT_ACTIONS, [errors]),
            (_perms.FIREHOSE_INVOKE_ACTIONS, [self.function.function_arn]),
            (_perms.FIREHOSE_LOG_ACTIONS, [stack.format_arn(
                service="logs", resource="log-group", arn_format=ArnFormat.COLON_RESOURCE_NAME,
                resource_name=f"{self.log_group.log_group_name}:log-stream:{LOG_STREAM}")]),
            (_perms.LAKE_FORMATION_DATA_ACCESS_ACTIONS, ["*"]),
        ]
        for actions, resources in statements:
            role.add_to_policy(iam.PolicyStatement(actions=list(actions), resources=resources))
        if self.stream.encryption_key is not None:
            self.stream.encryption_key.grant_decrypt(role)
        if self.error_bucket.encryption_key is not None:
            self.error_bucket.encryption_key.grant_encrypt_decrypt(role)
        acknowledge(role, "AwsSolutions-IAM5[Resource::*]",
                    "lakeformation:GetDataAccess has no resource-level permissions (its Resource is * in the "
                    "policy of 'Streaming data to tables with Amazon Data Firehose'); Lake Formation's own grant on "
                    "this table decides what the credentials it vends may reach")
        acknowledge_wildcard_resources(
            role, self, [errors],
            f"Firehose names the objects it could not deliver by time and error type under {self.error_prefix} "
            "of the sink's error bucket; the grant covers that prefix only",
        )
        return role

    def _grant_lake_formation(self) -> lakeformation.CfnPrincipalPermissions:
        """Lake Formation permissions for Firehose's role on the table (resource form of "Granting permissions")."""
        account = stack_of(self).account
        grant = lakeformation.CfnPrincipalPermissions(
            self, "LakeFormationGrant",
            principal=lakeformation.CfnPrincipalPermissions.DataLakePrincipalProperty(
                data_lake_principal_identifier=self.role.role_arn),
            resource=lakeformation.CfnPrincipalPermissions.ResourceProperty(
                table=lakeformation.CfnPrincipalPermissions.TableResourceProperty(
                    catalog_id=f"{account}:s3tablescatalog/{self.table_bucket.table_bucket_name}",
                    database_name=self.route.database, name=self.route.table)),
            permissions=list(_perms.FIREHOSE_LAKE_FORMATION_PERMISSIONS),
            permissions_with_grant_option=[],
        )
        grant.node.add_dependency(self.table)
        return grant

    def _create_delivery_stream(self, hints: _DeliveryHints) -> firehose.CfnDeliveryStream:
        delivery = firehose.CfnDeliveryStream
        stream = delivery(
            self, "DeliveryStream",
            delivery_stream_type="KinesisStreamAsSource",
            kinesis_stream_source_configuration=delivery.KinesisStreamSourceConfigurationProperty(
                kinesis_stream_arn=self.stream.stream_arn, role_arn=self.role.role_arn),
            iceberg_destination_configuration=delivery.IcebergDestinationConfigurationProperty(
                role_arn=self.role.role_arn,
                catalog_configuration=delivery.CatalogConfigurationProperty(catalog_arn=self.catalog_arn),
                # AppendOnly: inserts only, and Firehose scales its throughput itself (IcebergDestinationDescription)
                append_only=self.route.mode is SinkMode.CHANGES,
                destination_table_configuration_list=[delivery.DestinationTableConfigurationProperty(
                    destination_database_name=self.route.database, destination_table_name=self.route.table,
                    unique_keys=unique_keys(self.route.mode), s3_error_output_prefix=self.error_prefix)],
                buffering_hints=delivery.BufferingHintsProperty(
                    interval_in_seconds=hints.interval, size_in_m_bs=hints.size_mib),
                retry_options=delivery.RetryOptionsProperty(duration_in_seconds=hints.retry),
                processing_configuration=delivery.ProcessingConfigurationProperty(enabled=True, processors=[
                    delivery.ProcessorProperty(type="Lambda", parameters=[delivery.ProcessorParameterProperty(
                        parameter_name="LambdaArn", parameter_value=self.function.function_arn)])]),
                cloud_watch_logging_options=delivery.CloudWatchLoggingOptionsProperty(
                    enabled=True, log_group_name=self.log_group.log_group_name, log_stream_name=LOG_STREAM),
                s3_backup_mode="FailedDataOnly",
                s3_configuration=delivery.S3DestinationConfigurationProperty(
                    bucket_arn=self.error_bucket.bucket_arn, role_arn=self.role.role_arn,
                    error_output_prefix=self.error_prefix),
            ),
        )
        # Firehose checks the table and its unique keys when the stream is created (Firehose prerequisites),
        # and assumes the role then: both must exist first.
        stream.node.add_dependency(self.table, self.role)
        if self.lake_formation_grant is not None:
            stream.node.add_dependency(self.lake_formation_grant)
        acknowledge(stream, "AwsSolutions-KDF1",
                    "Firehose encrypts at rest only streams whose source is Direct PUT (StartDeliveryStreamEncryption, "
                    "Firehose API reference); this stream reads a Kinesis data stream, which is encrypted with KMS")
        return stream

    # ---- monitoring -----------------------------------------------------------------------------

    def metric(self, name: str, *, statistic: str = "Sum", **props: Any) -> cloudwatch.Metric:
        """A metric of the Firehose stream (``AWS/Firehose``) over five minutes.

        :param name: the metric, e.g. ``DeliveryToIceberg.FailedRowCount`` ("Monitor metrics", Firehose guide).
        :param statistic: the statistic.
            Default: ``"Sum"``.
        :param props: other ``cloudwatch.Metric`` props (``period``, ``label``...).
        """
        return cloudwatch.Metric(
            namespace="AWS/Firehose", metric_name=name, statistic=statistic,
            dimensions_map={"DeliveryStreamName": self.delivery_stream.ref},
            **{"period": Duration.minutes(5), **props},
        )

    def _create_default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        # DeliveryToIceberg.* as "Monitor metrics" (Firehose developer guide) lists them
        self.data_freshness_alarm = self._alarm_above(
            "DataFreshnessAlarm", self.metric("DeliveryToIceberg.DataFreshness", statistic="Maximum"),
            f"{path_of(self)}: records older than 15 minutes are not in the Iceberg table yet", threshold=900)
        self.failed_rows_alarm = self._alarm_above(
            "FailedRowsAlarm", self.metric("DeliveryToIceberg.FailedRowCount"),
            f"{path_of(self)}: rows went to s3://<error bucket>/{self.error_prefix} instead of the table")
        self.transform_errors_alarm = self._alarm_above(
            "TransformErrorsAlarm", self.function.metric_errors(period=Duration.minutes(5), statistic="Sum"),
            f"{path_of(self)}: the transformation function failed; Firehose retries it, then writes the "
            "batch to the error bucket")
        return {"data_freshness": self.data_freshness_alarm, "failed_rows": self.failed_rows_alarm,
                "transform_errors": self.transform_errors_alarm}


@jsii.implements(IValidation)
class _NoCompaction:
    """Refuses a StreamArchiver that compacts the sink's table too: the sink is that table's columnar layer."""

    def __init__(self, sink: Construct, table: dynamodb.CfnTable) -> None:
        self._sink, self._table = sink, table

    def validate(self) -> list[str]:
        """One message per archiver of this stack whose stream mapping reads the table and that has ``compaction``."""
        from cdk_ts.archive.archiver import StreamArchiver  # the archiver imports much of cdk_ts: import when checked

        stream, table = self._table.attr_stream_arn, path_of(self._table.node.scope)
        return [
            f"{path_of(archiver)} compacts {table} while {path_of(self._sink)} streams it into S3 Tables, which "
            "compacts itself: remove compaction= from the archiver"
            for archiver in stack_of(self._sink).node.find_all()
            if isinstance(archiver, StreamArchiver) and archiver.compaction is not None
            and any(isinstance(m, lambda_.CfnEventSourceMapping) and m.event_source_arn == stream
                    for m in archiver.function.node.find_all())
        ]


class _DeliveryHints(NamedTuple):
    """Buffering and retry settings: seconds, MiB, seconds."""

    interval: int
    size_mib: int
    retry: int


def _check_delivery(
    problems: Problems, interval: Duration | None, size_mib: int, retry: Duration | None, prefix: str
) -> _DeliveryHints:
    """The buffering and retry settings (defaults filled in), recording values out of Firehose's ranges."""
    seconds = int((interval or Duration.seconds(300)).to_seconds())
    retry_seconds = int((retry or Duration.seconds(300)).to_seconds())
    problems.check(0 <= seconds <= 900, f"buffering_interval {seconds} s must be 0-900 seconds")
    problems.collect(lambda: whole("buffering_size_mib", size_mib, minimum=1, maximum=128))
    problems.check(0 <= retry_seconds <= 7200, f"retry_duration {retry_seconds} s must be 0-7200 seconds")
    problems.check(bool(prefix) and prefix.endswith("/"), f"error_prefix {prefix!r} must end with '/'")
    return _DeliveryHints(seconds, size_mib, retry_seconds)


def _source_table(problems: Problems, source: object) -> dynamodb.CfnTable | None:
    """The source's ``CfnTable``, recording why its changes cannot be sent to the stream from here."""
    if source is None:
        return None
    table = source.table if isinstance(source, HasTable) else source
    cfn = getattr(getattr(table, "node", None), "default_child", None)
    if not isinstance(table, dynamodb.Table) or not isinstance(cfn, dynamodb.CfnTable):
        where = path_of(table) if isinstance(table, Construct) else repr(table)
        problems.add(f"source {where} is not a dynamodb.Table of this app: connect your table to sink.stream "
                     "yourself (e.g. TableV2 replicas' kinesis_stream) and leave source unset")
        return None
    problems.check(cfn.kinesis_stream_specification is None,
                   f"source {path_of(table)} already streams to a Kinesis data stream: pass it as kinesis_stream=")
    return cfn


def _stream_changes(table: dynamodb.CfnTable, stream: kinesis.IStream) -> None:
    """Have DynamoDB write the table's changes to ``stream``, with microsecond timestamps."""
    table.kinesis_stream_specification = dynamodb.CfnTable.KinesisStreamSpecificationProperty(
        stream_arn=stream.stream_arn, approximate_creation_date_time_precision="MICROSECOND")
