"""DynamoDB Streams records to gzip JSON Lines objects in S3, at least once, with partial-batch failures.

One object per run of consecutive records of one table and hour, keyed
``{prefix}table={name}/dt=YYYY-MM-DD/hour=HH/{stream}-{firstSeq}-{lastSeq}.jsonl.gz``. The key and
the bytes depend only on the records, so a retried batch overwrites its own objects instead of
duplicating them. Every line carries ``eventID`` for readers that deduplicate (see README).

Every field of a line is a JSON string (or null): ``keys``, ``newImage``, ``oldImage`` and
``userIdentity`` hold DynamoDB JSON *as text*, so any JSON reader takes any item (attribute names
that differ only in case, lists of mixed types, 38-digit numbers, which DynamoDB JSON keeps as text).

Replay: when a batch keeps failing, Lambda writes the whole invocation record to the S3 on-failure
destination; :meth:`StreamRecordArchiver.replay` (``python -m cdk_ts_runtime.archiver replay ...``)
archives those records exactly as the live path does and then moves each failure object under
``done/``.

Why not Powertools' batch utilities: they report failures record by record, while this function
writes a *group* of records as one object; for an ordered stream the right report is the first
sequence number of the first group that failed, with nothing after it written. The Lambda asset
also holds only the standard library and boto3.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cdk_ts_runtime._aws import LazyClient

ENV_BUCKET = "ARCHIVE_BUCKET"
ENV_PREFIX = "ARCHIVE_PREFIX"
#: The S3 on-failure destination bucket of the archiver's mappings (what a replay reads by default).
ENV_FAILURE_BUCKET = "ARCHIVE_FAILURE_BUCKET"
#: Where Lambda writes failure records in an S3 on-failure destination (AWS chooses the keys below it).
FAILURE_PREFIX = "aws/lambda/"
#: Where a replayed failure record is moved to: ``done/`` + its original key.
DONE_PREFIX = "done/"
_TABLE_IN_ARN = re.compile(r":table/([^/]+)/stream/([^/]+)$")
#: A DynamoDB number as it may stand in JSON unquoted: JSON's number grammar (DynamoDB's own text is a subset).
_JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_MAX_DIGITS = 38  # DynamoDB numbers carry up to 38 significant digits
_READ_ERRORS = (KeyError, ValueError, TypeError, OverflowError, OSError, AttributeError)


class UnreadableRecordError(ValueError):
    """A stream record that cannot be archived and cannot be reported by sequence number: the whole batch fails."""


def dynamodb_number(text: Any) -> str:
    """``text`` after checking it is a number DynamoDB stores (at most 38 significant digits) in JSON's grammar."""
    if not isinstance(text, str) or not _JSON_NUMBER.fullmatch(text):
        raise ValueError(f"{text!r} is not a DynamoDB number")
    if len(text) <= _MAX_DIGITS:
        return text
    digits = text.lstrip("-").split("e")[0].split("E")[0].replace(".", "").lstrip("0")
    if len(digits.rstrip("0")) > _MAX_DIGITS:
        raise ValueError(f"{text!r} has more than {_MAX_DIGITS} significant digits")
    return text


def typed_value(attribute: Mapping[str, Any]) -> dict[str, Any]:
    """One AttributeValue as DynamoDB JSON: numbers checked and kept as text, binary as base64 text."""
    (kind, value), = attribute.items()
    if kind in ("S", "BOOL", "NULL"):
        if kind == "S" and not isinstance(value, str):
            raise ValueError(f"S value {value!r} is not a string")
        return {kind: bool(value) if kind != "S" else value}
    if kind == "N":
        return {"N": dynamodb_number(value)}
    if kind == "B":
        return {"B": _base64(value)}
    if kind == "SS":
        return {"SS": [str(v) for v in value]}
    if kind == "NS":
        return {"NS": [dynamodb_number(n) for n in value]}
    if kind == "BS":
        return {"BS": [_base64(b) for b in value]}
    if kind == "M":
        return {"M": typed_image(value)}
    if kind == "L":
        return {"L": [typed_value(v) for v in value]}
    raise ValueError(f"unknown AttributeValue type {kind!r}")


def typed_image(image: Mapping[str, Any]) -> dict[str, Any]:
    """An item (or key) as DynamoDB JSON, checked attribute by attribute (see :func:`typed_value`)."""
    return {name: typed_value(value) for name, value in image.items()}


def dynamodb_json_text(image: Mapping[str, Any] | None) -> str | None:
    """An item as compact DynamoDB JSON text (None stays None): what a line holds in ``keys``/``newImage``/``oldImage``.

    Get an attribute out exactly: Athena ``json_extract_scalar(newimage, '$["Url"].S')``, DuckDB
    ``json_extract_string(newImage, '$.Url.S')``; numbers come back as their exact text (``.N``).
    """
    if image is None:
        return None
    return json.dumps(typed_image(image), separators=(",", ":"), ensure_ascii=False)


def _base64(value: bytes | str) -> str:
    # Lambda hands binary over base64-encoded already; boto3's GetRecords hands bytes.
    return value if isinstance(value, str) else base64.b64encode(value).decode()


def _created_at(record: Mapping[str, Any]) -> datetime:
    raw = record["dynamodb"]["ApproximateCreationDateTime"]
    if isinstance(raw, datetime):
        return raw.astimezone(UTC)
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ValueError(f"ApproximateCreationDateTime {raw!r} is not a time")
    return datetime.fromtimestamp(float(raw), UTC)


def sequence_number(record: Mapping[str, Any]) -> str | None:
    """The record's sequence number, or None when it has none that Lambda could retry from."""
    change = record.get("dynamodb") if isinstance(record, Mapping) else None
    value = change.get("SequenceNumber") if isinstance(change, Mapping) else None
    return value if isinstance(value, str) and value.strip() else None


def table_and_stream(record: Mapping[str, Any]) -> tuple[str, str]:
    """The table name and stream label from the record's ``eventSourceARN``."""
    arn = record.get("eventSourceARN", "")
    match = _TABLE_IN_ARN.search(arn)
    if not match:
        raise ValueError(f"record {record.get('eventID')!r} has no DynamoDB stream ARN (eventSourceARN {arn!r})")
    return match.group(1), re.sub(r"[^0-9A-Za-z]", "", match.group(2))


def archive_line(record: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object written for one stream record."""
    change = record["dynamodb"]
    table, _stream = table_and_stream(record)
    identity = record.get("userIdentity")
    return {
        "eventID": record["eventID"],
        "eventName": record["eventName"],
        "sequenceNumber": change["SequenceNumber"],
        "approximateCreationDateTime": _created_at(record).isoformat(),
        "table": table,
        "keys": dynamodb_json_text(change.get("Keys", {})),
        "newImage": dynamodb_json_text(change.get("NewImage")),
        "oldImage": dynamodb_json_text(change.get("OldImage")),
        # TTL deletions: {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
        "userIdentity": json.dumps(identity, separators=(",", ":"), sort_keys=True) if identity else None,
    }


@dataclass
class Group:
    """Consecutive records of one table and hour: one S3 object.

    :param table: the source table's name.
    :param stream: the stream label (from the stream ARN, alphanumerics only).
    :param hour: the start of the UTC hour the records were created in.
    :param records: the stream records, in stream order.
        Default: an empty list.
    :param lines: each record's JSON line, converted when the record was added.
        Default: an empty list.
    """

    table: str
    stream: str
    hour: datetime
    records: list[Mapping[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def first_sequence(self) -> str:
        """Sequence number of the group's first record (what a failure reports)."""
        return self.records[0]["dynamodb"]["SequenceNumber"]

    def key(self, prefix: str) -> str:
        """The object key; the same records always give the same key."""
        last = self.records[-1]["dynamodb"]["SequenceNumber"]
        return (
            f"{prefix}table={self.table}/dt={self.hour:%Y-%m-%d}/hour={self.hour:%H}/"
            f"{self.stream}-{self.first_sequence}-{last}.jsonl.gz"
        )

    def body(self) -> bytes:
        """Gzip JSON Lines; mtime 0 keeps the bytes identical when a batch is retried."""
        text = "".join(line + "\n" for line in self.lines)
        return gzip.compress(text.encode(), mtime=0)


def group_records(records: Iterable[Mapping[str, Any]]) -> list[Group]:
    """Split a batch into runs of consecutive records with the same table and hour, in stream order.

    Raises ``ValueError`` (or ``KeyError``...) at the first record that cannot be archived.
    """
    groups: list[Group] = []
    for record in records:
        _add(groups, record)
    return groups


def readable_groups(records: list[Mapping[str, Any]]) -> tuple[list[Group], tuple[int, Exception] | None]:
    """The groups of every record before the first unreadable one, and (its index, the error) if there is one."""
    groups: list[Group] = []
    for index, record in enumerate(records):
        try:
            _add(groups, record)
        except _READ_ERRORS as error:
            return groups, (index, error)
    return groups, None


def _add(groups: list[Group], record: Mapping[str, Any]) -> None:
    if sequence_number(record) is None:
        raise ValueError(f"record {record.get('eventID')!r} has no sequence number")
    table, stream = table_and_stream(record)
    hour = _created_at(record).replace(minute=0, second=0, microsecond=0)
    line = json.dumps(archive_line(record), separators=(",", ":"))
    current = groups[-1] if groups else None
    if current is None or (current.table, current.stream, current.hour) != (table, stream, hour):
        current = Group(table, stream, hour)
        groups.append(current)
    current.records.append(record)
    current.lines.append(line)


class StreamRecordArchiver:
    """Writes a stream batch to S3 group by group; stops at the first failure and reports it.

    The runtime half of the ``StreamArchiver`` construct; ``s3_client`` defaults to a client created on first use.
    """

    def __init__(self, bucket: str, prefix: str = "dynamodb/", *, s3_client=None) -> None:
        """Name the target; no AWS call is made until the first batch.

        :param bucket: the bucket's name.
        :param prefix: key prefix of every object.
            Default: ``"dynamodb/"``.
        :param s3_client: the boto3 S3 client to use.
            Default: None — one is created on first use.
        :raises ValueError: for an empty bucket name.
        """
        if not bucket:
            raise ValueError("bucket must be a bucket name")
        self.bucket = bucket
        self.prefix = prefix
        self._s3 = LazyClient("s3", s3_client)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> StreamRecordArchiver:
        """The archiver the construct configured (``ARCHIVE_BUCKET``, ``ARCHIVE_PREFIX``).

        :param env: the environment, usually ``os.environ``; an unset ``ARCHIVE_PREFIX`` means ``"dynamodb/"``.
        :param kwargs: further constructor arguments (``s3_client``).
        :raises KeyError: when ``ARCHIVE_BUCKET`` is not set.
        """
        if not env.get(ENV_BUCKET):
            raise KeyError(f"environment variable {ENV_BUCKET} is not set")
        return cls(env[ENV_BUCKET], env.get(ENV_PREFIX, "dynamodb/"), **kwargs)

    @property
    def s3(self):
        """The S3 client (created on first use)."""
        return self._s3.get()

    def archive(self, records: list[Mapping[str, Any]]) -> dict[str, list[dict[str, str]]]:
        """Archive a batch; the response tells Lambda which sequence number to retry from, if any.

        The failure list is empty only when every record was written. Groups before an unreadable
        record are written and the unreadable record is reported; one with no usable sequence number
        raises :class:`UnreadableRecordError` (the whole batch is retried) rather than being dropped.
        """
        groups, unreadable = readable_groups(list(records))
        for group in groups:
            key = group.key(self.prefix)
            try:
                self._put(group)
            except Exception as error:  # noqa: BLE001 - any failure must become a retry, never a loss
                _log("ERROR", "archive write failed; retrying from this group", key=key,
                     sequenceNumber=group.first_sequence, error=f"{type(error).__name__}: {error}")
                return {"batchItemFailures": [{"itemIdentifier": group.first_sequence}]}
            _log("INFO", "archived", key=key, records=len(group.records))
        if unreadable is None:
            return {"batchItemFailures": []}
        index, error = unreadable
        sequence = sequence_number(records[index])
        if sequence is None:
            raise UnreadableRecordError(
                f"record {index} of the batch is unreadable ({type(error).__name__}: {error}) and has no sequence "
                "number to report; failing the whole batch so it is retried, not dropped"
            )
        _log("ERROR", "unreadable record; retrying from it", sequenceNumber=sequence,
             error=f"{type(error).__name__}: {error}")
        return {"batchItemFailures": [{"itemIdentifier": sequence}]}


    def _put(self, group: Group) -> str:
        key = group.key(self.prefix)
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
            raise ValueError(f"done_prefix {done_prefix!r} must be non-empty and outside {failure_prefix!r}")
        report: dict[str, Any] = {"replayed": [], "failed": [], "records": 0}
        for key in self._failure_keys(failure_bucket, failure_prefix):
            try:
                body = self.s3.get_object(Bucket=failure_bucket, Key=key)["Body"].read()
                records = failure_record_records(json.loads(body))
                groups = group_records(records)
                written = [self._put(group) for group in groups]
                done = done_prefix + key
                self.s3.copy_object(
                    Bucket=failure_bucket, Key=done, CopySource={"Bucket": failure_bucket, "Key": key}
                )
                self.s3.delete_object(Bucket=failure_bucket, Key=key)
            except Exception as error:  # noqa: BLE001 - one bad failure record must not stop the others
                text = f"{type(error).__name__}: {error}"
                _log("ERROR", "replay failed; failure record left in place", failure=key, error=text)
                report["failed"].append({"failure": key, "error": text})
                continue
            _log("INFO", "replayed", failure=key, done=done, records=len(records), objects=len(written))
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
        raise ValueError("not a DynamoDB stream failure record (no DDBStreamBatchInfo)")
    payload = document.get("payload")
    if isinstance(payload, str | bytes):
        payload = json.loads(payload)
    if not isinstance(payload, Mapping) or not isinstance(payload.get("Records"), list):
        raise ValueError(
            "failure record has no payload with Records: only an S3 on-failure destination keeps the records"
        )
    return payload["Records"]


def main(argv: list[str] | None = None, *, s3_client=None) -> int:
    """``python -m cdk_ts_runtime.archiver replay --bucket FAILURES [--prefix aws/lambda/] [--archive-bucket ...]``.

    Prints the replay report as JSON; exits 1 when any failure record could not be replayed.

    :param argv: the command line after the program name.
        Default: None — ``sys.argv[1:]``.
    :param s3_client: the boto3 S3 client to use.
        Default: None — one is created on first use.
    """
    import argparse
    import os

    parser = argparse.ArgumentParser(prog="python -m cdk_ts_runtime.archiver")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="archive the records of S3 on-failure destination records")
    replay.add_argument("--bucket", required=True, help="the failure destination bucket")
    replay.add_argument("--prefix", default=FAILURE_PREFIX, help=f"failure records' prefix (default {FAILURE_PREFIX})")
    replay.add_argument("--done-prefix", default=DONE_PREFIX, help=f"where replayed ones go (default {DONE_PREFIX})")
    replay.add_argument("--archive-bucket", default=os.environ.get(ENV_BUCKET), help=f"default ${ENV_BUCKET}")
    replay.add_argument(
        "--archive-prefix", default=os.environ.get(ENV_PREFIX, "dynamodb/"), help=f"default ${ENV_PREFIX} or dynamodb/"
    )
    args = parser.parse_args(argv)
    if not args.archive_bucket:
        parser.error(f"--archive-bucket is required (or set {ENV_BUCKET})")
    archiver = StreamRecordArchiver(args.archive_bucket, args.archive_prefix, s3_client=s3_client)
    report = archiver.replay(args.bucket, args.prefix, done_prefix=args.done_prefix)
    print(json.dumps(report, indent=2))
    return 1 if report["failed"] else 0


def _log(level: str, message: str, **fields: Any) -> None:
    # stderr: Lambda sends it to the log group too, and the command line keeps stdout for its report.
    print(json.dumps({"level": level, "message": message, **fields}, default=str), file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
