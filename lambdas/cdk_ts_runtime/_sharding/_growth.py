"""When and how far a sharded writer grows a throttled key: the cooldown, the measured share and the sizing."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from cdk_ts_runtime._emf import MetricsSink, WriterMetric, emit, writer_point
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime._sharding import policy
from cdk_ts_runtime._sharding.metadata import ShardInfo, ShardMetadataStore
from cdk_ts_runtime._sharding.throttles import ThrottleWindow

logger = logging.getLogger("cdk_ts_runtime.sharding.table")  # the writer's log, where growths were always logged


@dataclass(frozen=True, kw_only=True)
class KeyGrowth:
    """What growing a key takes: the metadata, this writer's throttle window, its limits and its random pause."""

    table_name: str
    metadata: ShardMetadataStore
    throttles: ThrottleWindow
    clock: Callable[[], float]
    max_shards: int
    growth: policy.ShardGrowth
    metrics: MetricsSink | None
    spread: Callable[[], object]


def grow_key(state: KeyGrowth, logical: str, seen: ShardInfo, target: int | None) -> bool:
    """Grow ``logical`` past ``seen`` unless it is cooling, another writer grew it, or the shards take the load.

    This is :meth:`ShardedTable.grow` after the key was checked; True when this call grew it.
    """
    whole("target", target, optional=True, maximum=policy.SHARD_CEILING)
    if seen.count_from(state.clock()) >= state.max_shards or is_cooling(state, logical, seen, target):
        return False  # a writer never grows a key past its own cap; another fleet's larger count stands
    if target is None and state.throttles.settling(logical, seen.count_from(state.clock())):
        return False  # throttled for under a second: the next throttle, if any, tells whether the key is full
    state.spread()  # writers that throttled together do not all grow the key at once
    current = state.metadata.read(logical, fresh=True)
    if (current.version, current.updated_ms) != (seen.version, seen.updated_ms):
        return False  # another writer grew it while we backed off
    if is_cooling(state, logical, current, target):
        return False
    count = current.count_from(state.clock())  # a shrink not yet in force is what this growth replaces
    share = sized = None
    if target is None:
        share = state.throttles.share(logical, count)
        if share is not None and share < policy.MIN_THROTTLED_SHARE:
            return False  # the shards take the load; the throttle was a backlog draining
        sized = state.throttles.share(logical, count, cautious=True)
        target = policy.shards_needed(count, sized, growth=state.growth, cap=state.max_shards)
    target = min(target, state.max_shards)
    if target <= count:
        return False
    grown = state.metadata.grow(logical, current, target, cap=state.max_shards)
    if grown:
        shown = "unmeasured" if share is None else f"{share:.0%}, sized as {sized:.0%}"
        logger.info("grew %s from %d to %d shards (writes not taken: %s)", logical, count, target, shown)
        emit(state.metrics, [writer_point(
            WriterMetric.SHARD_GROWTHS, state.table_name, key=logical, **{"from": count, "to": target}, share=share,
        )])
    return grown


def is_cooling(state: KeyGrowth, logical: str, info: ShardInfo, target: int | None) -> bool:
    """Whether the key must wait before growing: one cooldown after its last change.

    A key never grown (it has only ever had one shard) may grow before that, as soon as this writer has
    measured its saturated share: the cooldown spaces growths, and waiting one out after the key was
    recorded only piles up writes that all retry against the grown key at once.
    """
    if not state.metadata.cooling(logical, info):
        return False
    if target is not None or info.readable_shards != 1:
        return True
    return state.throttles.saturated_share(logical, 1) is None
