"""DynamoDB Streams records to gzip JSON Lines objects in S3, at least once, with partial-batch failures.

One object per run of consecutive records of one table and hour, keyed
``{prefix}table={name}/dt=YYYY-MM-DD/hour=HH/{stream}-{firstSeq}-{lastSeq}.jsonl.gz``. The key and
the bytes depend only on the records, so a retried batch overwrites its own objects instead of
duplicating them. Every line carries ``eventID`` for readers that deduplicate (docs/constructs/stream-archiver.md).

What a line holds is in :mod:`cdk_ts_runtime._archive_lines`.

Replay: when a batch keeps failing, Lambda writes the whole invocation record to the S3 on-failure
destination; :meth:`StreamRecordArchiver.replay` (``cdk-ts replay ...``) archives those records exactly as
the live path does and then moves each failure object under ``done/``.

Why not Powertools' batch utilities: they report failures record by record, while this function
writes a *group* of records as one object; for an ordered stream the right report is the first
sequence number of the first group that failed, with nothing after it written. The Lambda asset
also holds only the standard library and boto3.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._archive_lines import Group, UnreadableRecordError, group_records, readable_groups, sequence_number
from cdk_ts_runtime._aws import LazyClient, client_property, error_code
from cdk_ts_runtime._emf import METRIC_NAMESPACE, EmfWriter
from cdk_ts_runtime._errors import ValidationError

# Records carry their fields in ``extra``: Lambda's JSON log format, set on every cdk-ts function, writes
# them as keys of the JSON line.
logger = logging.getLogger(__name__)

#: The archive bucket (set by ``StreamArchiver`` on its function).
ENV_BUCKET = _environment.ARCHIVE_BUCKET
#: The key prefix of every archive object, e.g. ``dynamodb/``.
ENV_PREFIX = _environment.ARCHIVE_PREFIX
#: The S3 on-failure destination bucket of the archiver's mappings (what a replay reads by default).
ENV_FAILURE_BUCKET = _environment.ARCHIVE_FAILURE_BUCKET
#: Where Lambda writes failure records in an S3 on-failure destination (AWS chooses the keys below it).
FAILURE_PREFIX = "aws/lambda/"
#: Where a replayed failure record is moved to: ``done/`` + its original key.
DONE_PREFIX = "done/"
#: The dimension every archiver metric carries; its value is the function's name (Lambda's
#: ``AWS_LAMBDA_FUNCTION_NAME``), which the ``StreamArchiver`` construct knows as ``function.function_name``.
FUNCTION_DIMENSION = "FunctionName"


class ArchiverMetric(StrEnum):
    """A metric the archiver writes once per batch (unit Count), as an EMF log line."""

    #: Records written to S3 in the batch.
    ARCHIVED_RECORDS = "ArchivedRecords"
    #: 1 when a group's PutObject failed and Lambda retries the batch from it, else 0.
    ARCHIVE_WRITE_FAILURES = "ArchiveWriteFailures"
    #: 1 when a record could not be read and Lambda retries the batch from it, else 0.
    UNREADABLE_RECORDS = "UnreadableRecords"


class StreamRecordArchiver:
    """Writes a stream batch to S3 group by group; stops at the first failure and reports it.

    The runtime half of the ``StreamArchiver`` construct; ``s3_client`` defaults to a client created on first use.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "dynamodb/",
        *,
        s3_client=None,
        metrics: EmfWriter | None = None,
        function_name: str | None = None,
    ) -> None:
        """Name the target; no AWS call is made until the first batch.

        :param bucket: the bucket's name.
        :param prefix: key prefix of every object.
            Default: ``"dynamodb/"``.
        :param s3_client: the boto3 S3 client to use.
            Default: None — one is created on first use.
        :param metrics: writes each batch's ``ArchiverMetric`` values as one EMF line.
            Default: None — no metric (:meth:`from_env` gives a writer to stdout in ``cdk-ts``).
        :param function_name: the value of the ``FunctionName`` dimension.
            Default: None — ``bucket`` (outside Lambda there is no function name).
        :raises ValueError: for an empty bucket name.
        """
        if not bucket:
            raise ValidationError("bucket must be a bucket name")
        self.bucket = bucket
        self.prefix = prefix
        self._s3 = LazyClient("s3", s3_client)
        self.metrics = metrics
        self.function_name = function_name or bucket

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> StreamRecordArchiver:
        """The archiver the construct configured (``CDK_TS_ARCHIVE_BUCKET``, ``CDK_TS_ARCHIVE_PREFIX``).

        :param env: the environment, usually ``os.environ``; an unset ``CDK_TS_ARCHIVE_PREFIX`` means
            ``"dynamodb/"``. A name before 0.3 (``ARCHIVE_BUCKET``, ...) set alone is refused, naming the new one.
        :param kwargs: further constructor arguments (``s3_client``, ``metrics``).
        :raises EnvironmentVariableMissingError: (a ``KeyError``) when ``CDK_TS_ARCHIVE_BUCKET`` is not set.
        """
        way_out = "StreamArchiver sets it on its function"
        env = _environment.required(env, (ENV_BUCKET,), way_out, optional=(ENV_PREFIX,))
        kwargs.setdefault("metrics", EmfWriter(METRIC_NAMESPACE))
        kwargs.setdefault("function_name", env.get("AWS_LAMBDA_FUNCTION_NAME"))
        return cls(env[ENV_BUCKET], env.get(ENV_PREFIX, "dynamodb/"), **kwargs)

    s3 = client_property("_s3", "The S3 client (created on first use).")

    def archive(self, records: list[Mapping[str, Any]]) -> dict[str, list[dict[str, str]]]:
        """Archive a batch; the response tells Lambda which sequence number to retry from, if any.

        The failure list is empty only when every record was written. Groups before an unreadable
        record are written and the unreadable record is reported; one with no usable sequence number
        raises :class:`UnreadableRecordError` (the whole batch is retried) rather than being dropped.
        """
        if not isinstance(records, list | tuple):
            raise ValidationError(f"records {records!r:.60} is not a list of stream records")
        groups, unreadable = readable_groups(list(records))
        written = 0
        for group in groups:
            key = group.key(self.prefix)
            try:
                self._put(group, key)
            except Exception as error:  # noqa: BLE001 - any failure must become a retry, never a loss
                text = f"{type(error).__name__}: {error}"
                logger.error("archive write failed; retrying from this group: %s %s", key, text,
                             extra={"key": key, "sequenceNumber": group.first_sequence, "error": text})
                self._publish(written, write_failures=1)
                return {"batchItemFailures": [{"itemIdentifier": group.first_sequence}]}
            written += len(group.records)
            logger.info("archived %s", key, extra={"key": key, "records": len(group.records)})
        self._publish(written, unreadable=0 if unreadable is None else 1)
        if unreadable is None:
            return {"batchItemFailures": []}
        index, error = unreadable
        sequence = sequence_number(records[index])
        if sequence is None:
            raise UnreadableRecordError(
                f"record {index} of the batch is unreadable ({type(error).__name__}: {error}) and has no sequence "
                "number to report; failing the whole batch so it is retried, not dropped"
            )
        text = f"{type(error).__name__}: {error}"
        logger.error("unreadable record; retrying from it: %s", text,
                     extra={"sequenceNumber": sequence, "error": text})
        return {"batchItemFailures": [{"itemIdentifier": sequence}]}

    def _publish(self, written: int, *, write_failures: int = 0, unreadable: int = 0) -> None:
        """One EMF line for the batch; a writer that fails is logged, never the batch's failure."""
        if self.metrics is None:
            return
        try:
            self.metrics.publish(
                {
                    ArchiverMetric.ARCHIVED_RECORDS.value: written,
                    ArchiverMetric.ARCHIVE_WRITE_FAILURES.value: write_failures,
                    ArchiverMetric.UNREADABLE_RECORDS.value: unreadable,
                },
                dimensions={FUNCTION_DIMENSION: self.function_name},
            )
        except Exception:  # noqa: BLE001 - the batch's outcome stands whatever the metric does
            logger.exception("could not write the archiver's metrics")

    def _put(self, group: Group, key: str) -> str:
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=group.body(), ContentType="application/x-ndjson")
        return key

    def replay(
        self, failure_bucket: str, failure_prefix: str = FAILURE_PREFIX, *, done_prefix: str = DONE_PREFIX
    ) -> dict[str, Any]:
        """Archive the records of every failure record under ``failure_prefix``, as the live path would.

        Each failure object's records are grouped and written exactly as :meth:`archive` writes a
        batch (same keys and bytes, so records already archived are overwritten, never duplicated).
        Only when every record of an object is written is the object moved to ``done_prefix`` + its
        key (copied, then deleted); an object that cannot be read or written stays where it is and is
        reported under ``failed``, and the replay goes on with the next one.

        :param failure_bucket: the S3 on-failure destination bucket.
        :param failure_prefix: where to look for failure records.
            Default: ``"aws/lambda/"`` — where Lambda writes them.
        :param done_prefix: where replayed failure objects are moved.
            Default: ``"done/"``.
        :return: the report,
            ``replayed`` (per failure object: ``failure`` key, ``done`` key, ``records``, archive ``objects``),
            ``failed`` (``failure`` key and ``error``) and ``records`` (the total written).
        :raises ValueError: when ``done_prefix`` is empty or lies under ``failure_prefix`` (a moved
            object would be replayed again).
        """
        if not done_prefix or done_prefix.startswith(failure_prefix):
            raise ValidationError(f"done_prefix {done_prefix!r} must be non-empty and outside {failure_prefix!r}")
        report: dict[str, Any] = {"replayed": [], "failed": [], "records": 0}
        for key in self._failure_keys(failure_bucket, failure_prefix):
            try:
                body = self.s3.get_object(Bucket=failure_bucket, Key=key)["Body"].read()
                records = failure_record_records(json.loads(body))
                groups = group_records(records)
                written = [self._put(group, group.key(self.prefix)) for group in groups]
                done = done_prefix + key
                self.s3.copy_object(
                    Bucket=failure_bucket, Key=done, CopySource={"Bucket": failure_bucket, "Key": key}
                )
                self.s3.delete_object(Bucket=failure_bucket, Key=key)
            except Exception as error:  # noqa: BLE001 - one bad failure record must not stop the others
                text = f"{type(error).__name__}: {error}"
                logger.error("replay failed; failure record left in place: %s %s", key, text,
                             extra={"failure": key, "error": text})
                report["failed"].append({"failure": key, "error": text})
                continue
            logger.info("replayed %s", key,
                        extra={"failure": key, "done": done, "records": len(records), "objects": len(written)})
            report["replayed"].append({"failure": key, "done": done, "records": len(records), "objects": written})
            report["records"] += len(records)
        return report

    def _failure_keys(self, bucket: str, prefix: str) -> list[str]:
        keys, kwargs = [], {"Bucket": bucket, "Prefix": prefix}
        while True:
            page = self.s3.list_objects_v2(**kwargs)
            keys += [o["Key"] for o in page.get("Contents", []) if not o["Key"].endswith("/")]
            if not page.get("IsTruncated"):
                return sorted(keys)
            kwargs["ContinuationToken"] = page["NextContinuationToken"]


def event_records(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The ``Records`` of a DynamoDB Streams invocation event, refusing an event that is not one.

    Lambda always sends ``{"Records": [...]}`` for a stream mapping; an event without ``Records``, or
    with ``Records`` null or not a list, is someone else's event and archiving "nothing" would hide it.

    :param event: the invocation event.
    :raises ValueError: naming what the event holds instead.
    """
    if not isinstance(event, Mapping):
        raise ValidationError(
            f"the event is {type(event).__name__}, not a DynamoDB Streams event ({{'Records': [...]}})"
        )
    if "Records" not in event:
        raise ValidationError(
            f"the event has no Records (keys: {sorted(map(str, event))}); not a DynamoDB Streams event"
        )
    records = event["Records"]
    if not isinstance(records, list):
        raise ValidationError(f"the event's Records is {records!r:.60}, not a list of stream records")
    return records


def failure_record_records(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The stream records of an S3 on-failure destination's invocation record.

    AWS documents the record Lambda writes for a DynamoDB stream mapping ("Retain discarded records
    for a DynamoDB event source in Lambda",
    https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html) as::

        {"requestContext": {"requestId": ..., "functionArn": ..., "condition": "RetryAttemptsExhausted",
                            "approximateInvokeCount": 1},
         "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
         "version": "1.0", "timestamp": "2019-11-14T00:13:49.717Z",
         "DDBStreamBatchInfo": {"shardId": ..., "startSequenceNumber": ..., "endSequenceNumber": ...,
                                "approximateArrivalOfFirstRecord": ..., "approximateArrivalOfLastRecord": ...,
                                "batchSize": 1, "streamArn": ...},
         "payload": "<Whole Event>"  // Only available in S3}

    stored under ``aws/lambda/<ESM-UUID>/<shardID>/YYYY/MM/DD/YYYY-MM-DDTHH.MM.SS-<Random UUID>``.
    The payload is the whole event the function was invoked with (``{"Records": [...]}``); it is
    accepted as JSON text (as the example shows it) or as an object.

    :param document: the parsed failure object.
    :raises ValueError: when it is not a DynamoDB stream failure record with a payload.
    """
    if not isinstance(document, Mapping) or "DDBStreamBatchInfo" not in document:
        raise ValidationError("not a DynamoDB stream failure record (no DDBStreamBatchInfo)")
    payload = document.get("payload")
    if isinstance(payload, str | bytes):
        payload = json.loads(payload)
    if not isinstance(payload, Mapping) or not isinstance(payload.get("Records"), list):
        raise ValidationError(
            "failure record has no payload with Records: only an S3 on-failure destination keeps the records"
        )
    return payload["Records"]


#: Exit codes of ``cdk-ts replay``, as every ``cdk-ts`` command: 1 some failure records were left in place,
#: 2 a usage error, 3 an AWS call failed (credentials, bucket, endpoint) before anything was replayed.
EXIT_LEFT_IN_PLACE, EXIT_USAGE, EXIT_AWS = 1, 2, 3


def main(argv: list[str] | None = None, *, s3_client=None) -> int:
    """``cdk-ts replay --bucket FAILURES [--prefix aws/lambda/] [--archive-bucket ...] [--region ...] [--json]``.

    Prints what was replayed and what was left in place (``--json``: the report of
    :meth:`StreamRecordArchiver.replay`); progress goes to stderr. Exit codes: 0 everything replayed, 1 failure
    records left in place, 2 usage error, 3 an AWS call failed (one line on stderr, never a traceback).

    :param argv: the command line after the program name (``replay`` and its flags).
        Default: None — ``sys.argv[1:]``.
    :param s3_client: the boto3 S3 client to use.
        Default: None — one is created on first use.
    """
    import sys

    replay, args = _replay_arguments(argv)
    handler = logging.StreamHandler(sys.stderr)  # progress on stderr, the report alone on stdout
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    if s3_client is None and args.region:
        import boto3

        s3_client = boto3.client("s3", region_name=args.region)
    try:
        archiver = StreamRecordArchiver(args.archive_bucket, args.archive_prefix, s3_client=s3_client)
        report = archiver.replay(args.bucket, args.prefix, done_prefix=args.done_prefix)
    except ValidationError as error:
        replay.error(str(error))
    except Exception as error:  # noqa: BLE001 - botocore's errors: credentials, bucket, endpoint
        print(f"{replay.prog}: AWS error: {_aws_error_text(error, args)}", file=sys.stderr)
        return EXIT_AWS
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    print(json.dumps(report, indent=2) if args.json else _replay_text(report, args))
    return EXIT_LEFT_IN_PLACE if report["failed"] else 0


def _replay_arguments(argv: list[str] | None):
    """The ``replay`` parser (its ``prog`` is ``cdk-ts replay``) and the parsed flags; usage errors exit 2."""
    import argparse
    import os

    parser = argparse.ArgumentParser(prog="cdk-ts")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser(
        "replay", help="archive the records of S3 on-failure destination records",
        description="Archive the stream records Lambda kept in an S3 on-failure destination, as the live path "
        "would, then move each failure record under --done-prefix. Exit codes: 0 all replayed; 1 some left in "
        "place; 2 usage error; 3 an AWS call failed.",
    )
    replay.add_argument("--bucket", required=True, help="the failure destination bucket")
    replay.add_argument("--prefix", default=FAILURE_PREFIX, help=f"failure records' prefix (default {FAILURE_PREFIX})")
    replay.add_argument("--done-prefix", default=DONE_PREFIX, help=f"where replayed ones go (default {DONE_PREFIX})")
    replay.add_argument(
        "--archive-bucket", default=_environment.read(os.environ, ENV_BUCKET), help=f"default ${ENV_BUCKET}"
    )
    replay.add_argument(
        "--archive-prefix",
        default=_environment.read(os.environ, ENV_PREFIX, "dynamodb/"),
        help=f"default ${ENV_PREFIX} or dynamodb/",
    )
    replay.add_argument("--json", action="store_true", help="print the report as JSON for scripts")
    replay.add_argument("--region", help="the AWS Region (default: AWS_REGION, AWS_DEFAULT_REGION or the profile's)")
    args = parser.parse_args(argv)
    if not args.archive_bucket:
        replay.error(f"--archive-bucket is required (or set {ENV_BUCKET})")
    return replay, args


def _aws_error_text(error: BaseException, args) -> str:
    """``Type: message``, naming the flag when S3 says the failure bucket does not exist."""
    text = f"{type(error).__name__}: {error}"
    if error_code(error) == "NoSuchBucket" and getattr(error, "operation_name", "") == "ListObjectsV2":
        text += f" (--bucket {args.bucket})"
    return text


def _replay_text(report: Mapping[str, Any], args) -> str:
    """The replay report for people: a summary line, then each failure record replayed or left in place."""
    lines = [
        f"Replay of s3://{args.bucket}/{args.prefix} into s3://{args.archive_bucket}/{args.archive_prefix}: "
        f"{len(report['replayed'])} failure record(s) replayed ({report['records']} stream records), "
        f"{len(report['failed'])} left in place"
    ]
    lines += [
        f"  replayed: {done['failure']} -> {done['done']} ({done['records']} records, {len(done['objects'])} objects)"
        for done in report["replayed"]
    ]
    lines += [f"  left in place: {failed['failure']}: {failed['error']}" for failed in report["failed"]]
    return "\n".join(lines)
