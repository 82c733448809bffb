#!/usr/bin/env python3
"""The cdk-ts sample app: the library's constructs composed into one stack, checked by cdk-nag.

Context (cdk.json or ``-c key=value``): ``table_prefix``, ``period``, ``retain_periods``,
``alarm_email`` (an address subscribed to the alarm topic; none by default), and ``pandas_layer_arn``
(the AWS SDK for pandas layer the archive compaction takes pyarrow from; default :data:`PANDAS_LAYER`
in the stack's Region).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import App, CfnOutput, Duration, Environment, RemovalPolicy, Stack, Validations  # noqa: E402
from aws_cdk import aws_dynamodb as dynamodb  # noqa: E402
from aws_cdk import aws_iam as iam  # noqa: E402
from aws_cdk import aws_kms as kms  # noqa: E402
from aws_cdk import aws_lambda as lambda_  # noqa: E402
from aws_cdk import aws_logs as logs  # noqa: E402
from aws_cdk import aws_s3 as s3  # noqa: E402
from aws_cdk import aws_sns as sns  # noqa: E402
from aws_cdk import aws_sns_subscriptions as subscriptions  # noqa: E402
from constructs import Construct  # noqa: E402

from cdk_ts import (  # noqa: E402
    LAMBDA_RUNTIME,
    ColumnSpec,
    CompactionOptions,
    DeviceLogTable,
    MonitoringDashboard,
    RotatingTimeSeriesTables,
    RotationPeriod,
    ShardMetadataTable,
    StreamArchiver,
    access_logs_bucket,
    secure_bucket,
)

STACK_NAME = "CdkTsSample"
EXAMPLES = Path(__file__).resolve().parent / "examples"
#: The AWS-managed AWS SDK for pandas layer (pyarrow inside) for Python 3.14 on Arm64, in the stack's Region. Its
#: version is release 3.16.1's in the table https://aws-sdk-pandas.readthedocs.io/en/stable/layers.html; versions
#: differ by Region and release: check yours there and pass it with ``-c pandas_layer_arn=...``.
PANDAS_LAYER = "arn:aws:lambda:{region}:336392948345:layer:AWSSDKPandas-Python314-Arm64:6"
#: The telemetry items' typed columns in the compacted layer (the key attributes and the scenario's measures).
TELEMETRY_COLUMNS = (
    ColumnSpec("device_id", "bigint", attribute="pk"),
    ColumnSpec("ts_ms", "bigint", attribute="sk"),
    ColumnSpec("temperature_c", "decimal(6,2)"),
    ColumnSpec("humidity_pct", "decimal(5,2)"),
)


class SampleStack(Stack):
    """Rotating telemetry tables archived to S3, the device-status log, and the secure buckets they need."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        table_prefix: str = "telemetry",
        period: RotationPeriod | str = RotationPeriod.DAILY,
        retain_periods: int = 14,
        alarm_email: str | None = None,
        pandas_layer_arn: str | None = None,
        **kwargs,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.alarm_topic = self._alarm_topic(alarm_email)
        access_logs = access_logs_bucket(self, "AccessLogs")
        self.archive_bucket = self._archive_bucket(access_logs)
        self.telemetry = self._telemetry_tables(table_prefix, period, retain_periods)
        self.device_log = DeviceLogTable(self, "DeviceLog", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        self.audit_log = self._audit_log()
        self.audit_shards = ShardMetadataTable(self, "AuditLogShards", main_table=self.audit_log)
        self.telemetry_archiver = self._telemetry_archiver(access_logs, pandas_layer_arn)
        self.device_log_archiver = self._device_log_archiver(access_logs)
        self.ingest = self._ingest_function()
        # layout env vars, write grant and the cdk_ts_runtime layer; the grant's IAM5 findings (the
        # telemetry_????-??-?? pattern) are acknowledged on the ingest role: period tables do not exist at deploy
        self.telemetry.bind(self.ingest, acknowledge_nag_findings=True)
        self.monitoring = self._monitoring()
        self._add_outputs()

    def _archive_bucket(self, access_logs: s3.IBucket) -> s3.Bucket:
        """The secure bucket both archivers write to, its access logged under ``archive/``."""
        return secure_bucket(
            self,
            "Archive",
            server_access_logs_bucket=access_logs,
            server_access_logs_prefix="archive/",
            # Versioned: a retried batch overwrites its object, and every overwrite keeps a version; expire them.
            lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=Duration.days(30))],
        )

    def _telemetry_tables(
        self, table_prefix: str, period: RotationPeriod | str, retain_periods: int
    ) -> RotatingTimeSeriesTables:
        """The rotating telemetry tables: streamed (for the archiver), items expiring at ``expires_at``."""
        return RotatingTimeSeriesTables(
            self,
            "Telemetry",
            table_prefix=table_prefix,
            period=period,
            retain_periods=retain_periods,
            archive_bucket=self.archive_bucket,
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            time_to_live_attribute="expires_at",
        )

    def _audit_log(self) -> dynamodb.Table:
        """A plain on-demand table (file path + timestamp) whose hot keys :class:`ShardMetadataTable` spreads."""
        return dynamodb.Table(
            self,
            "AuditLog",
            partition_key=dynamodb.Attribute(name="file_path", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )

    def _telemetry_archiver(self, access_logs: s3.IBucket, pandas_layer_arn: str | None) -> StreamArchiver:
        """The telemetry stream archived under ``cdc/telemetry/``, catalogued in Glue and compacted to Parquet."""
        return StreamArchiver(
            self,
            "TelemetryArchiver",
            source=self.telemetry,
            bucket=self.archive_bucket,
            prefix="cdc/telemetry/",
            glue_database="cdk_ts_archive",
            create_glue_database=True,
            access_logs_bucket=access_logs,
            # closed hours rewritten as Parquet, and the Glue view over both layers (telemetry_archiver_all)
            compaction=CompactionOptions(
                pyarrow_layer_arn=pandas_layer_arn or PANDAS_LAYER.format(region=self.region),
                columns=TELEMETRY_COLUMNS,
            ),
        )

    def _device_log_archiver(self, access_logs: s3.IBucket) -> StreamArchiver:
        """The device-status log's stream archived under ``cdc/device-log/`` (JSON only, no compaction)."""
        return StreamArchiver(
            self,
            "DeviceLogArchiver",
            source=self.device_log,
            bucket=self.archive_bucket,
            prefix="cdc/device-log/",
            access_logs_bucket=access_logs,
        )

    def _add_outputs(self) -> None:
        """The names the scenario, the runbooks and ``cdk-ts status`` look up in the stack's outputs."""
        for name, value in (
            ("TelemetryTablePrefix", self.telemetry.table_prefix),
            ("RotationFunctionName", self.telemetry.function.function_name),
            ("IngestFunctionName", self.ingest.function_name),
            ("DeviceLogTableName", self.device_log.table.table_name),
            ("AuditLogTableName", self.audit_log.table_name),
            ("AuditLogShardsTableName", self.audit_shards.table.table_name),
            ("ArchiveBucketName", self.archive_bucket.bucket_name),
            ("TelemetryArchiverFunctionName", self.telemetry_archiver.function.function_name),
            ("TelemetryCompactionFunctionName", self.telemetry_archiver.compaction.function.function_name),
            ("DeviceLogArchiverFunctionName", self.device_log_archiver.function.function_name),
            ("TelemetryArchiverFailureBucketName", self.telemetry_archiver.failure_bucket.bucket_name),
            ("DeviceLogArchiverFailureBucketName", self.device_log_archiver.failure_bucket.bucket_name),
        ):
            CfnOutput(self, name, value=value)

    def _alarm_topic(self, email: str | None) -> sns.Topic:
        """One encrypted, SSL-only SNS topic every alarm of the app notifies; ``email`` is subscribed to it."""
        key = kms.Key(self, "AlarmTopicKey", enable_key_rotation=True, description="Encrypts the alarm topic")
        # CloudWatch publishes alarm notifications to an encrypted topic only with a key it may use.
        key.add_to_resource_policy(iam.PolicyStatement(
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"],
        ))
        topic = sns.Topic(
            self, "AlarmTopic", master_key=key, enforce_ssl=True, display_name=f"{self.stack_name} alarms"
        )
        if email:
            topic.add_subscription(subscriptions.EmailSubscription(email))
        return topic

    def _ingest_function(self) -> lambda_.Function:
        """The example ingest function: the app's own code (examples/ingest), cdk_ts_runtime from the layer."""
        log_group = logs.LogGroup(
            self, "IngestLogs", retention=logs.RetentionDays.THREE_MONTHS, removal_policy=RemovalPolicy.DESTROY
        )
        role = iam.Role(self, "IngestRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        log_group.grant_write(role)
        return lambda_.Function(
            self,
            "Ingest",
            runtime=LAMBDA_RUNTIME,
            architecture=lambda_.Architecture.ARM_64,
            handler="ingest.handler",
            code=lambda_.Code.from_asset(str(EXAMPLES / "ingest"), exclude=["__pycache__"]),
            description="Example ingest: multi-measure readings into the rotating telemetry tables",
            log_group=log_group,
            logging_format=lambda_.LoggingFormat.JSON,
            role=role,
        )

    def _monitoring(self) -> MonitoringDashboard:
        """The recommended alarms of every construct, all notifying the alarm topic, and one dashboard."""
        compaction = self.telemetry_archiver.compaction
        alarmed = (self.telemetry, self.telemetry_archiver, compaction, self.device_log_archiver)
        for construct in alarmed:
            construct.add_default_alarms(alarm_topic=self.alarm_topic)
        dashboard = MonitoringDashboard(self, "Monitoring", dashboard_name=f"{self.stack_name}-monitoring")
        dashboard.monitor(*alarmed, self.device_log, self.audit_shards)
        return dashboard


def build_app(app: App | None = None, *, checks: bool = True) -> App:
    """Create the sample app from the app's context; ``checks`` adds cdk-nag's AwsSolutions pack."""
    app = app or App()
    context = app.node.try_get_context
    SampleStack(
        app,
        STACK_NAME,
        table_prefix=context("table_prefix") or "telemetry",
        period=context("period") or "daily",
        retain_periods=int(context("retain_periods") or 14),
        alarm_email=context("alarm_email"),
        pandas_layer_arn=context("pandas_layer_arn"),
        env=Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")),
        description="cdk-ts sample: rotating DynamoDB time-series tables and the patterns around them",
    )
    if checks:
        # Imported only here: loading cdk-nag (its Python module and its jsii assembly) costs every synth about
        # half a second, and an app built with checks=False (bench.synth, tests) never runs it.
        from cdk_nag import AwsSolutionsChecks

        Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
