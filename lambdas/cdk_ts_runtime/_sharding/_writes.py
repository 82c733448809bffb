"""Writing one item of a sharded key: the shard set of the item's time, moves and growth on partition throttles."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import THROTTLE_CODES
from cdk_ts_runtime._emf import MetricsSink, WriterMetric, emit, writer_point
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._items import to_attribute_values
from cdk_ts_runtime._retries import Decision, Failure, RetryPolicy, call_with_retries
from cdk_ts_runtime._sharding import _history
from cdk_ts_runtime._sharding._growth import KeyGrowth, grow_key
from cdk_ts_runtime._sharding._shard_keys import ShardAccess, pick_shard
from cdk_ts_runtime._sharding._shrink import KeyShrink, ShrinkWatch, maybe_shrink
from cdk_ts_runtime._sharding._time import item_time
from cdk_ts_runtime._sharding.metadata import ShardInfo
from cdk_ts_runtime._sharding.throttles import CloudWatchScope, ThrottleWindow
from cdk_ts_runtime._throttling import ThrottledError, ThrottleScope, throttle_scope

#: After a partition throttle, metadata cached longer than this is read again, so a growth by another
#: writer is used within a second rather than after the whole ``cache_ttl_seconds``.
STALE_AFTER_THROTTLE_SECONDS = 1.0
#: A cached history answers for items up to this long after it was read: a shrink recorded since takes effect
#: no earlier (its notice, less two clock skews: the shrinking writer's and this one's).
CACHE_HORIZON_SECONDS = _history.SHRINK_NOTICE_SECONDS - 2 * _history.MAX_CLOCK_SKEW_SECONDS
#: Throttles are retried, a partition's grows the key; the table sets attempts and cap (``max_attempts``, ...).
WRITE_RETRIES = RetryPolicy(
    max_attempts=10, base_seconds=0.05, cap_seconds=2.0, retry_codes=THROTTLE_CODES,
    grow_scopes=frozenset({ThrottleScope.PARTITION}),
)


@dataclass(frozen=True, kw_only=True)
class ShardWriter(ShardAccess):
    """What writing one item of a sharded key takes; ``ShardedTable`` builds one and hands it every write."""

    max_shards: int
    retries: RetryPolicy
    rng: random.Random
    sleep: Callable[[float], None]
    clock: Callable[[], float]
    metrics: MetricsSink | None
    throttles: ThrottleWindow
    growth: KeyGrowth
    cloudwatch_scope: CloudWatchScope
    on_table_throttle: Callable[[str], None] | None
    shrink_watch: ShrinkWatch
    shrink: KeyShrink | None


def write_item(writer: ShardWriter, item: Mapping[str, Any]) -> str:
    """:meth:`ShardedTable.put_item`: store ``item`` on one shard of the set in force at its time."""
    names = writer.names
    for name in (names.partition_key, names.sort_key):
        if item.get(name) is None:
            raise ValidationError(f"item has no {name!r}: every item needs the partition and sort key")
    logical = names.keys.logical(item[names.partition_key])
    unit = names.sort_key_time_unit
    at = item_time(item[names.sort_key], unit, names.sort_key) if unit else None
    info = _known_for(writer, logical, at, writer.metadata.read(logical))
    info = writer.metadata.ensure(logical, info, cap=writer.max_shards, by_time=at is not None)
    count = shard = 0
    scope: ThrottleScope | None = None

    def put(attempt: int) -> str:
        nonlocal info, count, shard
        if attempt > 1:  # after a throttle and its wait: the key may have grown meanwhile
            stale = STALE_AFTER_THROTTLE_SECONDS if scope is ThrottleScope.PARTITION else None
            info = _known_for(writer, logical, at, writer.metadata.read(logical, max_age=stale))
        # by time: the count in force at the item's time (a late item goes where readers of its window look)
        count = info.number_of_shards if at is None else info.count_at(at)
        avoid = shard if attempt > 1 else None
        shard = pick_shard(names.strategy, writer.rng, logical, item[names.sort_key], count, avoid)
        physical = names.keys.physical(logical, shard)
        writer.dynamodb().put_item(
            TableName=names.table_name, Item=to_attribute_values({**item, names.partition_key: physical})
        )
        writer.throttles.record(logical, count, first=attempt == 1, accepted=True)
        return physical

    def throttled(failure: Failure[str]) -> None:
        nonlocal scope
        assert isinstance(failure.error, ClientError)  # the policy retries throttles only
        scope = _throttled(writer, logical, info, count, failure)

    def refused(failure: Failure[str]) -> str:
        assert isinstance(failure.error, ClientError)
        error = ThrottledError(failure.error, failure.attempt)
        emit(writer.metrics, [writer_point(
            WriterMetric.REFUSED_WRITES, names.table_name, key=logical, reason=str(error),
        )])
        raise error from failure.error

    physical = call_with_retries(
        put, writer.retries, on_failure=throttled, give_up=refused, sleep=writer.sleep, rng=writer.rng.random
    )
    if writer.shrink is not None and at is not None:
        maybe_shrink(writer.shrink, logical, info, item)
    return physical


def _known_for(writer: ShardWriter, logical: str, at: float | None, info: ShardInfo) -> ShardInfo:
    """``info`` when it answers for an item at ``at``; else the key's metadata read now.

    A history read at T answers for items before T plus :data:`CACHE_HORIZON_SECONDS`: a shrink recorded after
    T applies from later than that. An item further ahead (an event time past its writer's clock) is placed
    by a history read now.
    """
    if at is None or (info.read_at is not None and at < info.read_at + CACHE_HORIZON_SECONDS):
        return info
    return writer.metadata.read(logical, fresh=True)


def _throttled(writer: ShardWriter, logical: str, info: ShardInfo, count: int, failure: Failure[str]) -> ThrottleScope:
    """Count a throttled write and act on it: grow on a partition's, report a table's."""
    assert failure.error is not None
    scope = throttle_scope(failure.error) or ThrottleScope.UNKNOWN
    if scope is ThrottleScope.UNKNOWN:  # no reasons in the answer: CloudWatch tells whether one partition is hot
        scope = writer.cloudwatch_scope.scope()
    emit(writer.metrics, [writer_point(WriterMetric.THROTTLES, writer.names.table_name, scope=scope.value)])
    # the policy's GROW (the answer names one partition), or a throttle without reasons CloudWatch puts on one
    if failure.decision is Decision.GROW or scope is ThrottleScope.PARTITION:
        writer.throttles.record(logical, count, first=failure.attempt == 1, accepted=False)
        writer.shrink_watch.throttled(logical)
        if count >= info.count_from(writer.clock()):  # a late item on an older, smaller set is not cured by more shards
            grow_key(writer.growth, logical, info, None)
    elif writer.on_table_throttle is not None:
        writer.on_table_throttle(writer.names.table_name)
    return scope
