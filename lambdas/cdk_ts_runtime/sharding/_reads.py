"""Reading a sharded key back: a sort-key query over every shard, and a point read by BatchGetItem."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from cdk_ts_runtime.errors import ValidationError
from cdk_ts_runtime.items import from_attribute_values, query_all, to_attribute_values
from cdk_ts_runtime.sharding._shard_keys import pick_shard
from cdk_ts_runtime.sharding.policy import ShardStrategy

if TYPE_CHECKING:
    from cdk_ts_runtime.sharding.table import ShardedTable

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
    """Every item of ``logical`` matching at most one sort-key condition, from all shards, in sort-key order."""
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
    shards = range(1, table.shard_info(logical, fresh=True).readable_shards + 1)

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


def point_read(table: ShardedTable, logical: str, sort_value: Any) -> dict[str, Any] | None:
    """One item: under ``computed`` from its own shard first (the rest only as a fallback), else from all."""
    info = table.shard_info(logical, fresh=True)
    every = list(range(1, info.readable_shards + 1))
    if table.strategy is ShardStrategy.COMPUTED:
        if table.sort_key_time_unit:
            count = info.count_at(float(sort_value) / (1000 if table.sort_key_time_unit == "ms" else 1))
        else:
            count = info.number_of_shards
        first = pick_shard(table.strategy, table.rng, logical, sort_value, count)
        found = _first_found(table, logical, sort_value, [first])
        if found is not None:
            return found
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
                from cdk_ts_runtime.sharding.table import ShardReadError  # the table module imports this one

                left = [table.shard_number(k[table.partition_key]["S"]) for k in request[table.table_name]["Keys"]]
                raise ShardReadError(
                    f"point read of {logical!r} at {table.sort_key}={sort_value!r}: shards {left} stayed "
                    f"unprocessed after {attempt} BatchGetItem attempts (max_attempts); retry later"
                )
            table.backoff.wait(attempt)
    return None
