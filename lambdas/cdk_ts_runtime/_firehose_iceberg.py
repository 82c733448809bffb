"""DynamoDB changes, as Kinesis Data Streams carries them, turned into Firehose records routed to an Iceberg table.

The streaming columnar sink (``cdk_ts.IcebergTableSink``) is DynamoDB -> Kinesis Data Streams -> Amazon
Data Firehose -> an Apache Iceberg table in Amazon S3 Tables. Firehose calls a transformation function
with a batch of Kinesis records; this module answers each with the record Firehose expects back:

* ``recordId`` (the one it was given), ``result`` (``Ok``, ``Dropped`` or ``ProcessingFailed``) and
  ``data`` (base64) -- Firehose developer guide, "Required parameters for data transformation"
  (https://docs.aws.amazon.com/firehose/latest/dev/data-transformation-status-model.html);
* ``metadata.otfMetadata`` with ``destinationDatabaseName``, ``destinationTableName`` and ``operation``
  (``insert``, ``update`` or ``delete``) -- "Route incoming records to different Iceberg tables", section
  "Provide routing information to Firehose with Lambda function"
  (https://docs.aws.amazon.com/firehose/latest/dev/apache-iceberg-format-input-record-different.html).

Each Kinesis record's data is the change DynamoDB wrote to the stream: ``eventID``, ``eventName``,
``tableName``, ``userIdentity`` and ``dynamodb`` (``Keys``, ``NewImage``, ``OldImage``,
``ApproximateCreationDateTime`` in milliseconds or microseconds, the precision the table's Kinesis
destination was given). That record has no DynamoDB ``SequenceNumber``; the row's ``sequencenumber`` is
the Kinesis record's, which orders the records of one shard.

The rows have the compacted layer's columns (``eventid`` ... ``useridentity``, the declared columns, then
``table``/``dt``/``hour``), with the declared columns read by the compaction's own
:func:`~cdk_ts_runtime._compaction.column_value`, so a partition reads the same whichever path wrote it.
Images are kept whole (the compaction moves exactly-held attributes into their columns;
:func:`~cdk_ts_runtime._compaction.restore_image` gives the same image back from either row).

Standard library and boto3 only (no pyarrow): the transformation function needs no layer.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._archive_lines import dynamodb_json_text
from cdk_ts_runtime._compaction import column_value
from cdk_ts_runtime._compaction_plan import ColumnSpec
from cdk_ts_runtime._errors import ValidationError

logger = logging.getLogger(__name__)

#: ``{"database": ..., "table": ..., "mode": ..., "columns": [...]}``, set by ``IcebergTableSink`` on its function.
ENV_ROUTE = _environment.ICEBERG_ROUTE

#: Firehose's three answers for a record (data-transformation-status-model).
OK, DROPPED, FAILED = "Ok", "Dropped", "ProcessingFailed"

#: A decimal column's value travels as a JSON number with its exact digits: json cannot write a Decimal.
_EXACT = "\u0000decimal:"
_EXACT_TEXT = re.compile(r'"\\u0000decimal:([-0-9.Ee+]+)"')


class SinkMode(StrEnum):
    """What the Iceberg table holds: every change (like the archive), or each item's latest image."""

    #: One row per change, ``insert``; partitioned by ``table``, ``dt`` and ``hour`` like the compacted
    #: layer. Unique key ``eventid``. A change DynamoDB sends twice is two rows: read as the raw layer is
    #: read, one row per ``eventid``.
    CHANGES = "changes"
    #: One row per item: ``INSERT`` is ``insert``, ``MODIFY`` is ``update``, ``REMOVE`` is ``delete``,
    #: matched on the unique keys ``table`` and ``keys``. Firehose does not keep records in order, so two
    #: changes to one item in one buffer may land in either order: for data whose latest image matters to
    #: the second, use ``CHANGES`` and pick the latest row per key when reading.
    LATEST = "latest"


def unique_keys(mode: SinkMode) -> list[str]:
    """The columns Firehose matches an ``update`` or ``delete`` on (``UniqueKeys`` of the stream's table)."""
    return ["eventid"] if SinkMode(mode) is SinkMode.CHANGES else ["table", "keys"]


def partition_columns(mode: SinkMode) -> list[str]:
    """The Iceberg table's identity partitions: the archive's ``table/dt/hour``, or ``table`` for latest images.

    An equality delete applies within its partition only, so an item whose row moved to another hour would
    never lose its old row: latest images are partitioned by source table alone.
    """
    return ["table", "dt", "hour"] if SinkMode(mode) is SinkMode.CHANGES else ["table"]


@dataclass(frozen=True)
class IcebergRoute:
    """Where the transformation sends every record, and what each row holds.

    :param database: the destination database (the S3 Tables namespace), ``destinationDatabaseName``.
    :param table: the destination table, ``destinationTableName``.
    :param mode: :class:`SinkMode` (or its value).
        Default: ``SinkMode.CHANGES``.
    :param columns: typed columns read from the item (``ColumnSpec`` or what ``ColumnSpec.parse`` takes).
        Default: none.
    """

    database: str
    table: str
    mode: SinkMode = SinkMode.CHANGES
    columns: tuple[ColumnSpec, ...] = ()

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "mode", SinkMode(self.mode))
        except ValueError:
            raise ValidationError(f"mode {self.mode!r} is not one of {[m.value for m in SinkMode]}") from None
        object.__setattr__(self, "columns", tuple(ColumnSpec.parse(c) for c in self.columns))
        problems = [p for c in self.columns for p in c.problems()]
        for what, name in (("database", self.database), ("table", self.table)):
            if not re.fullmatch(r"[a-z0-9_]{1,255}", name or ""):
                problems.append(f"{what} {name!r} must be 1-255 of [a-z0-9_] (Firehose takes no hyphens)")
        if problems:
            raise ValidationError("; ".join(problems))

    def to_json(self) -> str:
        """The route as the environment variable :data:`ENV_ROUTE` holds it."""
        return json.dumps({
            "database": self.database, "table": self.table, "mode": self.mode.value,
            "columns": [{"name": c.name, "type": c.type, "attribute": c.source} for c in self.columns],
        }, separators=(",", ":"))

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> IcebergRoute:
        """The route ``CDK_TS_ICEBERG_ROUTE`` describes.

        :raises EnvironmentVariableMissingError: (a ``KeyError``) when the variable is not set.
        """
        env = _environment.required(env, (ENV_ROUTE,), "IcebergTableSink sets it on its transformation function")
        config = json.loads(env[ENV_ROUTE])
        return cls(config["database"], config["table"], config.get("mode", "changes"),
                   tuple(ColumnSpec(**c) for c in config.get("columns", [])))


def created_at_micros(value: Any) -> int:
    """``ApproximateCreationDateTime`` as microseconds since the epoch, the unit Firehose takes for timestamps.

    Kinesis Data Streams records carry milliseconds or microseconds (the destination's
    ``ApproximateCreationDateTimePrecision``), DynamoDB Streams records seconds; the magnitude tells them
    apart for any time between 1971 and 2286.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValidationError(f"ApproximateCreationDateTime {value!r} is not a time")
    number = Decimal(str(value))
    if number >= 10**14:
        return int(number)
    if number >= 10**11:
        return int(number * 1000)
    return int(number * 1_000_000)


def change_from_kinesis(record: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The DynamoDB change a Firehose record carries, and its Kinesis sequence number (None when not given)."""
    try:
        change = json.loads(base64.b64decode(record["data"], validate=True))
    except (KeyError, TypeError, binascii.Error, ValueError) as error:
        raise ValidationError(f"record {record.get('recordId')!r}: data is not base64 JSON ({error})") from None
    if not isinstance(change, dict) or change.get("eventSource") != "aws:dynamodb" or "dynamodb" not in change:
        raise ValidationError(f"record {record.get('recordId')!r} is not a DynamoDB change (eventSource aws:dynamodb)")
    metadata = record.get("kinesisRecordMetadata") or {}
    return change, metadata.get("sequenceNumber")


def _canonical_keys(keys: Mapping[str, Any]) -> str:
    """The item's key as DynamoDB JSON text with attributes in name order: the same text for every change."""
    return dynamodb_json_text(dict(sorted(keys.items())))


def iceberg_row(change: Mapping[str, Any], sequence: str | None, route: IcebergRoute) -> dict[str, Any]:
    """The Iceberg row of one change: the compacted layer's columns, images whole, declared columns typed."""
    detail = change["dynamodb"]
    micros = created_at_micros(detail["ApproximateCreationDateTime"])
    created = datetime.fromtimestamp(micros / 1_000_000, UTC)
    new, old = detail.get("NewImage"), detail.get("OldImage")
    identity = change.get("userIdentity")
    image = new if new is not None else old if old is not None else detail.get("Keys") or {}
    row: dict[str, Any] = {
        "eventid": change["eventID"],
        "eventname": change["eventName"],
        "sequencenumber": sequence or "",
        "approximatecreationdatetime": micros,
        "keys": _canonical_keys(detail.get("Keys") or {}),
        "newimage": dynamodb_json_text(new),
        "oldimage": dynamodb_json_text(old),
        "useridentity": json.dumps(identity, separators=(",", ":"), sort_keys=True) if identity else None,
    }
    for spec in route.columns:
        value = column_value(spec, image.get(spec.source))
        row[spec.name] = f"{_EXACT}{value}" if isinstance(value, Decimal) else value
    row["table"] = change["tableName"]
    if route.mode is SinkMode.CHANGES:
        row["dt"], row["hour"] = f"{created:%Y-%m-%d}", f"{created:%H}"
    return row


def operation(change: Mapping[str, Any], mode: SinkMode) -> str:
    """The Iceberg operation for a change: always ``insert`` for every change; for latest images by event."""
    if SinkMode(mode) is SinkMode.CHANGES:
        return "insert"
    try:
        return {"INSERT": "insert", "MODIFY": "update", "REMOVE": "delete"}[change["eventName"]]
    except KeyError:
        raise ValidationError(f"eventName {change.get('eventName')!r} is not INSERT, MODIFY or REMOVE") from None


def row_json(row: Mapping[str, Any]) -> str:
    """The row as one JSON object; a decimal column's value is a JSON number with its exact digits."""
    return _EXACT_TEXT.sub(r"\1", json.dumps(row, separators=(",", ":"), ensure_ascii=False))


class FirehoseIcebergTransform:
    """Answers a Firehose transformation batch: one routed Iceberg row per DynamoDB change.

    A record that is not a readable DynamoDB change is answered ``ProcessingFailed`` with its data as given,
    so Firehose writes it under the error prefix (``processing-failed/``) and the others are delivered.

    :param route: where every record goes and what each row holds.
    """

    def __init__(self, route: IcebergRoute) -> None:
        self.route = route

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> FirehoseIcebergTransform:
        """The transform for the route ``CDK_TS_ICEBERG_ROUTE`` names."""
        return cls(IcebergRoute.from_env(env))

    def transform(self, event: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """``{"records": [...]}``: each of ``event["records"]`` answered, in order, with the same ``recordId``."""
        records = event.get("records") if isinstance(event, Mapping) else None
        if not isinstance(records, list):
            raise ValidationError("the event has no 'records' list: is this function a Firehose transformation?")
        return {"records": [self._answer(record) for record in records]}

    def _answer(self, record: Mapping[str, Any]) -> dict[str, Any]:
        try:
            change, sequence = change_from_kinesis(record)
            row = iceberg_row(change, sequence, self.route)
            action = operation(change, self.route.mode)
        except (KeyError, TypeError, ValueError) as error:
            logger.warning("record %s not transformed: %s: %s", record.get("recordId"), type(error).__name__, error)
            return {"recordId": record.get("recordId"), "result": FAILED, "data": record.get("data", "")}
        return {
            "recordId": record["recordId"],
            "result": OK,
            "data": base64.b64encode(row_json(row).encode()).decode(),
            "metadata": {"otfMetadata": {
                "destinationDatabaseName": self.route.database,
                "destinationTableName": self.route.table,
                "operation": action,
            }},
        }
