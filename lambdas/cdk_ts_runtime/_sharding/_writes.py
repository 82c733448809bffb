"""Writing one item of a sharded key: the shard set of the item's time, moves and growth on partition throttles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._emf import WriterMetric, emit, writer_point
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._items import to_attribute_values
from cdk_ts_runtime._sharding import _history
from cdk_ts_runtime._sharding._shard_keys import pick_shard
from cdk_ts_runtime._sharding._shrink import maybe_shrink
from cdk_ts_runtime._sharding._time import item_time
from cdk_ts_runtime._sharding.metadata import ShardInfo
from cdk_ts_runtime._throttling import ThrottledError, ThrottleScope, throttle_scope

if TYPE_CHECKING:
    from cdk_ts_runtime._sharding.table import ShardedTable

#: After a partition throttle, metadata cached longer than this is read again, so a growth by another
#: writer is used within a second rather than after the whole ``cache_ttl_seconds``.
STALE_AFTER_THROTTLE_SECONDS = 1.0
#: A cached history answers for items up to this long after it was read: a shrink recorded since takes effect
#: no earlier (its notice, less two clock skews: the shrinking writer's and this one's).
CACHE_HORIZON_SECONDS = _history.SHRINK_NOTICE_SECONDS - 2 * _history.MAX_CLOCK_SKEW_SECONDS


def write_item(table: ShardedTable, item: Mapping[str, Any]) -> str:
    """:meth:`ShardedTable.put_item`: store ``item`` on one shard of the set in force at its time."""
    for name in (table.partition_key, table.sort_key):
        if item.get(name) is None:
            raise ValidationError(f"item has no {name!r}: every item needs the partition and sort key")
    logical = table._keys.logical(item[table.partition_key])
    unit = table.sort_key_time_unit
    at = item_time(item[table.sort_key], unit, table.sort_key) if unit else None
    info = _known_for(table, logical, at, table.metadata.read(logical))
    info = table.metadata.ensure(logical, info, cap=table.max_shards, by_time=at is not None)
    avoid = None
    for attempt in range(1, table.max_attempts + 1):
        # by time: the count in force at the item's time (a late item goes where readers of its window look)
        count = info.number_of_shards if at is None else info.count_at(at)
        shard = pick_shard(table.strategy, table.rng, logical, item[table.sort_key], count, avoid)
        physical = table.physical_key(logical, shard)
        try:
            table.dynamodb.put_item(
                TableName=table.table_name, Item=to_attribute_values({**item, table.partition_key: physical})
            )
        except ClientError as error:
            scope = _throttled(table, logical, info, count, attempt, error)
            if attempt == table.max_attempts:
                refused = ThrottledError(error, attempt)
                emit(table.metrics, [writer_point(
                    WriterMetric.REFUSED_WRITES, table.table_name, key=logical, reason=str(refused),
                )])
                raise refused from error
            table.backoff.wait(attempt)
            avoid = shard
            stale = STALE_AFTER_THROTTLE_SECONDS if scope is ThrottleScope.PARTITION else None
            info = _known_for(table, logical, at, table.metadata.read(logical, max_age=stale))
            continue
        table.throttles.record(logical, count, first=attempt == 1, accepted=True)
        if table.shrink is not None and at is not None:
            maybe_shrink(table, logical, info, item)
        return physical
    raise AssertionError("unreachable")  # pragma: no cover


def _known_for(table: ShardedTable, logical: str, at: float | None, info: ShardInfo) -> ShardInfo:
    """``info`` when it answers for an item at ``at``; else the key's metadata read now.

    A history read at T answers for items before T plus :data:`CACHE_HORIZON_SECONDS`: a shrink recorded after
    T applies from later than that. An item further ahead (an event time past its writer's clock) is placed
    by a history read now.
    """
    if at is None or (info.read_at is not None and at < info.read_at + CACHE_HORIZON_SECONDS):
        return info
    return table.metadata.read(logical, fresh=True)


def _throttled(
    table: ShardedTable, logical: str, info: ShardInfo, count: int, attempt: int, error: ClientError
) -> ThrottleScope:
    """Count a throttled write and act on it: grow on a partition's, report a table's; re-raise anything else."""
    scope = throttle_scope(error)
    if scope is None:
        raise error
    if scope is ThrottleScope.UNKNOWN:
        scope = table._cloudwatch_scope.scope()
    emit(table.metrics, [writer_point(WriterMetric.THROTTLES, table.table_name, scope=scope.value)])
    if scope is ThrottleScope.PARTITION:
        table.throttles.record(logical, count, first=attempt == 1, accepted=False)
        table.shrink_watch.throttled(logical)
        if count >= info.count_from(table.clock()):
            table.grow(logical, info)  # a late item on an older, smaller set is not cured by more shards now
    elif table.on_table_throttle is not None:
        table.on_table_throttle(table.table_name)
    return scope
