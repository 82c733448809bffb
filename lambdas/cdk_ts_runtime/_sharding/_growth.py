"""When and how far a sharded writer grows a throttled key: the cooldown, the measured share and the sizing."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from cdk_ts_runtime._emf import WriterMetric, emit, writer_point
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime._sharding import policy
from cdk_ts_runtime._sharding.metadata import ShardInfo

if TYPE_CHECKING:
    from cdk_ts_runtime._sharding.table import ShardedTable

logger = logging.getLogger("cdk_ts_runtime.sharding.table")  # the writer's log, where growths were always logged


def grow_key(table: ShardedTable, logical: str, seen: ShardInfo, target: int | None) -> bool:
    """Grow ``logical`` past ``seen`` unless it is cooling, another writer grew it, or the shards take the load.

    This is :meth:`ShardedTable.grow` after the key was checked; True when this call grew it.
    """
    whole("target", target, optional=True, maximum=policy.SHARD_CEILING)
    if seen.count_from(table.clock()) >= table.max_shards or is_cooling(table, logical, seen, target):
        return False  # a writer never grows a key past its own cap; another fleet's larger count stands
    if target is None and table.throttles.settling(logical, seen.count_from(table.clock())):
        return False  # throttled for under a second: the next throttle, if any, tells whether the key is full
    table.backoff.spread()  # writers that throttled together do not all grow the key at once
    current = table.metadata.read(logical, fresh=True)
    if (current.version, current.updated_ms) != (seen.version, seen.updated_ms):
        return False  # another writer grew it while we backed off
    if is_cooling(table, logical, current, target):
        return False
    count = current.count_from(table.clock())  # a shrink not yet in force is what this growth replaces
    share = sized = None
    if target is None:
        share = table.throttles.share(logical, count)
        if share is not None and share < policy.MIN_THROTTLED_SHARE:
            return False  # the shards take the load; the throttle was a backlog draining
        sized = table.throttles.share(logical, count, cautious=True)
        target = policy.shards_needed(count, sized, growth=table.growth, cap=table.max_shards)
    target = min(target, table.max_shards)
    if target <= count:
        return False
    grown = table.metadata.grow(logical, current, target, cap=table.max_shards)
    if grown:
        shown = "unmeasured" if share is None else f"{share:.0%}, sized as {sized:.0%}"
        logger.info("grew %s from %d to %d shards (writes not taken: %s)", logical, count, target, shown)
        emit(table.metrics, [writer_point(
            WriterMetric.SHARD_GROWTHS, table.table_name, key=logical, **{"from": count, "to": target}, share=share,
        )])
    return grown


def is_cooling(table: ShardedTable, logical: str, info: ShardInfo, target: int | None) -> bool:
    """Whether the key must wait before growing: one cooldown after its last change.

    A key never grown (it has only ever had one shard) may grow before that, as soon as this writer has
    measured its saturated share: the cooldown spaces growths, and waiting one out after the key was
    recorded only piles up writes that all retry against the grown key at once.
    """
    if not table.metadata.cooling(logical, info):
        return False
    if target is not None or info.readable_shards != 1:
        return True
    return table.throttles.saturated_share(logical, 1) is None
