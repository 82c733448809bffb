"""Reading a sharded key back: a sort-key query over every shard, and a point read by BatchGetItem."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from cdk_ts_runtime._emf import WriterMetric, emit, writer_point
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._items import from_attribute_values, query_all, to_attribute_values
from cdk_ts_runtime._sharding._shard_keys import pick_shard
from cdk_ts_runtime._sharding._time import time_of, window
from cdk_ts_runtime._sharding.metadata import ShardInfo
from cdk_ts_runtime._sharding.policy import ShardStrategy

if TYPE_CHECKING:
    from cdk_ts_runtime._sharding.table import ShardedTable

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


def query_shards(table: ShardedTable, logical: str, sort_condition: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item of ``logical`` matching at most one sort-key condition, in sort-key order.

    From the shards in force over the condition's time window when the sort key is a time, else from every
    shard the key ever had.
    """
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
    names = {"#pk": table.partition_key, **({"#sk": table.sort_key} if sort_condition else {})}
    info = table.shard_info(logical, fresh=True)
    low, high = window(sort_condition, table.sort_key_time_unit) if table.sort_key_time_unit else (-math.inf, math.inf)
    shards = range(1, _shards_over(info, low, high) + 1)
    bounds = {name: value for name, value in (("low", low), ("high", high)) if not math.isinf(value)}
    emit(table.metrics, [writer_point(WriterMetric.SHARDS_READ, table.table_name, len(shards), key=logical, **bounds)])

    def one_shard(shard: int) -> list[dict[str, Any]]:
        request = {
            "TableName": table.table_name,
            "KeyConditionExpression": key,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_attribute_values({":pk": table.physical_key(logical, shard), **values}),
        }
        return query_all(table.read_dynamodb, request)

    with ThreadPoolExecutor(max_workers=min(table.max_workers, len(shards))) as pool:
        results = [item for chunk in pool.map(one_shard, shards) for item in chunk]
    for item in results:
        item[table.partition_key] = logical
    return sorted(results, key=lambda item: item[table.sort_key])


def _shards_over(info: ShardInfo, low: float, high: float) -> int:
    """The shards a window reads: every shard the key ever had when the window is unbounded."""
    if math.isinf(low) and math.isinf(high):
        return info.readable_shards
    return info.shards_over(low, high)


def point_read(table: ShardedTable, logical: str, sort_value: Any) -> dict[str, Any] | None:
    """One item: under ``computed`` from its own shard first (the rest only as a fallback), else from all."""
    info = table.shard_info(logical, fresh=True)
    at = time_of(sort_value, table.sort_key_time_unit) if table.sort_key_time_unit else None
    every = list(range(1, (info.readable_shards if at is None else info.shards_over(at, at)) + 1))
    if table.strategy is ShardStrategy.COMPUTED:
        count = info.number_of_shards if at is None else info.count_at(at)
        first = pick_shard(table.strategy, table.rng, logical, sort_value, count)
        found = _first_found(table, logical, sort_value, [first])
        if found is not None:
            return found
        if first in every:
            every.remove(first)
    return _first_found(table, logical, sort_value, every)


def _first_found(table: ShardedTable, logical: str, sort_value: Any, shards: list[int]) -> dict[str, Any] | None:
    """The item at ``sort_value`` on the first of ``shards`` that has it, by BatchGetItem with retries."""
    for start in range(0, len(shards), BATCH_GET_KEYS):
        keys = [
            to_attribute_values({table.partition_key: table.physical_key(logical, s), table.sort_key: sort_value})
            for s in shards[start : start + BATCH_GET_KEYS]
        ]
        request = {table.table_name: {"Keys": keys, "ConsistentRead": True}}
        for attempt in range(1, table.max_attempts + 1):
            response = table.read_dynamodb.batch_get_item(RequestItems=request)
            for item in response.get("Responses", {}).get(table.table_name, []):
                found = from_attribute_values(item)
                found[table.partition_key] = logical
                return found
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
            if attempt == table.max_attempts:
                from cdk_ts_runtime._sharding.table import ShardReadError  # the table module imports this one

                left = [table.shard_number(k[table.partition_key]["S"]) for k in request[table.table_name]["Keys"]]
                raise ShardReadError(
                    f"point read of {logical!r} at {table.sort_key}={sort_value!r}: shards {left} stayed "
                    f"unprocessed after {attempt} BatchGetItem attempts (max_attempts); retry later"
                )
            table.backoff.wait(attempt)
    return None
