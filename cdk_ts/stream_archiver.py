"""StreamArchiver: DynamoDB Streams -> Lambda -> S3 (gzip JSON Lines, Hive-partitioned), nothing lost."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk_ts._alarms import AlarmActions
from cdk_ts._defaults import access_logs_bucket, runtime_function, secure_bucket
from cdk_ts._nag import acknowledge, acknowledge_wildcard_resources
from cdk_ts_runtime.archiver import ENV_BUCKET, ENV_PREFIX
from cdk_ts_runtime.stream_consumer import StreamConsumer

#: Event pattern for "archive only items that TTL deleted" (``filter_patterns=[TTL_DELETIONS_ONLY]``).
TTL_DELETIONS_ONLY = {
    "eventName": ["REMOVE"],
    "userIdentity": {"type": ["Service"], "principalId": ["dynamodb.amazonaws.com"]},
}


class StreamArchiver(AlarmActions, Construct):
    """Archives a DynamoDB stream to S3 as gzip JSON Lines under ``{prefix}table=/dt=/hour=/``.

    ``source`` is any ``ITable`` with a stream, a ``DeviceLogTable`` or a ``RotatingTimeSeriesTables``
    (whose rotation function then maps every new period table's stream to this archiver). Delivery
    is at least once: failed groups are retried from their first record, a batch that keeps failing
    goes to the dead-letter queue (``dead_letter_queue``), and ``alarms`` watch all of it.

    Exposes ``bucket``, ``function``, ``dead_letter_queue``, ``alarms`` (by name: ``iterator_age``,
    ``dead_letter_queue``, ``errors``; also ``iterator_age_alarm``, ``dead_letter_alarm``,
    ``errors_alarm``) and ``glue_table`` (None without ``glue_database_name``).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        source: Any,
        bucket: s3.IBucket | None = None,
        prefix: str = "dynamodb/",
        batch_size: int = 1000,
        max_batching_window: Duration | None = None,
        retry_attempts: int = 10,
        max_record_age: Duration | None = None,
        filter_patterns: list[dict[str, Any]] | None = None,
        transition_to_infrequent_access_after: Duration | None = None,
        transition_to_glacier_after: Duration | None = None,
        glue_database_name: str | None = None,
        iterator_age_threshold: Duration | None = None,
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        """Create the archiver function, its bucket (unless given), dead-letter queue and alarms.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param source: the table whose stream is archived, an ``ITable`` with a stream, a
            ``DeviceLogTable`` or a ``RotatingTimeSeriesTables`` (every period table's stream, mapped by
            the rotation function as tables are created).
        :param bucket: where the archive is written.
            Default: None — a new bucket with SSE-S3, SSL-only
            access, versioning, server access logs and ``RemovalPolicy.RETAIN``, moving objects to
            Infrequent Access and Glacier Instant Retrieval (see the ``transition_*`` parameters).
        :param prefix: key prefix of every archived object; must end with ``/`` or be empty.
            Default: ``"dynamodb/"``.
        :param batch_size: most records per invocation (1-10000).
            Default: 1000 — with the 60-second window, few large objects.
        :param max_batching_window: how long Lambda gathers records before it invokes the archiver (at most
            300 seconds). Default: None — 60 seconds.
        :param retry_attempts: how often a failing batch is retried (0-10000) before it goes to the
            dead-letter queue. Default: 10.
        :param max_record_age: records older than this go to the dead-letter queue instead of being retried
            (60 seconds to 7 days). Default: None — 24 hours, the stream's retention.
        :param filter_patterns: Lambda event filter patterns; only matching records are archived (e.g.
            ``[TTL_DELETIONS_ONLY]``). Default: None — every change is archived.
        :param transition_to_infrequent_access_after: age at which objects in the bucket this construct
            creates move to S3 Standard-IA (ignored with ``bucket``). Default: None — 30 days.
        :param transition_to_glacier_after: age at which objects in the bucket this construct creates move
            to Glacier Instant Retrieval (ignored with ``bucket``). Default: None — 180 days.
        :param glue_database_name: create a Glue database of this name with a ``stream_archive`` table
            (partition projection over table, day and hour) for Athena. Default: None — no Glue catalog
            entries.
        :param iterator_age_threshold: the iterator-age alarm fires when records wait longer than this to be
            archived. Default: None — 1 hour.
        :param alarm_topic: an SNS topic every alarm of this construct notifies (same as
            ``add_alarm_action(SnsAction(topic))``). Default: None — alarms have no action until
            ``add_alarm_action`` is called.
        :raises ValueError: for limits out of range, a prefix without a trailing ``/`` or a source without a
            stream.
        :raises TypeError: when ``source`` is not a table, ``DeviceLogTable`` or ``RotatingTimeSeriesTables``.
        """
        super().__init__(scope, construct_id)
        self._init_alarm_actions(alarm_topic)
        if not 1 <= batch_size <= 10_000:
            raise ValueError(f"batch_size {batch_size} must be 1-10000 (the DynamoDB Streams limit)")
        if not 0 <= retry_attempts <= 10_000:
            raise ValueError(f"retry_attempts {retry_attempts} must be 0-10000")
        window = max_batching_window or Duration.seconds(60)
        if window.to_seconds() > 300:
            raise ValueError(f"max_batching_window {window.to_human_string()} must be at most 300 seconds")
        age = max_record_age or Duration.hours(24)
        if not 60 <= age.to_seconds() <= 604_800:
            raise ValueError(f"max_record_age {age.to_human_string()} must be 60 seconds to 7 days")
        if prefix and not prefix.endswith("/"):
            raise ValueError(f"prefix {prefix!r} must end with '/' (or be empty)")
        self.prefix = prefix
        self.filter_patterns = list(filter_patterns or [])

        if bucket is None:
            logs = access_logs_bucket(self, "AccessLogs")
            bucket = secure_bucket(
                self,
                "Bucket",
                server_access_logs_bucket=logs,
                server_access_logs_prefix="archive/",
                lifecycle_rules=[
                    s3.LifecycleRule(
                        transitions=[
                            s3.Transition(
                                storage_class=s3.StorageClass.INFREQUENT_ACCESS,
                                transition_after=transition_to_infrequent_access_after or Duration.days(30),
                            ),
                            s3.Transition(
                                storage_class=s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
                                transition_after=transition_to_glacier_after or Duration.days(180),
                            ),
                        ],
                        noncurrent_version_expiration=Duration.days(30),
                    )
                ],
            )
        self.bucket = bucket

        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        acknowledge(
            self.dead_letter_queue,
            "AwsSolutions-SQS3",
            "this queue is the dead-letter destination of the archiver's stream mapping",
        )

        self.function = runtime_function(
            self,
            "Function",
            handler="cdk_ts_runtime.handlers.archiver.handler",
            description="Archives DynamoDB stream records to S3 as gzip JSON Lines",
            environment={ENV_BUCKET: bucket.bucket_name, ENV_PREFIX: prefix},
            timeout=Duration.minutes(2),
            memory_size=512,
        )
        objects = bucket.arn_for_objects(f"{prefix}*")
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["s3:PutObject", "s3:AbortMultipartUpload"], resources=[objects])
        )
        if bucket.encryption_key is not None:
            bucket.encryption_key.grant_encrypt(self.function)
        acknowledge_wildcard_resources(
            self.function, self, [objects], f"the archiver writes one object per table and hour under {prefix}"
        )
        self._connect(source, window, age, retry_attempts, batch_size)

        self.alarms = self._alarms(iterator_age_threshold or Duration.hours(1))
        self.iterator_age_alarm = self.alarms["iterator_age"]
        self.dead_letter_alarm = self.alarms["dead_letter_queue"]
        self.errors_alarm = self.alarms["errors"]
        self.glue_table: glue.CfnTable | None = None
        if glue_database_name:
            self.glue_table = self._glue(glue_database_name)

    # ---- wiring ---------------------------------------------------------------------------------

    def _connect(self, source: Any, window: Duration, age: Duration, retries: int, batch_size: int) -> None:
        if hasattr(source, "add_stream_consumer") and hasattr(source, "table_prefix"):
            self._connect_rotating(source, window, age, retries, batch_size)
            return
        table = getattr(source, "table", source)
        path = getattr(getattr(source, "node", None), "path", repr(source))
        if not hasattr(table, "table_stream_arn"):
            raise TypeError(f"source {path} is not a DynamoDB table, DeviceLogTable or RotatingTimeSeriesTables")
        if table.table_stream_arn is None:
            raise ValueError(
                f"source {path} has no stream: create it with stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES "
                "(or import it with table_stream_arn=...)"
            )
        self.function.add_event_source(
            event_sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=batch_size,
                max_batching_window=window,
                bisect_batch_on_error=True,
                retry_attempts=retries,
                max_record_age=age,
                report_batch_item_failures=True,
                on_failure=event_sources.SqsDlq(self.dead_letter_queue),
                filters=[{"pattern": json.dumps(p)} for p in self.filter_patterns] or None,
            )
        )
        acknowledge(
            self.function, "AwsSolutions-IAM5[Resource::*]", "dynamodb:ListStreams has no resource-level permissions"
        )

    def _connect_rotating(self, source: Any, window: Duration, age: Duration, retries: int, batch_size: int) -> None:
        if source.stream_view_type is None:
            raise ValueError(
                f"source {source.node.path} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES"
            )
        source.grant_stream_read(self.function)
        self.dead_letter_queue.grant_send_messages(self.function)
        source.add_stream_consumer(
            self.function,
            StreamConsumer(
                function_name=self.function.function_arn,
                batch_size=batch_size,
                maximum_batching_window_seconds=int(window.to_seconds()),
                starting_position="TRIM_HORIZON",
                maximum_retry_attempts=retries,
                maximum_record_age_seconds=int(age.to_seconds()),
                bisect_batch_on_function_error=True,
                on_failure_destination_arn=self.dead_letter_queue.queue_arn,
                filter_patterns=[json.dumps(p) for p in self.filter_patterns],
            ),
        )

    # ---- monitoring -----------------------------------------------------------------------------

    def _alarms(self, iterator_age: Duration) -> dict[str, cloudwatch.Alarm]:
        five_minutes = Duration.minutes(5)
        return {
            "iterator_age": self._track_alarm(cloudwatch.Alarm(
                self,
                "IteratorAgeAlarm",
                alarm_description="Stream records wait too long to be archived (archiver behind or failing)",
                metric=self.function.metric("IteratorAge", statistic="Maximum", period=five_minutes),
                threshold=iterator_age.to_milliseconds(),
                evaluation_periods=3,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )),
            "dead_letter_queue": self._track_alarm(cloudwatch.Alarm(
                self,
                "DeadLetterQueueAlarm",
                alarm_description="Stream batches gave up and went to the dead-letter queue: records need replay",
                metric=self.dead_letter_queue.metric_approximate_number_of_messages_visible(
                    statistic="Maximum", period=five_minutes
                ),
                threshold=0,
                evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )),
            "errors": self._track_alarm(cloudwatch.Alarm(
                self,
                "ErrorsAlarm",
                alarm_description="The archiver function raised errors",
                metric=self.function.metric_errors(statistic="Sum", period=five_minutes),
                threshold=0,
                evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            )),
        }

    # ---- catalog --------------------------------------------------------------------------------

    def _glue(self, database_name: str) -> glue.CfnTable:
        account = Stack.of(self).account
        database = glue.CfnDatabase(
            self,
            "GlueDatabase",
            catalog_id=account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(
                name=database_name, description="DynamoDB stream archive (cdk-ts StreamArchiver)"
            ),
        )
        location = f"s3://{self.bucket.bucket_name}/{self.prefix}"
        columns = [
            ("eventid", "string"),
            ("eventname", "string"),
            ("sequencenumber", "string"),
            ("approximatecreationdatetime", "string"),
            ("source_table", "string"),
            ("keys", "string"),
            ("newimage", "string"),
            ("oldimage", "string"),
            ("useridentity", "string"),
        ]
        table = glue.CfnTable(
            self,
            "GlueTable",
            catalog_id=account,
            database_name=database_name,
            table_input=glue.CfnTable.TableInputProperty(
                name="stream_archive",
                table_type="EXTERNAL_TABLE",
                partition_keys=[
                    glue.CfnTable.ColumnProperty(name="table", type="string"),
                    glue.CfnTable.ColumnProperty(name="dt", type="string"),
                    glue.CfnTable.ColumnProperty(name="hour", type="string"),
                ],
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
                    columns=[glue.CfnTable.ColumnProperty(name=n, type=t) for n, t in columns],
                    input_format="org.apache.hadoop.mapred.TextInputFormat",
                    output_format="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                    serde_info=glue.CfnTable.SerdeInfoProperty(
                        serialization_library="org.openx.data.jsonserde.JsonSerDe",
                        # "table" in each line would clash with the partition column of that name.
                        parameters={"mapping.source_table": "table", "case.insensitive": "true"},
                    ),
                ),
            ),
        )
        table.add_resource_dependency(database)
        return table
