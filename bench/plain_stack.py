"""The sample app's stack written by hand with plain aws-cdk-lib: the baseline of ``bench.synth``.

Same construct IDs, so the same logical IDs; ``tests/snapshots/test_plain_baseline.py`` checks that
it synthesizes the same template as ``app.SampleStack`` (asset hashes aside), so the synth-time
ratio compares equal work. It imports nothing from ``cdk_ts`` or ``lambdas``: what a team would
write without the library. Function code comes from ``code_dir`` (a directory holding ``lambdas/``).
"""

from __future__ import annotations

import hashlib

from aws_cdk import App, ArnFormat, CfnOutput, CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

PREFIX = "telemetry"
LAYOUT = {
    "CDK_TS_TABLE_PREFIX": PREFIX,
    "CDK_TS_PERIOD": "daily",
    "CDK_TS_PARTITION_KEY": "pk",
    "CDK_TS_PARTITION_KEY_TYPE": "N",
    "CDK_TS_SORT_KEY": "sk",
    "CDK_TS_SORT_KEY_TYPE": "N",
    "CDK_TS_TIME_UNIT": "ms",
}
ARCHIVER_DESCRIPTION = "Archives DynamoDB stream records to S3 as gzip JSON Lines"
GLUE_COLUMNS = (
    "eventid",
    "eventname",
    "sequencenumber",
    "approximatecreationdatetime",
    "source_table",
    "keys",
    "newimage",
    "oldimage",
    "useridentity",
)
FIVE_MINUTES = Duration.minutes(5)


def _function(
    scope: Construct, construct_id: str, code: lambda_.Code, handler: str, description: str, **props
) -> lambda_.Function:
    log_group = logs.LogGroup(
        scope, f"{construct_id}Logs", retention=logs.RetentionDays.THREE_MONTHS, removal_policy=RemovalPolicy.DESTROY
    )
    role = iam.Role(
        scope,
        f"{construct_id}Role",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=f"Execution role of {description}",
    )
    log_group.grant_write(role)
    return lambda_.Function(
        scope,
        construct_id,
        runtime=lambda_.Runtime.PYTHON_3_14,
        architecture=lambda_.Architecture.ARM_64,
        handler=handler,
        code=code,
        description=description,
        log_group=log_group,
        role=role,
        logging_format=lambda_.LoggingFormat.JSON,
        **props,
    )


def _table_arn(stack: Stack, name: str) -> str:
    return stack.format_arn(service="dynamodb", resource="table", resource_name=name)


def _alarm(scope: Construct, construct_id: str, metric: cloudwatch.IMetric, description: str, **props):
    return cloudwatch.Alarm(
        scope,
        construct_id,
        metric=metric,
        alarm_description=description,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        **{"threshold": 0, "evaluation_periods": 1, **props},
    )


class PlainSampleStack(Stack):
    """Rotating tables, device log, audit log with shard metadata, two stream archivers, ingest, dashboard."""

    def __init__(self, scope: Construct, construct_id: str, *, code_dir: str, **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)
        code = lambda_.Code.from_asset(code_dir)
        private = {
            "encryption": s3.BucketEncryption.S3_MANAGED,
            "block_public_access": s3.BlockPublicAccess.BLOCK_ALL,
            "enforce_ssl": True,
            "removal_policy": RemovalPolicy.RETAIN,
        }
        access_logs = s3.Bucket(
            self,
            "AccessLogs",
            object_ownership=s3.ObjectOwnership.OBJECT_WRITER,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
            **private,
        )
        archive = s3.Bucket(
            self,
            "Archive",
            versioned=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=access_logs,
            server_access_logs_prefix="archive/",
            **private,
        )

        telemetry = Construct(self, "Telemetry")
        config = {
            "current": {"read_capacity": 300, "write_capacity": 1000, "on_demand": False, "table_class": "STANDARD"},
            "previous": {"on_demand": True, "table_class": "STANDARD_INFREQUENT_ACCESS"},
            "older": {"on_demand": True, "table_class": "STANDARD_INFREQUENT_ACCESS"},
            "retain_periods": 14,
            "archive_bucket": archive.bucket_name,
            "archive_prefix": "exports/",
            "create_lead_seconds": 900,
            "point_in_time_recovery": True,
            "ttl_attribute": "expires_at",
            "stream_view_type": "NEW_AND_OLD_IMAGES",
            "deletion_protection": False,
            "tags": {},
            "max_concurrency": 8,
            "max_changes_per_run": 50,
            "wait_for_new_tables_seconds": 60,
            "metric_namespace": "cdk-ts",
        }
        config_json = self.to_json_string(config)
        rotation = _function(
            telemetry,
            "Rotation",
            code,
            "cdk_ts_runtime.handlers.rotation.handler",
            f"Rotates the daily DynamoDB tables {PREFIX}_*",
            environment={**LAYOUT, "CDK_TS_ROTATION_CONFIG": config_json},
            timeout=Duration.minutes(5),
            memory_size=256,
        )
        tables = _table_arn(self, f"{PREFIX}_*")
        for actions, resources, conditions in (
            (
                [
                    "dynamodb:CreateTable",
                    "dynamodb:UpdateTable",
                    "dynamodb:DeleteTable",
                    "dynamodb:DescribeTable",
                    "dynamodb:TagResource",
                    "dynamodb:DescribeContinuousBackups",
                    "dynamodb:UpdateContinuousBackups",
                    "dynamodb:DescribeTimeToLive",
                    "dynamodb:UpdateTimeToLive",
                    "dynamodb:ExportTableToPointInTime",
                ],
                [tables],
                None,
            ),
            (["dynamodb:DescribeExport"], [_table_arn(self, f"{PREFIX}_*/export/*")], None),
            (["dynamodb:ListTables", "dynamodb:ListExports"], ["*"], None),
            (["cloudwatch:PutMetricData"], ["*"], {"StringEquals": {"cloudwatch:namespace": "cdk-ts"}}),
            (
                ["s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl"],
                [archive.arn_for_objects(f"exports/{PREFIX}_*")],
                None,
            ),
        ):
            rotation.add_to_role_policy(
                iam.PolicyStatement(actions=actions, resources=resources, conditions=conditions)
            )
        for construct_id, operation, schedule in (
            ("CreateNew", "create_new", events.Schedule.cron(minute="45", hour="23")),
            ("ResizeOld", "resize_old", events.Schedule.cron(minute="15", hour="0")),
            ("Reconcile", "reconcile", events.Schedule.rate(Duration.hours(1))),
        ):
            rule = events.Rule(
                telemetry, construct_id, schedule=schedule, description=f"{operation} for the daily tables {PREFIX}_*"
            )
            rule.add_target(
                targets.LambdaFunction(
                    rotation,
                    event=events.RuleTargetInput.from_object({"Operation": operation, "time": events.EventField.time}),
                    retry_attempts=8,
                    max_event_age=Duration.hours(2),
                )
            )
        config_hash = hashlib.sha256(str(self.resolve(config_json)).encode()).hexdigest()[:16]
        CustomResource(
            telemetry,
            "DeployTimeReconcile",
            service_token=rotation.function_arn,
            resource_type="Custom::CdkTsRotation",
            properties={"Layout": LAYOUT, "ConfigHash": config_hash},
        )

        device_log_scope = Construct(self, "DeviceLog")
        string = dynamodb.AttributeType.STRING
        device_log = dynamodb.Table(
            device_log_scope,
            "Table",
            partition_key=dynamodb.Attribute(name="DeviceID", type=string),
            sort_key=dynamodb.Attribute(name="State#Date", type=string),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.DEFAULT,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            removal_policy=RemovalPolicy.RETAIN,
            deletion_protection=False,
        )
        for index, partition, sort in (("GSI1", "Operator", "Date"), ("GSI2", "EscalatedTo", "State#Date")):
            device_log.add_global_secondary_index(
                index_name=index,
                partition_key=dynamodb.Attribute(name=partition, type=string),
                sort_key=dynamodb.Attribute(name=sort, type=string),
                projection_type=dynamodb.ProjectionType.ALL,
            )

        audit_log = dynamodb.Table(
            self,
            "AuditLog",
            partition_key=dynamodb.Attribute(name="file_path", type=string),
            sort_key=dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )
        audit_shards = dynamodb.Table(
            Construct(self, "AuditLogShards"),
            "Table",
            partition_key=dynamodb.Attribute(name="file_path", type=string),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.DEFAULT,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            removal_policy=RemovalPolicy.RETAIN,
        )

        telemetry_archiver, telemetry_function, telemetry_dlq = self._archiver(
            "TelemetryArchiver", code, archive, "cdc/telemetry/"
        )
        telemetry_function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                resources=[_table_arn(self, f"{PREFIX}_*/stream/*")],
            )
        )
        telemetry_function.add_to_role_policy(iam.PolicyStatement(actions=["dynamodb:ListStreams"], resources=["*"]))
        telemetry_dlq.grant_send_messages(telemetry_function)
        consumer = {
            "function_name": telemetry_function.function_arn,
            "batch_size": 1000,
            "maximum_batching_window_seconds": 60,
            "starting_position": "TRIM_HORIZON",
            "maximum_retry_attempts": 10,
            "maximum_record_age_seconds": 86400,
            "bisect_batch_on_function_error": True,
            "on_failure_destination_arn": telemetry_dlq.queue_arn,
            "filter_patterns": [],
        }
        rotation.add_environment("CDK_TS_STREAM_CONSUMER", self.to_json_string(consumer))
        rotation.add_to_role_policy(
            iam.PolicyStatement(
                actions=[
                    "lambda:CreateEventSourceMapping",
                    "lambda:DeleteEventSourceMapping",
                    "lambda:GetEventSourceMapping",
                    "lambda:UpdateEventSourceMapping",
                ],
                resources=[
                    self.format_arn(
                        service="lambda",
                        resource="event-source-mapping",
                        resource_name="*",
                        arn_format=ArnFormat.COLON_RESOURCE_NAME,
                    )
                ],
                conditions={"StringEquals": {"lambda:FunctionArn": telemetry_function.function_arn}},
            )
        )
        rotation.add_to_role_policy(iam.PolicyStatement(actions=["lambda:ListEventSourceMappings"], resources=["*"]))
        self._glue_catalog(telemetry_archiver, archive, "cdc/telemetry/")

        _, device_log_function, device_log_dlq = self._archiver("DeviceLogArchiver", code, archive, "cdc/device-log/")
        device_log_function.add_event_source(
            event_sources.DynamoEventSource(
                device_log,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=1000,
                max_batching_window=Duration.seconds(60),
                bisect_batch_on_error=True,
                retry_attempts=10,
                max_record_age=Duration.hours(24),
                report_batch_item_failures=True,
                on_failure=event_sources.SqsDlq(device_log_dlq),
            )
        )

        ingest = _function(
            self,
            "Ingest",
            code,
            "lambdas.ingest.handler",
            "Example ingest: multi-measure readings into the rotating telemetry tables",
            environment={},
            timeout=Duration.minutes(1),
            memory_size=256,
        )
        for name, value in LAYOUT.items():
            ingest.add_environment(name, value)
        ingest.add_to_role_policy(
            iam.PolicyStatement(
                actions=[
                    "dynamodb:BatchGetItem",
                    "dynamodb:GetItem",
                    "dynamodb:Query",
                    "dynamodb:Scan",
                    "dynamodb:ConditionCheckItem",
                    "dynamodb:DescribeTable",
                    "dynamodb:BatchWriteItem",
                    "dynamodb:PutItem",
                    "dynamodb:UpdateItem",
                    "dynamodb:DeleteItem",
                ],
                resources=[tables, _table_arn(self, f"{PREFIX}_*/index/*")],
            )
        )

        self._monitoring(rotation, [telemetry_function, device_log_function], [telemetry_dlq, device_log_dlq])
        for name, value in (
            ("TelemetryTablePrefix", PREFIX),
            ("RotationFunctionName", rotation.function_name),
            ("IngestFunctionName", ingest.function_name),
            ("DeviceLogTableName", device_log.table_name),
            ("AuditLogTableName", audit_log.table_name),
            ("AuditLogShardsTableName", audit_shards.table_name),
            ("ArchiveBucketName", archive.bucket_name),
            ("TelemetryArchiverFunctionName", telemetry_function.function_name),
            ("DeviceLogArchiverFunctionName", device_log_function.function_name),
        ):
            CfnOutput(self, name, value=value)

    def _archiver(
        self, construct_id: str, code: lambda_.Code, bucket: s3.Bucket, prefix: str
    ) -> tuple[Construct, lambda_.Function, sqs.Queue]:
        scope = Construct(self, construct_id)
        dlq = sqs.Queue(
            scope,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        function = _function(
            scope,
            "Function",
            code,
            "cdk_ts_runtime.handlers.archiver.handler",
            ARCHIVER_DESCRIPTION,
            environment={"ARCHIVE_BUCKET": bucket.bucket_name, "ARCHIVE_PREFIX": prefix},
            timeout=Duration.minutes(2),
            memory_size=512,
        )
        function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject", "s3:AbortMultipartUpload"], resources=[bucket.arn_for_objects(f"{prefix}*")]
            )
        )
        _alarm(
            scope,
            "IteratorAgeAlarm",
            function.metric("IteratorAge", statistic="Maximum", period=FIVE_MINUTES),
            "Stream records wait too long to be archived (archiver behind or failing)",
            threshold=Duration.hours(1).to_milliseconds(),
            evaluation_periods=3,
        )
        _alarm(
            scope,
            "DeadLetterQueueAlarm",
            dlq.metric_approximate_number_of_messages_visible(statistic="Maximum", period=FIVE_MINUTES),
            "Stream batches gave up and went to the dead-letter queue: records need replay",
        )
        _alarm(
            scope,
            "ErrorsAlarm",
            function.metric_errors(statistic="Sum", period=FIVE_MINUTES),
            "The archiver function raised errors",
        )
        return scope, function, dlq

    def _glue_catalog(self, scope: Construct, bucket: s3.Bucket, prefix: str) -> None:
        database = glue.CfnDatabase(
            scope,
            "GlueDatabase",
            catalog_id=self.account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(
                name="cdk_ts_archive", description="DynamoDB stream archive (cdk-ts StreamArchiver)"
            ),
        )
        location = f"s3://{bucket.bucket_name}/{prefix}"
        string_column = [glue.CfnTable.ColumnProperty(name=n, type="string") for n in GLUE_COLUMNS]
        table = glue.CfnTable(
            scope,
            "GlueTable",
            catalog_id=self.account,
            database_name="cdk_ts_archive",
            table_input=glue.CfnTable.TableInputProperty(
                name="stream_archive",
                table_type="EXTERNAL_TABLE",
                partition_keys=[glue.CfnTable.ColumnProperty(name=n, type="string") for n in ("table", "dt", "hour")],
                parameters={
                    "classification": "json",
                    "compressionType": "gzip",
                    "projection.enabled": "true",
                    "projection.table.type": "injected",
                    "projection.dt.type": "date",
                    "projection.dt.format": "yyyy-MM-dd",
                    "projection.dt.range": "2020-01-01,NOW",
                    "projection.dt.interval": "1",
                    "projection.dt.interval.unit": "DAYS",
                    "projection.hour.type": "integer",
                    "projection.hour.range": "0,23",
                    "projection.hour.digits": "2",
                    "storage.location.template": f"{location}table=${{table}}/dt=${{dt}}/hour=${{hour}}/",
                },
                storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
                    location=location,
                    columns=string_column,
                    input_format="org.apache.hadoop.mapred.TextInputFormat",
                    output_format="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                    serde_info=glue.CfnTable.SerdeInfoProperty(
                        serialization_library="org.openx.data.jsonserde.JsonSerDe",
                        parameters={"mapping.source_table": "table", "case.insensitive": "true"},
                    ),
                ),
            ),
        )
        table.add_resource_dependency(database)

    def _monitoring(
        self, rotation: lambda_.Function, archivers: list[lambda_.Function], queues: list[sqs.Queue]
    ) -> None:
        next_table_missing = cloudwatch.Metric(
            namespace="cdk-ts",
            metric_name="NextPeriodTableMissing",
            dimensions_map={"TablePrefix": PREFIX},
            statistic="Maximum",
            period=FIVE_MINUTES,
        )
        _alarm(
            self,
            "RotationFailuresAlarm",
            rotation.metric_errors(statistic="Sum", period=FIVE_MINUTES),
            "The table rotation function failed (create_new, resize_old or reconcile)",
        )
        _alarm(
            self,
            "NextTableMissingAlarm",
            next_table_missing,
            "Inside the lead window the next period's table does not exist yet",
        )
        _alarm(
            self,
            "ThrottledRequestsAlarm",
            cloudwatch.MathExpression(
                expression='SELECT SUM(ThrottledRequests) FROM SCHEMA("AWS/DynamoDB", Operation, TableName)',
                using_metrics={},
                period=FIVE_MINUTES,
                label="DynamoDB throttled requests",
            ),
            "DynamoDB throttled requests (current period table among them)",
            evaluation_periods=3,
        )
        dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=f"{self.stack_name}-operations")
        dashboard.add_widgets(
            cloudwatch.TextWidget(
                markdown=f"## {self.stack_name}\nAlarms: archiver_dead_letters, archiver_iterator_age, "
                "device_log_archiver_dead_letters, device_log_archiver_iterator_age, next_table_missing, "
                f"rotation_failures, throttles. Period tables: `{PREFIX}_*` (daily).",
                width=24,
                height=2,
            )
        )
        search = (
            f'SEARCH(\'{{AWS/DynamoDB,TableName,Operation}} MetricName="ThrottledRequests" '
            f"TableName=\"{PREFIX}_\"', 'Sum', 300)"
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title=f"Throttled requests, {PREFIX}_* period tables",
                left=[
                    cloudwatch.MathExpression(
                        expression=search, using_metrics={}, label="throttled", period=FIVE_MINUTES
                    )
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Rotation: errors and next table missing",
                left=[rotation.metric_errors(period=FIVE_MINUTES), next_table_missing],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Archivers: iterator age (ms)",
                left=[f.metric("IteratorAge", statistic="Maximum", period=FIVE_MINUTES) for f in archivers],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Archivers: dead-letter queue depth",
                left=[q.metric_approximate_number_of_messages_visible(period=FIVE_MINUTES) for q in queues],
                width=12,
            ),
        )


def build_plain_app(app: App, code_dir: str) -> App:
    """The plain stack under the sample app's stack name and description."""
    PlainSampleStack(
        app,
        "CdkTsSample",
        code_dir=code_dir,
        description="cdk-ts sample: rotating DynamoDB time-series tables and the patterns around them",
    )
    return app
