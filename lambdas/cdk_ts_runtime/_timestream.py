"""TimestreamWriter: JSON events to Amazon Timestream multi-measure records, batched with common attributes.

Follows Timestream's modelling guidance: all measures of one event in one MULTI record, dimensions
shared by a whole batch lifted into ``CommonAttributes``, at most 100 records per WriteRecords, and
queries that always carry a time predicate. Amazon Timestream for LiveAnalytics has been closed to
new customers since 2025-06-20; existing customers keep using it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

from cdk_ts_runtime import _environment
from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime._retries import TIMESTREAM_WRITE, RetryPolicy, call_with_retries

BATCH_LIMIT = 100  # WriteRecords takes at most 100 records
RECORD_LIMIT_BYTES = 2048  # a record may be at most 2 KB
#: WriteRecords retried by the writer itself (its client makes one attempt per call, ``TIMESTREAM_WRITE``):
#: throttles, internal errors and dropped connections, full-jitter waits below 0.2 s, 0.4 s, ... up to 5 s.
#: ``max_attempts`` is the writer's; ``RejectedRecordsException`` is an answer, never retried.
WRITE_RETRIES = RetryPolicy(
    max_attempts=5, base_seconds=0.1, cap_seconds=5.0,
    retry_codes=frozenset({"ThrottlingException", "InternalServerException"}),
    retry_errors=(ConnectionClosedError, EndpointConnectionError, ReadTimeoutError),
)
ENV_DATABASE_NAME = _environment.TIMESTREAM_DATABASE_NAME
ENV_TABLE_NAME = _environment.TIMESTREAM_TABLE_NAME


@dataclass
class WriteResult:
    """What a :meth:`TimestreamWriter.write` call achieved.

    :param records_ingested: records Timestream ingested.
        Default: 0.
    :param rejected: every event not written, as a dict with ``event`` and ``reason``.
        Default: an empty list.
    """

    records_ingested: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)


def _to_millis(value: Any) -> str:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return str(int(moment.timestamp() * 1000))
    if isinstance(value, str):
        return _to_millis(datetime.fromisoformat(value))
    if isinstance(value, int | Decimal) and not isinstance(value, bool):
        return str(int(value))  # integers are epoch milliseconds
    raise ValidationError(f"time {value!r} is not a datetime, ISO-8601 text or epoch milliseconds")


def measure_value(name: str, value: Any) -> dict[str, str]:
    """One MULTI measure value with its inferred type (BOOLEAN, BIGINT, DOUBLE, TIMESTAMP, VARCHAR)."""
    if isinstance(value, bool):
        return {"Name": name, "Value": "true" if value else "false", "Type": "BOOLEAN"}
    if isinstance(value, int):
        return {"Name": name, "Value": str(value), "Type": "BIGINT"}
    if isinstance(value, float | Decimal):
        return {"Name": name, "Value": str(value), "Type": "DOUBLE"}
    if isinstance(value, datetime):
        return {"Name": name, "Value": _to_millis(value), "Type": "TIMESTAMP"}
    if isinstance(value, str):
        if len(value) >= 19 and value[4:5] == "-" and value[10:11] == "T":
            try:
                return {"Name": name, "Value": _to_millis(value), "Type": "TIMESTAMP"}
            except ValueError:
                pass
        return {"Name": name, "Value": value, "Type": "VARCHAR"}
    return {"Name": name, "Value": json.dumps(value, default=str, sort_keys=True), "Type": "VARCHAR"}


class TimestreamWriter:
    """Writes JSON events as MULTI records: listed ``dimensions`` become dimensions, the rest measures.

    Timestream for LiveAnalytics takes writes at the endpoint DescribeEndpoints names for the account. boto3
    finds it itself: botocore's service model marks every ``timestream-write`` operation but DescribeEndpoints
    as requiring endpoint discovery, so a client made without ``endpoint_url`` calls DescribeEndpoints before
    its first request, keeps the answer for its ``CachePeriodInMinutes`` and then asks again (developer guide,
    "How the endpoint discovery pattern works": "When using the SDKs, this mapping is transparently handled
    for you"). So the writer needs neither a client nor an endpoint; in a function bound with
    ``TimestreamTable.bind``, :meth:`from_env` reads the table's names.
    """

    def __init__(
        self,
        database_name: str,
        table_name: str,
        *,
        dimensions: Sequence[str],
        time_field: str = "time",
        measure_name: str = "metrics",
        client=None,
        endpoint_url: str | None = None,
        max_attempts: int = 5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Describe the target table and how events map to records.

        :param database_name: the Timestream database.
        :param table_name: the Timestream table.
        :param dimensions: the event attributes that become dimensions, the high-cardinality key first;
            every other attribute (but the time) becomes a measure.
        :param time_field: the event attribute holding the time (datetime, ISO-8601 text or epoch
            milliseconds). Default: ``"time"``.
        :param measure_name: the measure name of every MULTI record.
            Default: ``"metrics"``.
        :param client: a ``timestream-write`` client, used as given; the writer retries throttles itself, so
            give it ``Config(retries={"mode": "standard", "total_max_attempts": 1})`` or each of its attempts
            also carries the SDK's retries.
            Default: None — one is created with one SDK attempt per call: for ``endpoint_url`` if given,
            otherwise for the default Region, finding its endpoint by the SDK's endpoint discovery.
        :param endpoint_url: the ingestion endpoint (a VPC endpoint, say), used when ``client`` is None; a
            client for it makes no DescribeEndpoints call.
            Default: None — the SDK discovers the endpoint.
        :param max_attempts: WriteRecords attempts on throttling, internal errors or a dropped connection.
            Default: 5.
        :param sleep: how to wait between attempts (tests pass a fake).
            Default: ``time.sleep``.
        :raises ValueError: for empty names, no dimensions or a time field that is a dimension (checked
            before a client is made).
        """
        if not database_name or not table_name:
            raise ValidationError("database_name and table_name must not be empty")
        if not dimensions:
            raise ValidationError("dimensions must name at least one event attribute (the high-cardinality key first)")
        if time_field in dimensions:
            raise ValidationError(f"time_field {time_field!r} cannot also be a dimension")
        whole("max_attempts", max_attempts)
        self.database_name = database_name
        self.table_name = table_name
        self.dimensions = list(dimensions)
        self.time_field = time_field
        self.measure_name = measure_name
        #: The ``timestream-write`` client WriteRecords goes through.
        self.client = client or boto3.client("timestream-write", endpoint_url=endpoint_url, config=TIMESTREAM_WRITE)
        self.max_attempts = max_attempts
        self.sleep = sleep

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, dimensions: Sequence[str], **kwargs: Any) -> TimestreamWriter:
        """The writer for the table ``TimestreamTable.bind`` named in the environment.

        Reads ``CDK_TS_TIMESTREAM_DATABASE_NAME`` and ``CDK_TS_TIMESTREAM_TABLE_NAME``. Given neither
        ``client`` nor ``endpoint_url``, the writer's client finds the ingestion endpoint by the SDK's endpoint
        discovery (one DescribeEndpoints before the first write, cached by botocore for the endpoint's
        ``CachePeriodInMinutes``), so keep one writer for the life of the execution environment.

        :param env: the environment, usually ``os.environ``.
        :param dimensions: the event attributes that become dimensions, the high-cardinality key first.
        :param kwargs: further constructor arguments (``client``, ``endpoint_url``, ``time_field``,
            ``measure_name``, ``max_attempts``, ``sleep``).
        :raises EnvironmentVariableMissingError: (a ``KeyError``) naming each variable that is not set.
        :raises ValueError: for what the constructor refuses (checked before a client is made).
        """
        env = _environment.required(
            env, (ENV_DATABASE_NAME, ENV_TABLE_NAME), "bind the function with TimestreamTable.bind"
        )
        return cls(env[ENV_DATABASE_NAME], env[ENV_TABLE_NAME], dimensions=dimensions, **kwargs)

    def record(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """The MULTI record for one event; ``ValueError`` names what makes it unwritable."""
        missing = [d for d in self.dimensions if event.get(d) in (None, "")]
        if missing:
            raise ValidationError(f"dimension(s) {missing} missing")
        if event.get(self.time_field) is None:
            raise ValidationError(f"time field {self.time_field!r} missing")
        measures = [
            measure_value(name, value)
            for name, value in event.items()
            if name not in self.dimensions and name != self.time_field and value is not None
        ]
        if not measures:
            raise ValidationError("no measures: every attribute is a dimension or the time")
        record = {
            "Dimensions": [{"Name": d, "Value": str(event[d])} for d in self.dimensions],
            "MeasureName": self.measure_name,
            "MeasureValueType": "MULTI",
            "MeasureValues": measures,
            "Time": _to_millis(event[self.time_field]),
            "TimeUnit": "MILLISECONDS",
        }
        if len(json.dumps(record)) > RECORD_LIMIT_BYTES:
            raise ValidationError(f"record larger than {RECORD_LIMIT_BYTES} bytes")
        return record

    def write(self, events: Sequence[Mapping[str, Any]]) -> WriteResult:
        """Write events in batches of 100; returns the count ingested and every rejected event with its reason."""
        result = WriteResult()
        batch: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
        for event in events:
            try:
                batch.append((event, self.record(event)))
            except ValueError as error:
                result.rejected.append({"event": dict(event), "reason": str(error)})
            if len(batch) == BATCH_LIMIT:
                self._send(batch, result)
                batch = []
        if batch:
            self._send(batch, result)
        return result

    def _send(self, batch: list[tuple[Mapping[str, Any], dict[str, Any]]], result: WriteResult) -> None:
        records, common = lift_common_attributes([record for _event, record in batch])

        def write(_attempt: int) -> None:
            try:
                response = self.client.write_records(
                    DatabaseName=self.database_name, TableName=self.table_name, CommonAttributes=common,
                    Records=records,
                )
            except ClientError as error:
                if error_code(error) != "RejectedRecordsException":
                    raise
                rejected = error.response.get("RejectedRecords", [])
                for entry in rejected:
                    event = batch[entry["RecordIndex"]][0]
                    result.rejected.append({"event": dict(event), "reason": entry.get("Reason", "rejected")})
                result.records_ingested += len(records) - len(rejected)
                return
            result.records_ingested += response.get("RecordsIngested", {}).get("Total", len(records))

        call_with_retries(write, replace(WRITE_RETRIES, max_attempts=self.max_attempts), sleep=self.sleep)


def lift_common_attributes(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Move what every record shares (dimensions, measure name/type, time unit) into ``CommonAttributes``."""
    first = records[0]
    shared = [
        dimension
        for dimension in first["Dimensions"]
        if all(dimension in record["Dimensions"] for record in records[1:])
    ]
    common: dict[str, Any] = {
        "MeasureName": first["MeasureName"],
        "MeasureValueType": "MULTI",
        "TimeUnit": "MILLISECONDS",
    }
    if shared:
        common["Dimensions"] = shared
    slimmed = []
    for record in records:
        rest = {k: v for k, v in record.items() if k not in ("MeasureName", "MeasureValueType", "TimeUnit")}
        rest["Dimensions"] = [d for d in record["Dimensions"] if d not in shared]
        if not rest["Dimensions"]:
            del rest["Dimensions"]
        slimmed.append(rest)
    return slimmed, common


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def build_query(
    database_name: str,
    table_name: str,
    *,
    start: datetime,
    end: datetime,
    columns: Sequence[str] = ("*",),
    partition_key: str | None = None,
    partition_value: str | None = None,
    measure_name: str | None = None,
) -> str:
    """A SELECT that always bounds ``time`` and, when given, filters on the partition-key dimension.

    :param database_name: the database (quoted as an identifier).
    :param table_name: the table (quoted as an identifier).
    :param start: the earliest time, an aware datetime (inclusive).
    :param end: the latest time, an aware datetime (inclusive).
    :param columns: the columns selected.
        Default: ``("*",)`` — every column.
    :param partition_key: the partition-key dimension to filter on, given with ``partition_value``.
        Default: None — no dimension filter.
    :param partition_value: the value ``partition_key`` must equal.
        Default: None — no dimension filter.
    :param measure_name: only rows of this measure name.
        Default: None — every measure.
    :raises ValueError: for naive or reversed times, or only one of ``partition_key``/``partition_value``.
    """
    if start.tzinfo is None or end.tzinfo is None:
        raise ValidationError("start and end must be timezone-aware datetimes")
    if start > end:
        raise ValidationError(f"start {start.isoformat()} is after end {end.isoformat()}")
    if (partition_key is None) != (partition_value is None):
        raise ValidationError("give partition_key and partition_value together")
    selected = ", ".join("*" if c == "*" else _identifier(c) for c in columns)
    iso = "%Y-%m-%dT%H:%M:%S.%fZ"
    predicates = [
        f"time BETWEEN from_iso8601_timestamp({_literal(start.astimezone(UTC).strftime(iso))}) "
        f"AND from_iso8601_timestamp({_literal(end.astimezone(UTC).strftime(iso))})"
    ]
    if partition_key is not None:
        predicates.append(f"{_identifier(partition_key)} = {_literal(partition_value)}")
    if measure_name is not None:
        predicates.append(f"measure_name = {_literal(measure_name)}")
    return (
        f"SELECT {selected} FROM {_identifier(database_name)}.{_identifier(table_name)} "
        f"WHERE {' AND '.join(predicates)}"
    )
