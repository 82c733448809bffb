"""StreamArchiver: DynamoDB Streams -> Lambda -> S3 (gzip JSON Lines, Hive-partitioned), nothing lost."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from aws_cdk import Duration, Names, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_glue as glue
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk_ts import buckets
from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._defaults import dead_letter_queue
from cdk_ts._lookups import path_of
from cdk_ts._validation import Problems, check_iam_text, describe
from cdk_ts.archive._glue import cfn_database, cfn_database_name, check_unique_glue_table, shared_glue_database
from cdk_ts.archive._glue_names import MAX_NAME_LENGTH, VIEW_SUFFIX, glue_name
from cdk_ts.archive._mapping import connect_source, stream_delivery
from cdk_ts.archive._monitoring import archiver_alarms, create_alarms
from cdk_ts.archive._resources import archive_bucket, archiver_function, failure_bucket
from cdk_ts.archive.base import StreamArchiverBase
from cdk_ts.archive.catalog import ArchiveCatalog
from cdk_ts.archive.compaction import ArchiveCompaction
from cdk_ts.archive.imported import ImportedStreamArchiver
from cdk_ts.archive.options import CompactionOptions
from cdk_ts.protocols import ArchiverSource, HasTable, RotatingStreamSource
from cdk_ts_runtime import _deprecations
from cdk_ts_runtime._archiver import FAILURE_PREFIX
from cdk_ts_runtime._errors import WrongTypeError
from cdk_ts_runtime._inputs import whole

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


class StreamArchiver(AlarmingConstruct, StreamArchiverBase):
    """Archives a DynamoDB stream to S3 as gzip JSON Lines under ``{prefix}table=/dt=/hour=/``.

    ``source`` is any ``ITable`` with a stream, a ``DeviceLogTable`` or a ``RotatingTimeSeriesTables``
    (whose rotation function then maps every new period table's stream to this archiver). Delivery
    is at least once: failed groups are retried from their first record, a batch that keeps failing
    goes to the failure destination (an S3 bucket holding the whole batch, replayable with
    ``cdk-ts replay``; or an SQS queue), and ``add_default_alarms()``
    watches all of it. Grants to read, archive and replay, ``bind`` and the ``metric_*`` methods come
    from ``StreamArchiverBase``, which ``from_archive_bucket_name`` returns for an archive deployed elsewhere.

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
        ``cdk-ts replay`` archives later; or ``FailureDestination.SQS``
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
        """Create the function, its bucket (unless given) and failure destination; parameters: see the class."""
        problems = Problems(scope, construct_id)
        window, age = _check_delivery(problems, batch_size, retry_attempts, max_batching_window, max_record_age)
        problems.check(not prefix or prefix.endswith("/"), f"prefix {prefix!r} must end with '/' (or be empty)")
        check_iam_text(problems, "prefix", prefix)
        destination = _check_failure_destination(problems, failure_destination, failure_bucket, bucket, prefix)
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
        self.bucket = bucket or archive_bucket(
            self, logs=self._logs(), prefix=prefix, noncurrent=noncurrent, raw_expiration=raw_expiration,
            infrequent_access_after=transition_to_infrequent_access_after,
            glacier_after=transition_to_glacier_after,
        )
        self._create_failure_destination(destination, failure_bucket, noncurrent)
        self.function = archiver_function(self, bucket=self.bucket, prefix=prefix, failure_bucket=self.failure_bucket)
        self._connect(source, batch_size=batch_size, window=window, retries=retry_attempts, age=age)
        self._init_alarm_attributes()
        self._create_catalog(database_name, table_name, glue_database,
                             create=create_glue_database or glue_database_name is not None)
        #: The ``ArchiveCompaction`` (None without ``compaction``).
        self.compaction: ArchiveCompaction | None = self._create_compaction(
            compaction, glue_database, alarm_topic, raw_expiration)
        if alarm_topic is not None:
            self.add_default_alarms(alarm_topic=alarm_topic)

    from_archive_bucket_name = staticmethod(ImportedStreamArchiver)
    """An archive another stack, app or account writes, to read, query, replay or watch; creates no resource.

    ``StreamArchiver.from_archive_bucket_name(scope, construct_id, archive_bucket_name=..., prefix=..., ...)``
    returns an :class:`ImportedStreamArchiver` (a ``StreamArchiverBase``); it is that class, whose docstring
    documents each keyword with its default. Pass the owning archiver's values: grants then name its buckets
    and Glue entries, and ``bind`` sets what ``StreamRecordArchiver.from_env`` reads.
    """

    # ---- steps of the constructor ---------------------------------------------------------------

    def _logs(self) -> s3.IBucket:
        return self._access_logs or buckets.stack_access_logs_bucket(self)

    def _create_failure_destination(
        self, destination: FailureDestination, given: s3.IBucket | None, noncurrent: Duration
    ) -> None:
        self.dead_letter_queue: sqs.Queue | None = None
        self.failure_bucket: s3.IBucket | None = None
        if destination is FailureDestination.SQS:
            self.dead_letter_queue = dead_letter_queue(self, "DeadLetterQueue", "the archiver's stream mapping")
            return
        self.failure_bucket = given or failure_bucket(self, logs=self._logs(), noncurrent=noncurrent)
        # S3 request metrics on the failure prefix make "a failure record arrived" a CloudWatch metric
        # (PutRequests); only a bucket defined in this app can be given the metrics configuration.
        if isinstance(self.failure_bucket, s3.Bucket):
            self.failure_bucket.add_metric(id=self.failure_metrics_filter_id, prefix=FAILURE_PREFIX)

    def _connect(self, source: ArchiverSource, **delivery: Any) -> None:
        on_failure = self.dead_letter_queue.queue_arn if self.dead_letter_queue else self.failure_bucket.bucket_arn
        settings = stream_delivery(
            self.function, on_failure_arn=on_failure, filter_patterns=self.filter_patterns, **delivery
        )
        connect_source(self.function, source, settings, dead_letter_queue=self.dead_letter_queue,
                       failure_bucket=self.failure_bucket)
        if self.failure_bucket is not None:
            self._acknowledge_failure_grant(self.function, self.failure_bucket)

    def _init_alarm_attributes(self) -> None:
        self.iterator_age_alarm: cloudwatch.Alarm | None = None
        self.dead_letter_alarm: cloudwatch.Alarm | None = None
        self.failure_delivery_alarm: cloudwatch.Alarm | None = None
        self.errors_alarm: cloudwatch.Alarm | None = None

    def _create_catalog(self, database_name: str | None, table_name: str, given: object, *, create: bool) -> None:
        #: The Glue table and view as one construct (None without ``glue_database``).
        self.catalog: ArchiveCatalog | None = None
        self.glue_table: glue.CfnTable | None = None
        self.glue_view: glue.CfnTable | None = None
        self.glue_table_name = table_name
        #: The Glue database this archiver created (shared with other archivers of the stack), or None.
        self.glue_database: glue.CfnDatabase | None = None
        #: The name of the Glue database holding ``glue_table`` and ``glue_view``, or None.
        self.glue_database_name: str | None = database_name
        if database_name is None:
            return
        if create:
            self.glue_database = shared_glue_database(self, database_name)
        check_unique_glue_table(self, database_name, table_name)
        # ID "Default" is left out of logical IDs: the table and view keep the IDs they had as the
        # archiver's own children, so an upgrade does not create a second Glue table of the same name.
        self.catalog = ArchiveCatalog(
            self, "Default", bucket=self.bucket, prefix=self.prefix, database_name=database_name,
            table_name=table_name,
            database=self.glue_database if self.glue_database is not None else cfn_database(given),
        )
        self.glue_table, self.glue_view = self.catalog.table, self.catalog.view

    def _create_compaction(
        self, options: CompactionOptions | None, given: object, alarm_topic: sns.ITopic | None,
        raw_expiration: Duration | None,
    ) -> ArchiveCompaction | None:
        if options is None:
            return None
        database_name = self.glue_database_name
        return ArchiveCompaction(
            self, "Compaction", bucket=self.bucket, prefix=self.prefix, options=options,
            glue_database_name=database_name, raw_glue_table_name=self.glue_table_name if database_name else None,
            database=self.glue_database or cfn_database(given), alarm_topic=alarm_topic,
            raw_retention=raw_expiration,
        )

    # ---- monitoring -----------------------------------------------------------------------------

    @property
    def failure_metrics_filter_id(self) -> str:
        """The S3 request-metrics filter ID the failed-batches alarm watches (on the ``aws/lambda/`` prefix)."""
        return f"cdk-ts-failures-{Names.unique_id(self)}"[-64:]

    def _create_default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        alarms = create_alarms(self, archiver_alarms(
            self._metrics(), iterator_age_threshold=self._iterator_age_threshold,
            to_queue=self.dead_letter_queue is not None,
        ))
        self.iterator_age_alarm = alarms["iterator_age"]
        self.dead_letter_alarm = alarms["dead_letter_queue"]
        self.failure_delivery_alarm = alarms["failure_delivery"]
        self.errors_alarm = alarms["errors"]
        return alarms


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
        _deprecations.warn("cdk_ts.StreamArchiver(glue_database_name=...)", stacklevel=4)
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
        name = cfn_database_name(database)
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


def _check_delivery(
    problems: Problems, batch_size: int, retry_attempts: int, window: Duration | None, age: Duration | None
) -> tuple[Duration, Duration]:
    """The mapping's batching window and record age (defaults filled in), recording limits out of range."""
    problems.collect(lambda: whole("batch_size", batch_size, maximum=10_000, hint="the DynamoDB Streams limit"))
    problems.collect(lambda: whole("retry_attempts", retry_attempts, minimum=0, maximum=10_000))
    window = window or Duration.seconds(60)
    problems.check(
        window.to_seconds() <= 300,
        lambda: f"max_batching_window {window.to_human_string()} must be at most 300 seconds",
    )
    age = age or Duration.hours(24)
    problems.check(
        60 <= age.to_seconds() <= 604_800,
        lambda: f"max_record_age {age.to_human_string()} must be 60 seconds to 7 days",
    )
    return window, age


def _check_failure_destination(
    problems: Problems, destination: object, failure_bucket: s3.IBucket | None, bucket: s3.IBucket | None, prefix: str
) -> FailureDestination | None:
    """The failure destination, recording a bucket given with SQS or one that would mix into the archive."""
    chosen = problems.collect(lambda: FailureDestination(destination))
    problems.check(
        chosen is not FailureDestination.SQS or failure_bucket is None,
        "failure_bucket is for failure_destination=FailureDestination.S3; SQS needs no bucket",
    )
    problems.check(
        failure_bucket is None or failure_bucket is not bucket or bool(prefix),
        "failure_bucket is the archive bucket and prefix is empty: Lambda's failure records "
        f"({FAILURE_PREFIX}...) would be read as archive objects; pass a prefix such as 'dynamodb/'",
    )
    return chosen


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
            lambda: f"raw_expiration {expiration.to_human_string()} must exceed the compaction's lookback plus "
            "grace plus a day: a late record in a partition whose raw objects expired cannot be compacted",
        )


def _check_source(problems: Problems, source: object) -> None:
    """Record why ``source`` cannot be archived: not a table, or a table without a stream."""
    if isinstance(source, RotatingStreamSource):
        problems.check(
            source.stream_view_type is not None,
            f"source {path_of(source)} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES",
        )
        return
    table = source.table if isinstance(source, HasTable) else source
    path = describe(source)
    if not hasattr(table, "table_stream_arn"):
        raise WrongTypeError(f"source {path} is not a DynamoDB table, DeviceLogTable or RotatingTimeSeriesTables")
    problems.check(
        table.table_stream_arn is not None,
        f"source {path} has no stream: create it with stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES "
        "(or import it with table_stream_arn=...)",
    )
