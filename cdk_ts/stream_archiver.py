"""StreamArchiver: DynamoDB Streams -> Lambda -> S3 (gzip JSON Lines, Hive-partitioned), nothing lost."""

from __future__ import annotations

import json
import re
import warnings
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from aws_cdk import Duration, Names, Stack, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk_ts import _perms, buckets
from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._defaults import dead_letter_queue, runtime_function
from cdk_ts._glue_names import MAX_NAME_LENGTH, VIEW_SUFFIX, glue_name
from cdk_ts._metrics import graph, metric_options
from cdk_ts._nag import acknowledge, acknowledge_wildcard_resources
from cdk_ts._validation import Problems, describe
from cdk_ts.archive_catalog import ARCHIVE_COLUMNS as ARCHIVE_COLUMNS  # re-exported: their home until 0.2
from cdk_ts.archive_catalog import PARTITION_COLUMNS as PARTITION_COLUMNS
from cdk_ts.archive_catalog import ArchiveCatalog
from cdk_ts.archive_catalog import deduplicated_view_sql as deduplicated_view_sql
from cdk_ts.archive_compaction import ArchiveCompaction, CompactionOptions
from cdk_ts.protocols import ArchiverSource, HasTable, RotatingStreamSource
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime.archiver import (
    DONE_PREFIX,
    ENV_BUCKET,
    ENV_FAILURE_BUCKET,
    ENV_PREFIX,
    FAILURE_PREFIX,
    FUNCTION_DIMENSION,
    ArchiverMetric,
)
from cdk_ts_runtime.emf import METRIC_NAMESPACE
from cdk_ts_runtime.errors import ValidationError
from cdk_ts_runtime.stream_consumer import StreamConsumer

#: Event pattern for "archive only items that TTL deleted" (``filter_patterns=[TTL_DELETIONS_ONLY]``).
TTL_DELETIONS_ONLY = {
    "eventName": ["REMOVE"],
    "userIdentity": {"type": ["Service"], "principalId": ["dynamodb.amazonaws.com"]},
}

class FailureDestination(StrEnum):
    """Where the stream mappings send a batch they gave up on."""

    #: An S3 bucket: Lambda writes the whole invocation record, records included, so it can be replayed.
    S3 = "s3"
    #: An SQS queue: metadata only (shard, sequence range); the records stay in the stream for 24 hours.
    SQS = "sqs"


def glue_name_for(construct_id: str) -> str:
    """The Glue table name derived from a construct ID: ``TelemetryArchiver`` gives ``telemetry_archiver``."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", construct_id).lower()
    return re.sub(r"[^a-z0-9_]+", "_", snake).strip("_") or "stream_archive"


class StreamArchiver(AlarmingConstruct):
    """Archives a DynamoDB stream to S3 as gzip JSON Lines under ``{prefix}table=/dt=/hour=/``.

    ``source`` is any ``ITable`` with a stream, a ``DeviceLogTable`` or a ``RotatingTimeSeriesTables``
    (whose rotation function then maps every new period table's stream to this archiver). Delivery
    is at least once: failed groups are retried from their first record, a batch that keeps failing
    goes to the failure destination (an S3 bucket holding the whole batch, replayable with
    ``python -m cdk_ts_runtime.archiver replay``; or an SQS queue), and ``add_default_alarms()``
    watches all of it.

    Exposes ``bucket``, ``function``, ``failure_bucket`` (None with SQS), ``dead_letter_queue`` (None
    with S3), ``glue_table`` and ``glue_view`` (None without ``glue_database``), ``glue_database`` (the
    ``CfnDatabase`` it created or shares, None when it uses an existing one), ``glue_database_name`` and
    ``compaction`` (the ``ArchiveCompaction`` compacting closed partitions to Parquet; None without ``compaction=``).

    Monitoring: ``metric_*()`` methods give the metrics, each taking CloudWatch metric options
    (``period``, ``statistic``, ``label``...) over its defaults, a five-minute period and the statistic
    its docstring names; ``add_default_alarms()`` creates the
    recommended alarms, kept in ``alarms`` by name (``iterator_age``, ``dead_letter_queue``,
    ``failure_delivery``, ``errors``) and as ``iterator_age_alarm``, ``dead_letter_alarm``,
    ``failure_delivery_alarm`` and ``errors_alarm`` (None until then).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        source: ArchiverSource,
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
        glue_table_name: str | None = None,
        glue_database: GlueDatabaseRef | str | None = None,
        create_glue_database: bool = False,
        iterator_age_threshold: Duration | None = None,
        alarm_topic: sns.ITopic | None = None,
        failure_destination: FailureDestination | str = FailureDestination.S3,
        failure_bucket: s3.IBucket | None = None,
        noncurrent_version_expiration: Duration | None = None,
        access_logs_bucket: s3.IBucket | None = None,
        compaction: CompactionOptions | None = None,
        raw_expiration: Duration | None = None,
    ) -> None:
        """Create the archiver function, its bucket (unless given) and failure destination.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param source: the table whose stream is archived (``cdk_ts.protocols.ArchiverSource``), an
            ``ITable``/``ITableV2`` with a stream, a construct exposing one as ``.table`` (``DeviceLogTable``)
            or a ``RotatingTimeSeriesTables`` (every period table's stream, mapped by the rotation function
            as tables are created).
        :param bucket: where the archive is written.
            Default: None — a new bucket with SSE-S3, SSL-only
            access, versioning (overwritten versions expire, see ``noncurrent_version_expiration``), server
            access logs and ``RemovalPolicy.RETAIN``, moving objects to Infrequent Access and Glacier Instant
            Retrieval (see the ``transition_*`` parameters).
        :param prefix: key prefix of every archived object; must end with ``/`` or be empty.
            Default: ``"dynamodb/"``.
        :param batch_size: most records per invocation (1-10000).
            Default: 1000 — with the 60-second window, few large objects.
        :param max_batching_window: how long Lambda gathers records before it invokes the archiver (at most
            300 seconds). Default: None — 60 seconds.
        :param retry_attempts: how often a failing batch is retried (0-10000) before it goes to the
            failure destination. Default: 10.
        :param max_record_age: records older than this go to the failure destination instead of being
            retried (60 seconds to 7 days). Default: None — 24 hours, the stream's retention.
        :param filter_patterns: Lambda event filter patterns; only matching records are archived (e.g.
            ``[TTL_DELETIONS_ONLY]``). Default: None — every change is archived.
        :param transition_to_infrequent_access_after: age at which objects in the bucket this construct
            creates move to S3 Standard-IA (ignored with ``bucket``). Default: None — 30 days.
        :param transition_to_glacier_after: age at which objects in the bucket this construct creates move
            to Glacier Instant Retrieval (ignored with ``bucket``). Default: None — 180 days.
        :param glue_database_name: deprecated alias of ``glue_database=name, create_glue_database=True``.
            Default: None.
        :param glue_database: the Glue database the archive's table (partition projection over table, day and
            hour; Hive JSON SerDe) and the view ``<table>_deduplicated`` (one row per ``eventid``) go into, for
            Athena: an existing database by name, an ``aws_glue_alpha`` ``IDatabase`` (anything with a literal
            ``database_name``) or a ``glue.CfnDatabase``. Default: None — no Glue catalog entries.
        :param create_glue_database: create ``glue_database`` (a name). Archivers of one stack naming the same
            new database share one ``AWS::Glue::Database``; one in another stack of the app is refused, naming
            both construct paths. Default: False — the database must exist.
        :param glue_table_name: the Glue table's name, 1-242 letters, digits or ``_`` (Glue's and Athena's
            rule, leaving room for ``_deduplicated``), stored and compared in lower case as Glue does.
            Default: None — derived from the construct ID (``TelemetryArchiver`` gives ``telemetry_archiver``).
        :param iterator_age_threshold: the iterator-age alarm (``add_default_alarms``) fires when records wait
            longer than this to be archived. Default: None — 1 hour.
        :param alarm_topic: create the default alarms now, notifying this SNS topic (same as calling
            ``add_default_alarms(alarm_topic=topic)``). Default: None — no alarms until
            ``add_default_alarms`` is called.
        :param failure_destination: where a batch goes once the retries are used up,
            ``FailureDestination.S3`` (or ``"s3"``), the whole invocation record with its records, which
            ``python -m cdk_ts_runtime.archiver replay`` archives later; or ``FailureDestination.SQS``
            (``"sqs"``), metadata only, which needs the records to be read from the stream within its 24 hours.
            Default: ``FailureDestination.S3``.
        :param failure_bucket: the S3 failure destination (only with S3); the function may read, write and
            delete in it (Lambda writes failure records with the function's role; the replay moves them).
            Default: None — a new bucket: SSE-S3, SSL-only, public access blocked, versioned (noncurrent
            versions expire), server access logs, replayed records under ``done/`` expire after 90 days.
        :param noncurrent_version_expiration: how long overwritten or deleted versions are kept in the
            buckets this construct creates. Default: None — 30 days.
        :param access_logs_bucket: where the buckets this construct creates log their server access (under
            ``{construct path}/archive/`` and ``.../failures/``).
            Default: None — the stack's one access-log bucket, shared by every cdk-ts construct in the stack
            (``stack_access_logs_bucket``: logs expire after 365 days, delivery granted by bucket policy).
        :param compaction: compact closed partitions to Parquet (or Iceberg) with an ``ArchiveCompaction``
            (exposed as ``compaction``; with ``glue_database``, also the Parquet table and the ``<table>_all``
            view). Default: None — JSON Lines only.
        :param raw_expiration: delete raw JSON Lines objects this long after they are written (a rule on the
            archive prefix of the bucket this construct creates; with ``compaction`` it must exceed its
            lookback plus grace plus a day). Default: None — kept (and moved to colder classes).
        :raises ValueError: naming this construct's path and every problem at once, limits out of range, a
            prefix without a trailing ``/``, a source without a stream, a failure bucket with SQS, a bad Glue
            table or database name, or a failure bucket that is the archive bucket with an empty prefix
            (failure records would land in the archive's location).
        :raises TypeError: when ``source`` is not a table, ``DeviceLogTable`` or ``RotatingTimeSeriesTables``.
        """
        problems = Problems(scope, construct_id)
        problems.collect(lambda: whole("batch_size", batch_size, maximum=10_000, hint="the DynamoDB Streams limit"))
        problems.collect(lambda: whole("retry_attempts", retry_attempts, minimum=0, maximum=10_000))
        window = max_batching_window or Duration.seconds(60)
        problems.check(
            window.to_seconds() <= 300, f"max_batching_window {window.to_human_string()} must be at most 300 seconds"
        )
        age = max_record_age or Duration.hours(24)
        problems.check(
            60 <= age.to_seconds() <= 604_800, f"max_record_age {age.to_human_string()} must be 60 seconds to 7 days"
        )
        problems.check(not prefix or prefix.endswith("/"), f"prefix {prefix!r} must end with '/' (or be empty)")
        destination = problems.collect(lambda: FailureDestination(failure_destination))
        problems.check(
            destination is not FailureDestination.SQS or failure_bucket is None,
            "failure_bucket is for failure_destination=FailureDestination.S3; SQS needs no bucket",
        )
        problems.check(
            failure_bucket is None or failure_bucket is not bucket or bool(prefix),
            "failure_bucket is the archive bucket and prefix is empty: Lambda's failure records "
            f"({FAILURE_PREFIX}...) would be read as archive objects; pass a prefix such as 'dynamodb/'",
        )
        database_name = _glue_database_name(problems, glue_database, create_glue_database, glue_database_name)
        table_name = _glue_table_name(problems, construct_id, glue_table_name, database_name is not None)
        _check_source(problems, source)
        _check_raw_expiration(problems, raw_expiration, compaction, bucket)
        problems.raise_if_any()
        super().__init__(scope, construct_id)
        self._iterator_age_threshold = iterator_age_threshold or Duration.hours(1)
        self.prefix = prefix
        self.filter_patterns = list(filter_patterns or [])
        noncurrent = noncurrent_version_expiration or Duration.days(30)
        self._access_logs = access_logs_bucket

        if bucket is None:
            bucket = buckets.secure_bucket(
                self,
                "Bucket",
                server_access_logs_bucket=self._logs(),
                server_access_logs_prefix=f"{self.node.path}/archive/",
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
                        noncurrent_version_expiration=noncurrent,
                    ),
                    *([s3.LifecycleRule(prefix=prefix or None, expiration=raw_expiration)] if raw_expiration else []),
                ],
            )
        self.bucket = bucket

        self.dead_letter_queue: sqs.Queue | None = None
        self.failure_bucket: s3.IBucket | None = None
        if destination is FailureDestination.SQS:
            self.dead_letter_queue = dead_letter_queue(self, "DeadLetterQueue", "the archiver's stream mapping")
        else:
            self.failure_bucket = failure_bucket or buckets.secure_bucket(
                self,
                "FailureBucket",
                server_access_logs_bucket=self._logs(),
                server_access_logs_prefix=f"{self.node.path}/failures/",
                lifecycle_rules=[
                    # Failure records under aws/lambda/ are the only copy of their records: never expire them.
                    s3.LifecycleRule(noncurrent_version_expiration=noncurrent),
                    s3.LifecycleRule(prefix=DONE_PREFIX, expiration=Duration.days(90)),
                ],
            )
            self._add_failure_metrics_filter()

        self.function = runtime_function(
            self,
            "Function",
            handler="cdk_ts_runtime.handlers.archiver.handler",
            description="Archives DynamoDB stream records to S3 as gzip JSON Lines",
            environment={
                ENV_BUCKET: bucket.bucket_name,
                ENV_PREFIX: prefix,
                **({ENV_FAILURE_BUCKET: self.failure_bucket.bucket_name} if self.failure_bucket else {}),
            },
            timeout=Duration.minutes(2),
            memory_size=512,
        )
        objects = bucket.arn_for_objects(f"{prefix}*")
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=list(_perms.S3_ARCHIVE_WRITE_ACTIONS), resources=[objects])
        )
        if bucket.encryption_key is not None:
            bucket.encryption_key.grant_encrypt(self.function)
        acknowledge_wildcard_resources(
            self.function, self, [objects], f"the archiver writes one object per table and hour under {prefix}"
        )
        self._connect(source, window, age, retry_attempts, batch_size)
        if self.failure_bucket is not None:
            self._acknowledge_failure_grant()

        self.iterator_age_alarm: cloudwatch.Alarm | None = None
        self.dead_letter_alarm: cloudwatch.Alarm | None = None
        self.failure_delivery_alarm: cloudwatch.Alarm | None = None
        self.errors_alarm: cloudwatch.Alarm | None = None
        #: The Glue table and view as one construct (None without ``glue_database``).
        self.catalog: ArchiveCatalog | None = None
        self.glue_table: glue.CfnTable | None = None
        self.glue_view: glue.CfnTable | None = None
        self.glue_table_name = table_name
        #: The Glue database this archiver created (shared with other archivers of the stack), or None.
        self.glue_database: glue.CfnDatabase | None = None
        #: The name of the Glue database holding ``glue_table`` and ``glue_view``, or None.
        self.glue_database_name: str | None = database_name
        if database_name is not None:
            if create_glue_database or glue_database_name is not None:
                self.glue_database = self._shared_glue_database(database_name)
            _check_unique_glue_table(self, database_name, table_name)
            # ID "Default" is left out of logical IDs: the table and view keep the IDs they had as the
            # archiver's own children, so an upgrade does not create a second Glue table of the same name.
            self.catalog = ArchiveCatalog(
                self, "Default", bucket=self.bucket, prefix=self.prefix, database_name=database_name,
                table_name=table_name,
                database=self.glue_database if self.glue_database is not None else _cfn_database(glue_database),
            )
            self.glue_table, self.glue_view = self.catalog.table, self.catalog.view
        #: The ``ArchiveCompaction`` (None without ``compaction``).
        self.compaction: ArchiveCompaction | None = None
        if compaction is not None:
            self.compaction = ArchiveCompaction(
                self, "Compaction", bucket=self.bucket, prefix=self.prefix, options=compaction,
                glue_database_name=database_name, raw_glue_table_name=table_name if database_name else None,
                database=self.glue_database or _cfn_database(glue_database), alarm_topic=alarm_topic,
            )
        if alarm_topic is not None:
            self.add_default_alarms(alarm_topic=alarm_topic)

    def _logs(self) -> s3.IBucket:
        return self._access_logs or buckets.stack_access_logs_bucket(self)

    def _add_failure_metrics_filter(self) -> None:
        # S3 request metrics on the failure prefix make "a failure record arrived" a CloudWatch metric
        # (PutRequests); only a bucket defined in this app can be given the metrics configuration.
        if isinstance(self.failure_bucket, s3.Bucket):
            self.failure_bucket.add_metric(id=self.failure_metrics_filter_id, prefix=FAILURE_PREFIX)

    def _acknowledge_failure_grant(self) -> None:
        bucket = self.failure_bucket
        reason = (
            "Lambda writes failure records under aws/lambda/<mapping-uuid>/<shard>/... with the function's role "
            "(keys AWS chooses) and the replay reads, lists and moves them under done/; this is the read/write "
            "grant aws-cdk-lib's S3OnFailureDestination makes on the failure bucket"
        )
        acknowledge_wildcard_resources(self.function, self, [bucket.arn_for_objects("*")], reason)
        for action in _perms.S3_READ_WRITE_GRANT_WILDCARDS:
            acknowledge(self.function, f"AwsSolutions-IAM5[Action::{action}]", reason)

    # ---- wiring ---------------------------------------------------------------------------------

    def _connect(self, source: ArchiverSource, window: Duration, age: Duration, retries: int, batch_size: int) -> None:
        # How the archiver reads a stream, whoever creates the mapping (CloudFormation for a table, the
        # rotation function for every period table): at least once, from the oldest record, a failing batch
        # bisected and its failed records reported, a batch that keeps failing sent to the failure destination.
        delivery = StreamConsumer(
            function_name=self.function.function_arn,
            batch_size=batch_size,
            maximum_batching_window_seconds=int(window.to_seconds()),
            starting_position="TRIM_HORIZON",
            maximum_retry_attempts=retries,
            maximum_record_age_seconds=int(age.to_seconds()),
            bisect_batch_on_function_error=True,
            report_batch_item_failures=True,
            on_failure_destination_arn=(
                self.dead_letter_queue.queue_arn if self.dead_letter_queue is not None
                else self.failure_bucket.bucket_arn
            ),
            filter_patterns=[json.dumps(p) for p in self.filter_patterns],
        )
        if isinstance(source, RotatingStreamSource):
            self._connect_rotating(source, delivery)
        else:
            self._connect_table(source.table if isinstance(source, HasTable) else source, delivery)

    def _connect_table(self, table: dynamodb.ITable | dynamodb.ITableV2, delivery: StreamConsumer) -> None:
        on_failure = (
            event_sources.SqsDlq(self.dead_letter_queue) if self.dead_letter_queue is not None
            else event_sources.S3OnFailureDestination(self.failure_bucket)
        )  # each grants the function what the destination needs
        self.function.add_event_source(_dynamo_event_source(table, delivery, on_failure))
        acknowledge(
            self.function, "AwsSolutions-IAM5[Resource::*]", "dynamodb:ListStreams has no resource-level permissions"
        )

    def _connect_rotating(self, source: RotatingStreamSource, delivery: StreamConsumer) -> None:
        # the archiver's own role: acknowledging the stream grant's findings stays inside this construct
        source.grant_stream_read(self.function, acknowledge_nag_findings=True)
        if self.dead_letter_queue is not None:
            self.dead_letter_queue.grant_send_messages(self.function)
        else:
            self.failure_bucket.grant_read_write(self.function)  # what S3OnFailureDestination grants
        source.add_stream_consumer(self.function, delivery)

    # ---- monitoring -----------------------------------------------------------------------------

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The graphs ``MonitoringDashboard.monitor`` shows: iterator age; failed batches, delivery failures, errors."""
        name = self.node.id
        return [
            graph(f"{name}: iterator age (ms)", self.metric_iterator_age(label="iterator age")),
            graph(
                f"{name}: failed batches (replay them), delivery failures, errors",
                self.metric_dead_letters(label="failed batches"),
                self.metric_failure_delivery_failures(label="delivery failures"),
                self.metric_errors(label="errors"),
            ),
        ]

    def metric_iterator_age(self, **props: Any) -> cloudwatch.Metric:
        """How long the newest record of a batch waited in the stream, in milliseconds (``IteratorAge``; Maximum)."""
        return self.function.metric("IteratorAge", **metric_options(props, "Maximum"))

    def metric_errors(self, **props: Any) -> cloudwatch.Metric:
        """Invocations of the archiver function that raised (``AWS/Lambda`` ``Errors``; Sum)."""
        return self.function.metric_errors(**metric_options(props, "Sum"))

    def metric(self, metric_name: ArchiverMetric | str, **props: Any) -> cloudwatch.Metric:
        """A metric the archiver function writes per batch as an EMF line (namespace ``cdk-ts``, ``FunctionName``).

        ``ArchiverMetric`` names them: ``ARCHIVED_RECORDS``, ``ARCHIVE_WRITE_FAILURES`` (1 when a PutObject failed
        and Lambda retries from that group) and ``UNREADABLE_RECORDS``.

        :param metric_name: an ``ArchiverMetric`` or its value (``"ArchivedRecords"``).
        :param props: metric options (``period``, ``statistic``, ``label``...) over the default, the Sum.
        :raises ValueError: for a name the archiver does not write.
        """
        try:
            written = ArchiverMetric(metric_name)
        except ValueError:
            raise ValidationError(
                f"{describe(self)}: metric {metric_name!r} is not written by the archiver; use one of "
                f"{', '.join(m.value for m in ArchiverMetric)}"
            ) from None
        return cloudwatch.Metric(
            namespace=METRIC_NAMESPACE, metric_name=written.value,
            dimensions_map={FUNCTION_DIMENSION: self.function.function_name}, **metric_options(props, "Sum"),
        )

    def metric_failure_delivery_failures(self, **props: Any) -> cloudwatch.Metric:
        """Failed batches Lambda could not deliver to the failure destination (``DestinationDeliveryFailures``; Sum).

        Records of such a batch are lost once they leave the stream (24 hours).
        """
        return self.function.metric("DestinationDeliveryFailures", **metric_options(props, "Sum"))

    def _create_default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        failed_batches = (
            "Stream batches gave up and went to the dead-letter queue: read their records from the stream "
            "within 24 hours" if self.dead_letter_queue is not None else
            "Stream batches gave up: failure records arrived in the failure bucket; run the replay "
            "(python -m cdk_ts_runtime.archiver replay, or the function with {\"Operation\": \"replay\"})"
        )
        alarms = {
            "iterator_age": self._alarm_above(
                "IteratorAgeAlarm",
                self.metric_iterator_age(),
                "Stream records wait too long to be archived (archiver behind or failing)",
                threshold=self._iterator_age_threshold.to_milliseconds(),
                evaluation_periods=3,
            ),
            "dead_letter_queue": self._alarm_above(
                "DeadLetterQueueAlarm", self.metric_dead_letters(), failed_batches
            ),
            "failure_delivery": self._alarm_above(
                "FailureDeliveryAlarm",
                self.metric_failure_delivery_failures(),
                "Lambda could not deliver a failed batch to the failure destination: those records are lost "
                "once the stream's 24 hours pass (check the function role's access to the destination)",
            ),
            "errors": self._alarm_above("ErrorsAlarm", self.metric_errors(), "The archiver function raised errors"),
        }
        self.iterator_age_alarm = alarms["iterator_age"]
        self.dead_letter_alarm = alarms["dead_letter_queue"]
        self.failure_delivery_alarm = alarms["failure_delivery"]
        self.errors_alarm = alarms["errors"]
        return alarms

    def metric_dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Batches the mappings gave up on: failure records written to the failure bucket, or queue depth with SQS.

        With S3: the bucket's ``PutRequests`` request metric on the ``aws/lambda/`` prefix (a metrics
        configuration this construct adds to a bucket defined in the app; for an imported
        ``failure_bucket`` add one named ``failure_metrics_filter_id`` yourself).

        :param props: metric options (``period``, ``statistic``, ``label``...) over the defaults, five minutes
            and the Sum of ``PutRequests`` (S3) or the Maximum of ``ApproximateNumberOfMessagesVisible`` (SQS).
        """
        if self.dead_letter_queue is not None:
            return self.dead_letter_queue.metric_approximate_number_of_messages_visible(
                **metric_options(props, "Maximum")
            )
        return cloudwatch.Metric(
            namespace="AWS/S3",
            metric_name="PutRequests",
            dimensions_map={"BucketName": self.failure_bucket.bucket_name, "FilterId": self.failure_metrics_filter_id},
            **metric_options(props, "Sum"),
        )

    @property
    def failure_metrics_filter_id(self) -> str:
        """The S3 request-metrics filter ID the failed-batches alarm watches (on the ``aws/lambda/`` prefix)."""
        return f"cdk-ts-failures-{Names.unique_id(self)}"[-64:]

    # ---- catalog --------------------------------------------------------------------------------

    def _shared_glue_database(self, name: str) -> glue.CfnDatabase:
        """The stack's database of this name, created by the first archiver asking for it (under its own ID).

        ``name`` is the stored (lower-case) name; a database of the app whose name differs only in case is
        the same database to Glue, so another archiver's is shared within its stack and anything else refused.
        """
        shared = {id(other.glue_database) for other in _archivers(self) if other.glue_database is not None}
        for database in _cfn_databases(self):
            if _cfn_database_name(database).lower() != name:
                continue
            if id(database) in shared and Stack.of(database) is Stack.of(self):
                return database
            where = "in another stack" if Stack.of(database) is not Stack.of(self) else "in this stack"
            raise ValidationError(
                f"{self.node.path}: Glue database {name!r} is already created by {database.node.path} {where} "
                f"(Glue stores names in lower case); pass glue_database={name!r} without create_glue_database here"
            )
        return glue.CfnDatabase(
            self,
            "GlueDatabase",
            catalog_id=Stack.of(self).account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(
                name=name, description="DynamoDB stream archive (cdk-ts StreamArchiver)"
            ),
        )


@runtime_checkable
class GlueDatabaseRef(Protocol):
    """An existing Glue database: ``aws_glue_alpha``'s ``IDatabase`` or anything with its ``database_name``."""

    @property
    def database_name(self) -> str:
        """The database's name (a literal: the view's text names it)."""
        ...


def _glue_database_name(
    problems: Problems, database: object, create: bool, deprecated_name: str | None
) -> str | None:
    """The database name the archiver's catalog goes into, recording why the arguments cannot give one."""
    if deprecated_name is not None:
        warnings.warn(
            "StreamArchiver(glue_database_name=...) is deprecated: pass glue_database=name, create_glue_database=True",
            DeprecationWarning, stacklevel=4,
        )
        problems.check(
            database is None and not create,
            "glue_database_name is the deprecated form of glue_database=..., create_glue_database=True: pass one",
        )
        database = deprecated_name
    if database is None:
        problems.check(not create, "create_glue_database=True needs glue_database=<name>")
        return None
    if isinstance(database, glue.CfnDatabase):
        problems.check(not create, "create_glue_database=True needs a name; a CfnDatabase exists already")
        name = _cfn_database_name(database)
    elif isinstance(database, str):
        name = database
    elif isinstance(database, GlueDatabaseRef):
        problems.check(not create, "create_glue_database=True needs a name; an IDatabase exists already")
        name = database.database_name
    else:
        problems.add(f"glue_database {database!r} is not a name, an IDatabase or a glue.CfnDatabase")
        return None
    if not problems.check(
        isinstance(name, str) and not Token.is_unresolved(name),
        "the Glue database name must be a plain string: the view's text names it",
    ):
        return None
    return glue_name(problems, "glue_database", name)


def _glue_table_name(problems: Problems, construct_id: str, given: str | None, cataloged: bool) -> str:
    """The Glue table's stored name: ``given`` or one derived from the construct ID, checked when it is used."""
    longest = MAX_NAME_LENGTH - len(VIEW_SUFFIX)
    if given is not None:
        return glue_name(problems, "glue_table_name", given, longest=longest) or given
    derived = glue_name_for(construct_id)
    if cataloged:
        return glue_name(problems, f"the Glue table name derived from {construct_id!r}", derived, longest=longest) or (
            derived
        )
    return derived


def _cfn_database(database: object) -> glue.CfnDatabase | None:
    return database if isinstance(database, glue.CfnDatabase) else None


def _cfn_database_name(database: glue.CfnDatabase) -> str | None:
    database_input = database.database_input
    return database_input.name if isinstance(database_input, glue.CfnDatabase.DatabaseInputProperty) else None


def _cfn_databases(scope: Construct) -> list[glue.CfnDatabase]:
    """Every Glue database resource of the app with a literal name."""
    return [
        c for c in scope.node.root.node.find_all()
        if isinstance(c, glue.CfnDatabase) and isinstance(_cfn_database_name(c), str)
        and not Token.is_unresolved(_cfn_database_name(c))
    ]


def _archivers(scope: Construct) -> list[StreamArchiver]:
    return [c for c in scope.node.root.node.find_all() if isinstance(c, StreamArchiver) and c is not scope]


def _check_unique_glue_table(archiver: StreamArchiver, database: str, table: str) -> None:
    """Two archivers cannot put a table or view of the same name, as Glue stores it, into one Glue database.

    Names are compared in the lower-case form Glue keeps, and each archiver's view counts too: a table
    ``x_deduplicated`` takes the name of table ``x``'s view.
    """
    ours = {table, table + VIEW_SUFFIX}
    for other in _archivers(archiver):
        if getattr(other, "glue_table", None) is None or other.glue_database_name != database:
            continue
        clash = ours & {other.glue_table_name, other.glue_table_name + VIEW_SUFFIX}
        if clash:
            raise ValidationError(
                f"{archiver.node.path}: Glue table or view {database}.{min(clash)} is already created by "
                f"{other.node.path} (Glue compares names in lower case); pass glue_table_name= to one of them"
            )


def _dynamo_event_source(
    table: dynamodb.ITable | dynamodb.ITableV2, delivery: StreamConsumer, on_failure: lambda_.IEventSourceDlq
) -> event_sources.DynamoEventSource:
    """The CloudFormation event source of ``table``'s stream with the settings of ``delivery``."""
    return event_sources.DynamoEventSource(
        table,
        starting_position=lambda_.StartingPosition(delivery.starting_position),
        batch_size=delivery.batch_size,
        max_batching_window=Duration.seconds(delivery.maximum_batching_window_seconds),
        bisect_batch_on_error=delivery.bisect_batch_on_function_error,
        retry_attempts=delivery.maximum_retry_attempts,
        max_record_age=Duration.seconds(delivery.maximum_record_age_seconds),
        report_batch_item_failures=delivery.report_batch_item_failures,
        on_failure=on_failure,
        filters=[{"pattern": p} for p in delivery.filter_patterns] or None,
    )


def _check_raw_expiration(
    problems: Problems, expiration: Duration | None, compaction: CompactionOptions | None, bucket: object
) -> None:
    """Raw objects must outlive the compaction's reach: a late record in an expired partition cannot be merged."""
    if expiration is None:
        return
    problems.check(bucket is None, "raw_expiration is a rule on the bucket this construct creates; give your "
                   "bucket its own lifecycle rule instead")
    if compaction is not None:
        reach = (compaction.lookback or Duration.days(3)).to_seconds() + (
            compaction.grace or Duration.hours(1)).to_seconds() + 86_400
        problems.check(
            expiration.to_seconds() > reach,
            f"raw_expiration {expiration.to_human_string()} must exceed the compaction's lookback plus grace plus "
            "a day: a late record in a partition whose raw objects expired cannot be compacted",
        )


def _check_source(problems: Problems, source: object) -> None:
    """Record why ``source`` cannot be archived: not a table, or a table without a stream."""
    if isinstance(source, RotatingStreamSource):
        problems.check(
            source.stream_view_type is not None,
            f"source {source.node.path} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES",
        )
        return
    table = source.table if isinstance(source, HasTable) else source
    path = describe(source)
    if not hasattr(table, "table_stream_arn"):
        raise TypeError(f"source {path} is not a DynamoDB table, DeviceLogTable or RotatingTimeSeriesTables")
    problems.check(
        table.table_stream_arn is not None,
        f"source {path} has no stream: create it with stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES "
        "(or import it with table_stream_arn=...)",
    )
