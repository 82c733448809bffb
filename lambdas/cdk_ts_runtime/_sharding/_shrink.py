"""Giving shards back: when a key has cooled, a writer records a smaller count for items from a little later on.

A writer considers it after an accepted write, at most once per ``window_seconds`` per key, when for
``quiet_seconds`` it has written the key without a partition throttle and nobody has changed the key. It
measures the key's whole write rate (every writer's, not only its own) by counting the items whose sort-key
times lie in the last ``window_seconds`` (a ``Select=COUNT`` Query per shard of that window), and records the
count that rate needs at ``utilisation`` of a partition's write units, if that is fewer shards. The change is
conditional on the version read, as a growth is, and takes effect :data:`SHRINK_NOTICE_SECONDS` later.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cdk_ts_runtime._emf import MetricsSink, WriterMetric, emit, writer_point
from cdk_ts_runtime._inputs import number
from cdk_ts_runtime._items import to_attribute_values
from cdk_ts_runtime._sharding import _history
from cdk_ts_runtime._sharding._shard_keys import ShardAccess
from cdk_ts_runtime._sharding._time import sort_value
from cdk_ts_runtime._sharding.metadata import ShardInfo
from cdk_ts_runtime._sharding.policy import ShardGrowth

logger = logging.getLogger("cdk_ts_runtime.sharding.table")  # the writer's log, beside its growths

SHRINK_NOTICE_SECONDS = _history.SHRINK_NOTICE_SECONDS
#: Items of the last seconds may still be in flight: the measured window ends this long before now.
_MEASURE_LAG_SECONDS = 2 * _history.MAX_CLOCK_SKEW_SECONDS + 1


@dataclass(frozen=True)
class ShardShrink:
    """When a sharded writer gives shards back (``ShardedTable(shrink=ShardShrink(...))``; off unless given).

    :param quiet_seconds: how long the key must have gone without a partition throttle seen by this writer, and
        without a change by any writer, before it may shrink; at least the table's ``cooldown_seconds``.
        Default: 300.
    :param partition_write_units: write units a second one partition takes (DynamoDB: 1,000).
        Default: 1000.
    :param utilisation: the share of that the smaller count may carry (the rest is headroom for the next rise).
        Default: 0.5.
    :param window_seconds: the span of recent sort-key times the write rate is measured over, and the least
        time between two measurements of a key by one writer. Default: 60.
    :raises ValueError: for a value out of range.
    """

    quiet_seconds: float = 300
    partition_write_units: float = 1000
    utilisation: float = 0.5
    window_seconds: float = 60

    def __post_init__(self) -> None:
        number("quiet_seconds", self.quiet_seconds, minimum=1)
        number("partition_write_units", self.partition_write_units, above=True)
        number("utilisation", self.utilisation, maximum=1, above=True)
        number("window_seconds", self.window_seconds, minimum=1)


class ShrinkWatch:
    """One writer's view of each key for shrinking: its first write, last partition throttle, last measurement."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self._first: dict[str, float] = {}
        self._throttled: dict[str, float] = {}
        self._measured: dict[str, float] = {}
        self._units: dict[str, tuple[int, int]] = {}  # writes seen, write units they took
        self._lock = threading.Lock()

    def throttled(self, logical: str) -> None:
        """Note a partition throttle of ``logical`` now."""
        with self._lock:
            self._throttled[logical] = self.clock()

    def written(self, logical: str, item: Mapping[str, Any]) -> None:
        """Note an accepted write of ``item``: its write units, and the first write of the key by this writer."""
        with self._lock:
            if len(self._units) > 4096:
                self._units.clear()
                self._first.clear()
            self._first.setdefault(logical, self.clock())
            writes, units = self._units.get(logical, (0, 0))
            self._units[logical] = (writes + 1, units + item_write_units(item))

    def due(self, logical: str, settings: ShardShrink) -> bool:
        """True when ``logical`` was quiet for ``quiet_seconds`` here and not measured in ``window_seconds``."""
        now = self.clock()
        with self._lock:
            quiet = now - max(self._first.get(logical, now), self._throttled.get(logical, -math.inf))
            if quiet < settings.quiet_seconds or now - self._measured.get(logical, -math.inf) < settings.window_seconds:
                return False
            self._measured[logical] = now
            return True

    def units_per_write(self, logical: str) -> float:
        """The mean write units of this writer's writes of ``logical`` (1 before any)."""
        writes, units = self._units.get(logical, (0, 0))
        return units / writes if writes else 1.0


def item_write_units(item: Mapping[str, Any]) -> int:
    """DynamoDB's write units for ``item``: one per KB, by the names' and values' lengths (an estimate)."""
    size = sum(len(str(name)) + len(str(value)) for name, value in item.items())
    return max(1, math.ceil(size / 1024))


@dataclass(frozen=True, kw_only=True)
class KeyShrink(ShardAccess):
    """What giving shards back takes: names, read client, metadata, settings and this writer's watch."""

    settings: ShardShrink
    watch: ShrinkWatch
    clock: Callable[[], float]
    growth: ShardGrowth
    metrics: MetricsSink | None


def maybe_shrink(state: KeyShrink, logical: str, info: ShardInfo, item: Mapping[str, Any]) -> int | None:
    """After an accepted write: shrink ``logical`` if it has cooled; the new count, or None."""
    watch, settings = state.watch, state.settings
    watch.written(logical, item)
    now = state.clock()
    current = info.count_from(now)
    if current <= 1 or any(since > now for since, _count in info.history):
        return None  # nothing to give back, or a shrink already waits to take effect
    if not watch.due(logical, settings) or state.metadata.changed_within(logical, info, settings.quiet_seconds):
        return None
    rate = measured_units_per_second(state, logical, info, now, settings.window_seconds)
    target = shards_for(rate, settings, state.growth)
    if target >= current:
        return None
    fresh = state.metadata.read(logical, fresh=True)
    if (fresh.version, fresh.updated_ms) != (info.version, info.updated_ms):
        return None  # another writer changed the key since this one measured
    effective = state.metadata.shrink(logical, fresh, target)
    if effective is None:
        return None
    logger.info("shrank %s from %d to %d shards from %d (%.1f write units/s)", logical, current, target, effective,
                rate)
    emit(state.metrics, [writer_point(
        WriterMetric.SHARD_SHRINKS, state.names.table_name, key=logical, effective=effective,
        **{"from": current, "to": target},
    )])
    return target


def shards_for(rate: float, settings: ShardShrink, growth: ShardGrowth) -> int:
    """The fewest shards that carry ``rate`` write units a second at ``settings.utilisation``, rounded as growth is."""
    need = max(1, math.ceil(rate / (settings.partition_write_units * settings.utilisation) - 1e-9))
    if growth is ShardGrowth.DOUBLE:
        return 1 << (need - 1).bit_length()
    return need


def measured_units_per_second(
    state: KeyShrink, logical: str, info: ShardInfo, now: float, window_seconds: float
) -> float:
    """Every writer's write units a second to ``logical`` over the last ``window_seconds`` of sort-key times."""
    names = state.names
    high = now - _MEASURE_LAG_SECONDS
    low = high - window_seconds
    unit = names.sort_key_time_unit or "s"
    values = to_attribute_values({":low": sort_value(low, unit), ":high": sort_value(high, unit)})
    items = 0
    for shard in range(1, info.shards_over(low, high) + 1):
        request: dict[str, Any] = {
            "TableName": names.table_name,
            "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :low AND :high",
            "ExpressionAttributeNames": {"#pk": names.partition_key, "#sk": names.sort_key},
            "ExpressionAttributeValues": {":pk": {"S": names.keys.physical(logical, shard)}, **values},
            "Select": "COUNT",
        }
        while True:
            page = state.dynamodb().query(**request)
            items += page.get("Count", 0)
            if "LastEvaluatedKey" not in page or page["LastEvaluatedKey"] == request.get("ExclusiveStartKey"):
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return items * state.watch.units_per_write(logical) / window_seconds
