"""Reading a sharded key back: a sort-key query over every shard, and a point read by BatchGetItem."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from cdk_ts_runtime._emf import MetricsSink, WriterMetric, emit, writer_point
from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._items import from_attribute_values, query_all, to_attribute_values
from cdk_ts_runtime._retries import Failure, RetryPolicy, call_with_retries
from cdk_ts_runtime._sharding._shard_keys import ShardAccess, pick_shard
from cdk_ts_runtime._sharding._time import time_of, window
from cdk_ts_runtime._sharding.metadata import ShardInfo
from cdk_ts_runtime._sharding.policy import ShardStrategy

SORT_CONDITIONS = {
    "eq": "#sk = :a",
    "lt": "#sk < :a",
    "lte": "#sk <= :a",
    "gt": "#sk > :a",
    "gte": "#sk >= :a",
    "begins_with": "begins_with(#sk, :a)",
    "between": "#sk BETWEEN :a AND :b",
}
#: BatchGetItem reads up to 100 keys a call.
BATCH_GET_KEYS = 100
#: Only ``UnprocessedKeys`` are sent again (a refused call is ``DATA_PATH``'s); the table sets attempts and cap.
READ_RETRIES = RetryPolicy(max_attempts=10, base_seconds=0.05, cap_seconds=2.0)


class ShardReadError(CdkTsError, RuntimeError):
    """A fan-out read that DynamoDB kept leaving unprocessed; the message names the key, shards and attempts."""


@dataclass(frozen=True, kw_only=True)
class ShardReader(ShardAccess):
    """What reading a sharded key back takes: its names, read client, metadata, and the point reads' retries."""

    rng: random.Random
    retries: RetryPolicy
    sleep: Callable[[float], None]
    max_workers: int
    metrics: MetricsSink | None


def query_shards(reader: ShardReader, logical: str, sort_condition: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item of ``logical`` matching at most one sort-key condition, in sort-key order.

    From the shards in force over the condition's time window when the sort key is a time, else from every
    shard the key ever had.
    """
    names = reader.names
    if len(sort_condition) > 1:
        raise ValidationError(f"give at most one sort-key condition, got {sorted(sort_condition)}")
    key = "#pk = :pk"
    values: dict[str, Any] = {}
    if sort_condition:
        ((name, value),) = sort_condition.items()
        if name not in SORT_CONDITIONS:
            raise ValidationError(f"sort-key condition {name!r} is not one of {', '.join(SORT_CONDITIONS)}")
        key += f" AND {SORT_CONDITIONS[name]}"
        values = {":a": value[0], ":b": value[1]} if name == "between" else {":a": value}
    attributes = {"#pk": names.partition_key, **({"#sk": names.sort_key} if sort_condition else {})}
    info = reader.metadata.read(logical, fresh=True)
    low, high = window(sort_condition, names.sort_key_time_unit) if names.sort_key_time_unit else (-math.inf, math.inf)
    shards = range(1, _shards_over(info, low, high) + 1)
    bounds = {name: value for name, value in (("low", low), ("high", high)) if not math.isinf(value)}
    emit(reader.metrics, [writer_point(WriterMetric.SHARDS_READ, names.table_name, len(shards), key=logical, **bounds)])

    def one_shard(shard: int) -> list[dict[str, Any]]:
        request = {
            "TableName": names.table_name,
            "KeyConditionExpression": key,
            "ExpressionAttributeNames": attributes,
            "ExpressionAttributeValues": to_attribute_values({":pk": names.keys.physical(logical, shard), **values}),
        }
        return query_all(reader.dynamodb(), request)

    with ThreadPoolExecutor(max_workers=min(reader.max_workers, len(shards))) as pool:
        results = [item for chunk in pool.map(one_shard, shards) for item in chunk]
    for item in results:
        item[names.partition_key] = logical
    return sorted(results, key=lambda item: item[names.sort_key])


def _shards_over(info: ShardInfo, low: float, high: float) -> int:
    """The shards a window reads: every shard the key ever had when the window is unbounded."""
    if math.isinf(low) and math.isinf(high):
        return info.readable_shards
    return info.shards_over(low, high)


def point_read(reader: ShardReader, logical: str, sort_value: Any) -> dict[str, Any] | None:
    """One item: under ``computed`` from its own shard first (the rest only as a fallback), else from all."""
    names = reader.names
    info = reader.metadata.read(logical, fresh=True)
    at = time_of(sort_value, names.sort_key_time_unit) if names.sort_key_time_unit else None
    every = list(range(1, (info.readable_shards if at is None else info.shards_over(at, at)) + 1))
    if names.strategy is ShardStrategy.COMPUTED:
        count = info.number_of_shards if at is None else info.count_at(at)
        first = pick_shard(names.strategy, reader.rng, logical, sort_value, count)
        found = _first_found(reader, logical, sort_value, [first])
        if found is not None:
            return found
        if first in every:
            every.remove(first)
    return _first_found(reader, logical, sort_value, every)


def _first_found(reader: ShardReader, logical: str, sort_value: Any, shards: list[int]) -> dict[str, Any] | None:
    """The item at ``sort_value`` on the first of ``shards`` that has it, by BatchGetItem with retries."""
    for start in range(0, len(shards), BATCH_GET_KEYS):
        found = _batch_get(reader, logical, sort_value, shards[start : start + BATCH_GET_KEYS])
        if found:
            item = from_attribute_values(found[0])
            item[reader.names.partition_key] = logical
            return item
    return None


def _batch_get(reader: ShardReader, logical: str, sort_value: Any, shards: list[int]) -> list[dict[str, Any]]:
    """What one BatchGetItem of ``shards`` (at most 100) finds, sent again for the keys left unprocessed."""
    names = reader.names
    keys = [to_attribute_values(names.key_of(logical, shard, sort_value)) for shard in shards]
    request: dict[str, Any] = {names.table_name: {"Keys": keys, "ConsistentRead": True}}

    def fetch(_attempt: int) -> list[dict[str, Any]]:
        nonlocal request
        response = reader.dynamodb().batch_get_item(RequestItems=request)
        request = response.get("UnprocessedKeys") or {}
        return response.get("Responses", {}).get(names.table_name, [])

    def unprocessed(failure: Failure[list[dict[str, Any]]]) -> list[dict[str, Any]]:
        left = [names.keys.number(k[names.partition_key]["S"]) for k in request[names.table_name]["Keys"]]
        raise ShardReadError(
            f"point read of {logical!r} at {names.sort_key}={sort_value!r}: shards {left} stayed "
            f"unprocessed after {failure.attempt} BatchGetItem attempts (max_attempts); retry later"
        )

    return call_with_retries(
        fetch, reader.retries, accept=lambda items: bool(items) or not request, give_up=unprocessed,
        sleep=reader.sleep, rng=reader.rng.random,
    )
