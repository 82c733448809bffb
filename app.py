#!/usr/bin/env python3
"""The cdk-ts sample app: the library's constructs composed into one stack, checked by cdk-nag.

Context (cdk.json or ``-c key=value``): ``table_prefix``, ``period``, ``retain_periods``.
"""

from __future__ import annotations

import os

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import App, Environment, RemovalPolicy, Stack, Validations  # noqa: E402
from aws_cdk import aws_dynamodb as dynamodb  # noqa: E402
from cdk_nag import AwsSolutionsChecks  # noqa: E402
from constructs import Construct  # noqa: E402

from cdk_ts import (  # noqa: E402
    DeviceLogTable,
    RotatingTimeSeriesTables,
    RotationPeriod,
    ShardMetadataTable,
    StreamArchiver,
)
from cdk_ts._defaults import access_logs_bucket, secure_bucket  # noqa: E402

STACK_NAME = "CdkTsSample"


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
        **kwargs,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        access_logs = access_logs_bucket(self, "AccessLogs")
        self.archive_bucket = secure_bucket(
            self, "Archive", server_access_logs_bucket=access_logs, server_access_logs_prefix="archive/"
        )
        self.telemetry = RotatingTimeSeriesTables(
            self,
            "Telemetry",
            table_prefix=table_prefix,
            period=period,
            retain_periods=retain_periods,
            archive_bucket=self.archive_bucket,
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            time_to_live_attribute="expires_at",
        )
        self.device_log = DeviceLogTable(self, "DeviceLog", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        self.audit_log = dynamodb.Table(
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
        self.audit_shards = ShardMetadataTable(self, "AuditLogShards", main_table=self.audit_log)
        self.telemetry_archiver = StreamArchiver(
            self,
            "TelemetryArchiver",
            source=self.telemetry,
            bucket=self.archive_bucket,
            prefix="cdc/telemetry/",
            glue_database_name="cdk_ts_archive",
        )
        self.device_log_archiver = StreamArchiver(
            self, "DeviceLogArchiver", source=self.device_log, bucket=self.archive_bucket, prefix="cdc/device-log/"
        )


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
        env=Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")),
        description="cdk-ts sample: rotating DynamoDB time-series tables and the patterns around them",
    )
    if checks:
        Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
