"""PeriodRouter: which period table a time belongs to, parallel range queries, batched multi-measure writes.

Items go in and come out as plain Python values (numbers as ``Decimal``, never floats), never as
DynamoDB AttributeValue wrappers.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import THROTTLE_CODES, LazyClient, client_property, error_code, error_message
from cdk_ts_runtime._emf import MetricsSink, WriterMetric, emit, writer_point
from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._inputs import number, table_time, whole
from cdk_ts_runtime._items import query_all, to_attribute_values
from cdk_ts_runtime._periods import RotationPeriod, period_start, shift, table_name
from cdk_ts_runtime._retries import BATCH_PATH, DATA_PATH, Failure, RetryPolicy, call_with_retries
from cdk_ts_runtime._table_layout import TableLayout
from cdk_ts_runtime._throttling import classify_throttle, throttled_after_retries

BATCH_LIMIT = 25  # BatchWriteItem's maximum number of requests


class BatchWriteError(CdkTsError):
    """Raised when items were not written; ``items`` are exactly those, ``reasons`` why (same order).

    :param items: the items not written, as they were given.
    :param attempts: how many BatchWriteItem attempts were made (at most, per call).
    :param reasons: why each item was not written, in the order of ``items``.
        Default: None — "unprocessed after every retry" for each.
    """

    def __init__(self, items: list[dict[str, Any]], attempts: int, reasons: list[str] | None = None) -> None:
        self.items = items
        self.attempts = attempts
        self.reasons = reasons if reasons is not None else ["unprocessed after every retry"] * len(items)
        distinct = sorted(set(self.reasons))
        summary = "; ".join(distinct[:5])
        super().__init__(f"{len(items)} item(s) not written ({attempts} BatchWriteItem attempt(s) at most): {summary}")


class MissingPeriodTableError(CdkTsError, LookupError):
    """A write went to a period table that does not exist; the message says which time and unit it assumed."""


class PeriodRouter:
    """Routes items to ``{table_prefix}_{label}`` tables by their sort-key time and reads ranges across them.

    ``time_unit`` is the unit of a Number sort key since the epoch (``"s"``, ``"ms"``, ``"us"``,
    ``"ns"``); a String sort key holds ISO-8601 (``"iso"``). Left out, it follows the sort key type:
    ``"ms"`` for a Number, ``"iso"`` for a String.

    :param table_prefix: the tables are named ``{table_prefix}_{label}``.
    :param period: how long one table covers.
        Default: ``RotationPeriod.DAILY``.
    :param partition_key: the partition key attribute.
        Default: ``"pk"``.
    :param sort_key: the sort key attribute, which holds the event time.
        Default: ``"sk"``.
    :param partition_key_type: ``"S"``, ``"N"`` or ``"B"``.
        Default: ``"N"`` (Number).
    :param sort_key_type: ``"N"`` (epoch time in ``time_unit``) or ``"S"`` (ISO-8601).
        Default: ``"N"``.
    :param time_unit: ``"s"``, ``"ms"``, ``"us"``, ``"ns"`` or ``"iso"``.
        Default: None — ``"ms"`` for a Number sort key, ``"iso"`` for a String one.
    :param dynamodb_client: the boto3 DynamoDB client to use for every call, as given. The router
        expects botocore's ``standard`` retry mode with a few attempts (it is the only retry of a Query
        or PutItem; a batch's unprocessed items are retried by the router itself).
        Default: None — clients are created on first use: ``standard`` retries with 3 attempts for reads
        and single writes, and for BatchWriteItem calls.
    :param max_workers: most tables ``query`` reads in parallel.
        Default: 8.
    :param page_size: the Query ``Limit`` per page (every page is followed either way).
        Default: None — DynamoDB's 1 MB pages.
    :param max_batch_attempts: BatchWriteItem attempts per batch before the unprocessed items are
        reported in :class:`BatchWriteError`. Default: 8.
    :param backoff_base_seconds: base of the full-jitter backoff between batch attempts.
        Default: 0.05.
    :param backoff_cap_seconds: longest wait between batch attempts.
        Default: 5.0.
    :param sleep: how to wait (tests pass a fake).
        Default: ``time.sleep``.
    :param rng: a source of floats in [0, 1) for the jitter (tests pass a fixed one).
        Default: ``random.random``.
    :param metrics: takes a ``cdk_ts_runtime.MetricPoint`` for every throttle DynamoDB answered
        (``Throttles``, dimension ``ThrottleScope``: partition, index, table or unknown) and for the items
        not written (``RefusedWrites``, the count, with the reasons); both carry the ``TableName`` dimension.
        Pass ``cdk_ts_runtime.EmfWriter("MyApp/Writers")`` for EMF lines, or a callable of your own.
        Default: None — nothing is reported but the errors raised.
    :raises ValueError: for an invalid layout, ``max_workers``, ``max_batch_attempts`` or ``page_size`` that is
        not a whole number >= 1, or a backoff that is not a finite number >= 0 (each named).
    """

    def __init__(
        self,
        table_prefix: str,
        period: RotationPeriod | str = RotationPeriod.DAILY,
        partition_key: str = "pk",
        sort_key: str = "sk",
        *,
        partition_key_type: str = "N",
        sort_key_type: str = "N",
        time_unit: str | None = None,
        dynamodb_client=None,
        max_workers: int = 8,
        page_size: int | None = None,
        max_batch_attempts: int = 8,
        backoff_base_seconds: float = 0.05,
        backoff_cap_seconds: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: Callable[[], float] = random.random,
        metrics: MetricsSink | None = None,
    ) -> None:
        """Describe the tables to route to (see the class for the parameters); no AWS call is made yet."""
        self.layout = TableLayout(
            table_prefix=table_prefix,
            period=period,
            partition_key=partition_key,
            partition_key_type=partition_key_type,
            sort_key=sort_key,
            sort_key_type=sort_key_type,
            time_unit=time_unit,
        )
        whole("max_workers", max_workers)
        whole("max_batch_attempts", max_batch_attempts)
        whole("page_size", page_size, optional=True, hint="None reads DynamoDB's 1 MB pages")
        number("backoff_base_seconds", backoff_base_seconds)
        number("backoff_cap_seconds", backoff_cap_seconds)
        self._client = LazyClient("dynamodb", dynamodb_client, config=DATA_PATH)
        self._batch_client = LazyClient("dynamodb", dynamodb_client, config=BATCH_PATH)
        self.max_workers = max_workers
        self.page_size = page_size
        self.max_batch_attempts = max_batch_attempts
        self.backoff_base_seconds = backoff_base_seconds
        self.backoff_cap_seconds = backoff_cap_seconds
        self.sleep = sleep
        self.rng = rng
        self.metrics = metrics

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> PeriodRouter:
        """A router for the layout ``RotatingTimeSeriesTables.bind`` put in the environment.

        :param env: the environment, usually ``os.environ``.
        :param kwargs: further constructor arguments (``dynamodb_client``, ``max_workers``, ...).
        :raises KeyError: when ``CDK_TS_TABLE_PREFIX`` is not set.
        """
        layout = TableLayout.from_env(env)
        return cls(
            layout.table_prefix, layout.period, layout.partition_key, layout.sort_key,
            partition_key_type=layout.partition_key_type, sort_key_type=layout.sort_key_type,
            time_unit=layout.time_unit, **kwargs,
        )

    dynamodb = client_property(
        "_client",
        "The DynamoDB client of reads and single writes (created on first use: a new router makes no AWS call).",
    )

    batch_dynamodb = client_property(
        "_batch_client",
        "The DynamoDB client of BatchWriteItem calls: ``dynamodb_client`` when one was given.",
    )

    # ---- routing --------------------------------------------------------------------------------

    def _as_time(self, when: datetime | int | Decimal | str, name: str | None = "when") -> datetime:
        """``when`` as an aware UTC datetime a period table can be named for; a refusal names ``name``."""
        try:
            return table_time(name or "item time", when if isinstance(when, datetime) else self.layout.time_of(when))
        except ValidationError as error:
            message = str(error)
            raise ValidationError(message if not name or message.startswith(name) else f"{name}: {message}") from None

    def table_for(self, when: datetime | int | Decimal | str) -> str:
        """The period table for an aware datetime or a sort-key value (years 1000-9999)."""
        return table_name(self.layout.table_prefix, self.layout.period, self._as_time(when))

    def tables_between(self, start: datetime | int | str, end: datetime | int | str) -> list[str]:
        """Every period table overlapping ``[start, end]`` (both inclusive), oldest first."""
        first, last = self._as_time(start, "start"), self._as_time(end, "end")
        if first > last:
            raise ValidationError(f"start {first.isoformat()} is after end {last.isoformat()}")
        names, cursor = [], period_start(self.layout.period, first)
        final = period_start(self.layout.period, last)
        while True:  # stops at the last period, never stepping past it (the period after 9999 has no name)
            names.append(table_name(self.layout.table_prefix, self.layout.period, cursor))
            if cursor >= final:
                return names
            cursor = shift(self.layout.period, cursor, 1)

    # ---- writes ---------------------------------------------------------------------------------

    def _checked(self, item: Mapping[str, Any]) -> tuple[str, dict[str, dict]]:
        missing = [k for k in (self.layout.partition_key, self.layout.sort_key) if item.get(k) is None]
        if missing:
            raise ValidationError(f"item has no {' or '.join(repr(k) for k in missing)}: every item needs both keys")
        sort_value = self._normalised(item[self.layout.sort_key])
        if sort_value != item[self.layout.sort_key]:
            item = {**item, self.layout.sort_key: sort_value}
        table = table_name(self.layout.table_prefix, self.layout.period, self._as_time(sort_value, None))
        return table, to_attribute_values(item)

    def _normalised(self, value: Any) -> Any:
        """ISO-8601 sort keys in one UTC form (so any offset sorts and compares right); numbers as given."""
        if self.layout.sort_key_type == "S" and isinstance(value, str):
            return self.layout.sort_value(self.layout.time_of(value))
        return value

    def _missing_table(self, table: str, sort_value: Any) -> str:
        when = self._as_time(sort_value)
        hint = ""
        if self.layout.sort_key_type == "N":
            hint = f" ({sort_value} read as {self.layout.time_unit} since the epoch: is the unit right?)"
        return f"period table {table} does not exist: item time {when.isoformat()}{hint}"

    def put_item(self, item: Mapping[str, Any]) -> str:
        """Write one item to the table of its sort-key time; returns that table's name.

        Raises :class:`MissingPeriodTableError` when that period has no table (naming the time and unit).
        """
        table, attributes = self._checked(item)
        try:
            self.dynamodb.put_item(TableName=table, Item=attributes)
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                raise MissingPeriodTableError(self._missing_table(table, item[self.layout.sort_key])) from None
            if (throttled := throttled_after_retries(error)) is not None:
                emit(self.metrics, [
                    writer_point(WriterMetric.THROTTLES, table, scope=throttled.throttle.scope.value),
                    writer_point(WriterMetric.REFUSED_WRITES, table, reason=str(throttled)),
                ])
                raise throttled from error
            raise
        return table

    def measurement_item(
        self, device_id: Any, when: datetime, measures: Mapping[str, Any], **attributes: Any
    ) -> dict[str, Any]:
        """One multi-measure item: every measure taken by ``device_id`` at ``when`` in a single item."""
        if not measures:
            raise ValidationError(f"no measures for device {device_id!r} at {when.isoformat()}")
        keys = {self.layout.partition_key, self.layout.sort_key}
        clash = sorted(keys & (set(measures) | set(attributes)))
        if clash:
            raise ValidationError(f"measure or attribute names {clash} collide with the table's key attributes")
        return {
            self.layout.partition_key: device_id,
            self.layout.sort_key: self.layout.sort_value(when),
            **measures,
            **attributes,
        }

    def put_measurements(
        self, device_id: Any, time: datetime, measures: Mapping[str, Any], **attributes: Any
    ) -> dict[str, Any]:
        """Write all ``measures`` of one device at one time as one item (Timestream's multi-measure record)."""
        item = self.measurement_item(device_id, time, measures, **attributes)
        self.put_item(item)
        return item

    def put_items(self, items: Iterable[Mapping[str, Any]]) -> int:
        """Write many items with BatchWriteItem (25 per call, grouped by table); returns how many were written.

        Raises :class:`BatchWriteError` carrying the items still unprocessed after every retry.
        """
        with self.batch_writer() as writer:
            for item in items:
                writer.put(item)
        return writer.written

    @contextmanager
    def batch_writer(self) -> Iterator[BatchWriter]:
        """A writer that buffers puts and sends 25 at a time; the rest is sent on exit, as boto3's does.

        Every item is either written or reported: on exit, :class:`BatchWriteError` lists all items
        that stayed unprocessed after the retries (a batch that fails does not stop the others).
        """
        writer = BatchWriter(self)
        try:
            yield writer
        except BaseException as error:
            writer.flush()
            if writer.failed:
                error.add_note(f"{len(writer.failed)} buffered item(s) were not written either")
            raise
        writer.flush()
        if writer.failed:
            raise BatchWriteError(writer.failed, writer.attempts, writer.reasons)

    # ---- reads ----------------------------------------------------------------------------------

    def query(
        self,
        partition_value: Any,
        start: datetime | int | str,
        end: datetime | int | str,
        *,
        newest_first: bool = False,
    ) -> list[dict[str, Any]]:
        """All items of one partition with sort-key time in ``[start, end]``, from every overlapping table.

        Tables are queried in parallel, every page is followed, tables that do not exist are
        skipped, and the result is in sort-key order (ascending unless ``newest_first``).

        :param partition_value: the partition key value.
        :param start: the earliest time, as an aware datetime or a sort-key value (inclusive).
        :param end: the latest time, likewise (inclusive).
        :param newest_first: return the items in descending sort-key order.
            Default: False — oldest first.
        """
        tables = self.tables_between(start, end)
        low = self._normalised(start) if not isinstance(start, datetime) else self.layout.sort_value(start)
        # a datetime end covers its whole microsecond: in ns keys, up to its last nanosecond
        high = self._normalised(end) if not isinstance(end, datetime) else self.layout.sort_value(end, last=True)
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(tables))) as pool:
            per_table = list(pool.map(lambda t: self._query_table(t, partition_value, low, high), tables))
        items = [item for chunk in per_table for item in chunk]
        items.sort(key=lambda item: item[self.layout.sort_key], reverse=newest_first)
        return items

    def _query_table(self, table: str, partition_value: Any, low: Any, high: Any) -> list[dict[str, Any]]:
        request: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :low AND :high",
            "ExpressionAttributeNames": {"#pk": self.layout.partition_key, "#sk": self.layout.sort_key},
            "ExpressionAttributeValues": to_attribute_values({":pk": partition_value, ":low": low, ":high": high}),
        }
        if self.page_size:
            request["Limit"] = self.page_size
        try:
            return query_all(self.dynamodb, request)
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                return []  # a period with no table holds no items
            raise


class BatchWriter:
    """Buffers puts for :meth:`PeriodRouter.batch_writer`, per table; a repeated key replaces the buffered item.

    ``written`` counts the items written, ``failed`` holds the items not written, ``reasons`` why,
    and ``attempts`` the most attempts a failed batch took.

    :param router: the router whose tables and retry settings are used.
    """

    def __init__(self, router: PeriodRouter) -> None:
        self.router = router
        self.written = 0
        self.failed: list[dict[str, Any]] = []
        self.reasons: list[str] = []
        self.attempts = 0
        self._buffers: dict[str, dict[str, tuple[str, Mapping[str, Any], dict[str, dict]]]] = {}

    def put(self, item: Mapping[str, Any]) -> None:
        """Queue one item; sends a BatchWriteItem whenever 25 are queued for one table."""
        table, attributes = self.router._checked(item)
        buffer = self._buffers.setdefault(table, {})
        # BatchWriteItem rejects two requests for one key, so the later item wins, as a PutItem would.
        buffer[_key_text(self.router.layout, attributes)] = (table, item, attributes)
        if len(buffer) >= BATCH_LIMIT:
            self._send(list(self._buffers.pop(table).values()))

    def put_measurements(self, device_id: Any, time: datetime, measures: Mapping[str, Any], **attributes: Any) -> None:
        """Queue one multi-measure item (see :meth:`PeriodRouter.put_measurements`)."""
        self.put(self.router.measurement_item(device_id, time, measures, **attributes))

    def flush(self) -> None:
        """Send everything buffered, one table per call, 25 requests per call; failures go to ``failed``.

        A call that fails (a missing table, a validation error, access denied) costs only its own
        items, which are recorded with the reason; every other call still goes out.
        """
        buffers, self._buffers = self._buffers, {}
        for table in sorted(buffers):
            entries = list(buffers[table].values())
            for index in range(0, len(entries), BATCH_LIMIT):
                self._send(entries[index : index + BATCH_LIMIT])

    def _send(self, chunk: list[tuple[str, Mapping[str, Any], dict[str, dict]]]) -> None:
        try:
            _write_batch(self.router, chunk)
        except BatchWriteError as error:
            emit(self.router.metrics, [writer_point(
                WriterMetric.REFUSED_WRITES, chunk[0][0], len(error.items), reasons=sorted(set(error.reasons))[:5],
            )])
            self.failed.extend(error.items)
            self.reasons.extend(error.reasons)
            self.attempts = max(self.attempts, error.attempts)
            self.written += len(chunk) - len(error.items)
        else:
            self.written += len(chunk)


def _write_batch(router: PeriodRouter, batch: list[tuple[str, Mapping[str, Any], dict[str, dict]]]) -> None:
    """One table's batch (at most 25 puts): retried while throttled or partly processed.

    Raises :class:`BatchWriteError` with exactly the items not written and why: the ones left
    unprocessed after every retry, or every item of a call that failed for another reason.
    """
    pending: dict[str, list[dict]] = {}
    originals: dict[tuple[str, str], Mapping[str, Any]] = {}
    for table, item, attributes in batch:
        pending.setdefault(table, []).append({"PutRequest": {"Item": attributes}})
        originals[(table, _key_text(router.layout, attributes))] = item

    def unwritten() -> list[Mapping[str, Any]]:
        return [
            originals[(table, _key_text(router.layout, r["PutRequest"]["Item"]))]
            for table, requests in pending.items()
            for r in requests
        ]

    attempts, why = 0, "throttled: items left in UnprocessedItems"

    def send(attempt: int) -> dict[str, list[dict]]:
        nonlocal pending, attempts
        attempts = attempt
        pending = router.batch_dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        return pending

    def throttled(failure: Failure[dict[str, list[dict]]]) -> None:
        nonlocal why
        throttle = classify_throttle(failure.error) if failure.error is not None else None
        if throttle is not None:
            why = f"throttled: {throttle.describe()}"
            emit(router.metrics, [writer_point(WriterMetric.THROTTLES, batch[0][0], scope=throttle.scope.value)])

    def refused(failure: Failure[dict[str, list[dict]]]) -> dict[str, list[dict]]:
        items = unwritten()
        reasons = [f"unprocessed after {failure.attempt} attempts ({why})"] * len(items)
        raise BatchWriteError([dict(i) for i in items], failure.attempt, reasons)

    retries = RetryPolicy(  # throttles and unprocessed items; any other refusal stops the batch at once
        max_attempts=router.max_batch_attempts, base_seconds=router.backoff_base_seconds,
        cap_seconds=router.backoff_cap_seconds, retry_codes=THROTTLE_CODES,
    )
    try:
        call_with_retries(
            send, retries, accept=lambda left: not left, on_failure=throttled, give_up=refused,
            sleep=router.sleep, rng=router.rng,
        )
    except ClientError as error:  # not a throttle: the whole call was refused
        items = unwritten()
        if error_code(error) == "ResourceNotFoundException":
            reason = router._missing_table(batch[0][0], items[0][router.layout.sort_key])
        else:
            reason = f"{error_code(error)}: {error_message(error)}"
        raise BatchWriteError([dict(i) for i in items], attempts, [reason] * len(items)) from None


def _key_text(layout: TableLayout, attributes: Mapping[str, dict]) -> str:
    return repr((attributes[layout.partition_key], attributes[layout.sort_key]))
