"""How much of a key's recent writing was throttled, and CloudWatch's verdict on a throttle without reasons.

Which throttles more shards cure is :mod:`cdk_ts_runtime._throttling` (re-exported here): DynamoDB's reasons
name the exhausted resource; without them (older botocore, other emulators) CloudWatch tells a hot partition
from a table at its provisioned limit.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from cdk_ts_runtime._inputs import number, whole
from cdk_ts_runtime._throttling import ThrottleScope, throttle_scope

__all__ = ["CloudWatchScope", "ThrottleScope", "ThrottleWindow", "throttle_scope"]

logger = logging.getLogger(__name__)


class ThrottleWindow:
    """One writer's recent writes per logical key: the writes offered and the writes accepted, per shard count.

    The throttled share is ``1 - accepted / offered``, where ``offered`` counts each write once (its first
    attempt) and ``accepted`` counts writes stored at any attempt: retries spend the same partition's units,
    so counting each attempt as an offer would overstate the load. Only outcomes of the key's own partitions
    count (a table-level throttle is neither).

    Once the key has been throttled for ``saturation_seconds``, the share is counted from its first
    throttle in the window: what the shards took before they were full (their burst, or a load that had not
    yet risen) says nothing of how much more the key is offered now.

    Memory is bounded: at most ``max_samples`` per key and ``max_keys`` keys (the least recently written
    key is forgotten first).

    :param window_seconds: how far back a share is measured.
    :param clock: returns the time in epoch seconds.
    :param max_samples: the most outcomes kept per key.
        Default: 4096.
    :param max_keys: the most keys tracked.
        Default: 1024.
    """

    #: Fewer writes than this offered at the current count tell nothing: growth takes the policy's smallest step.
    MIN_SAMPLES = 20
    #: How long throttling must have lasted before it says the key is full. DynamoDB's partition limits are
    #: per second; a shorter burst of throttles is what a writer's retries absorb, and 20 writes at the very
    #: start of throttling are its most clustered sample.
    SATURATION_SECONDS = 1.0

    def __init__(
        self, window_seconds: float, clock: Callable[[], float], *, max_samples: int = 4096, max_keys: int = 1024
    ) -> None:
        number("window_seconds", window_seconds, above=True)
        whole("max_samples", max_samples)
        whole("max_keys", max_keys)
        self.window_seconds = window_seconds
        #: a window of under two seconds (a cooldown that short) judges after half of it
        self.saturation_seconds = min(self.SATURATION_SECONDS, window_seconds / 2)
        self.clock = clock
        self.max_samples = max_samples
        self.max_keys = max_keys
        self._keys: OrderedDict[str, deque[tuple[float, int, bool, bool]]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, key: str, count: int, *, first: bool, accepted: bool) -> None:
        """Note one attempt at writing to ``key`` at ``count`` shards: a write's first attempt or not, stored or not."""
        whole("count", count)
        with self._lock:
            samples = self._keys.get(key)
            if samples is None:
                samples = self._keys[key] = deque(maxlen=self.max_samples)
                while len(self._keys) > self.max_keys:
                    self._keys.popitem(last=False)
            else:
                self._keys.move_to_end(key)
            samples.append((self.clock(), count, first, accepted))

    def settling(self, key: str, count: int) -> bool:
        """True while the first throttle at ``count`` shards in the window is younger than ``saturation_seconds``."""
        whole("count", count)
        since = self._since_first_throttle(self._recent(key, count))
        return since is not None and since[0] < self.saturation_seconds

    def saturated_share(self, key: str, count: int, *, cautious: bool = False) -> float | None:
        """The share counted from the key's first throttle at ``count`` shards in the window.

        None until that throttle is ``saturation_seconds`` old (:attr:`SATURATION_SECONDS`, or half the window
        if that is shorter) and :attr:`MIN_SAMPLES` writes were offered since it, or when the window holds no
        throttle.

        :param key: the logical key.
        :param count: the shard count the writes were made at.
        :param cautious: count one standard deviation fewer accepted writes, as ``share`` does.
            Default: False.
        """
        whole("count", count)
        return self._saturated_share(self._recent(key, count), cautious)

    def share(self, key: str, count: int, *, cautious: bool = False) -> float | None:
        """The share of the writes offered to the key at ``count`` shards that it did not take.

        :meth:`saturated_share` when there is one; else the share over the whole window; None when fewer than
        :attr:`MIN_SAMPLES` writes were offered at that count within the window.

        :param key: the logical key.
        :param count: the shard count the writes were made at.
        :param cautious: count one standard deviation fewer accepted writes, the square root of their count.
            Under a heavy overload a writer sees only a handful of its writes taken, and a few lucky ones make
            a 10x load look like 6x; growth is sized with this, and judged necessary without it.
            Default: False.
        """
        whole("count", count)
        recent = self._recent(key, count)
        saturated = self._saturated_share(recent, cautious)
        return saturated if saturated is not None else self._share(recent, cautious)

    def _recent(self, key: str, count: int) -> list[tuple[float, bool, bool]]:
        since = self.clock() - self.window_seconds
        with self._lock:
            return [(at, first, ok) for at, used, first, ok in self._keys.get(key, ()) if at >= since and used == count]

    def _since_first_throttle(
        self, recent: list[tuple[float, bool, bool]]
    ) -> tuple[float, list[tuple[float, bool, bool]]] | None:
        """The seconds since the first throttle of ``recent`` and the samples from it on; None without one."""
        first = next((index for index, (_at, _first, ok) in enumerate(recent) if not ok), None)
        return None if first is None else (self.clock() - recent[first][0], recent[first:])

    def _saturated_share(self, recent: list[tuple[float, bool, bool]], cautious: bool) -> float | None:
        since = self._since_first_throttle(recent)
        if since is None or since[0] < self.saturation_seconds:
            return None
        return self._share(since[1], cautious)

    def _share(self, samples: list[tuple[float, bool, bool]], cautious: bool = False) -> float | None:
        offered = sum(first for _at, first, _ok in samples)
        if offered < self.MIN_SAMPLES:
            return None
        accepted = sum(ok for _at, _first, ok in samples)
        if cautious:
            accepted -= math.sqrt(accepted)
        return max(0.0, 1 - accepted / offered)


class CloudWatchScope:
    """Without ThrottlingReasons: a table well under its provisioned WCU means one hot partition.

    :param table_name: the main table.
    :param cloudwatch: returns the CloudWatch client.
    :param clock: returns the time in epoch seconds.
    :param table_headroom: a table consuming less than this share of its provisioned WCU has one hot partition.
    """

    def __init__(
        self, table_name: str, cloudwatch: Callable[[], Any], clock: Callable[[], float], table_headroom: float
    ) -> None:
        number("table_headroom", table_headroom, minimum=0, maximum=1, above=True)
        self.table_name = table_name
        self.cloudwatch = cloudwatch
        self.clock = clock
        self.table_headroom = table_headroom

    def scope(self) -> ThrottleScope:
        """The metrics' verdict, or ``UNKNOWN`` (no growth) when CloudWatch cannot be read; never raises."""
        try:
            return self._from_metrics()
        except Exception as error:  # noqa: BLE001 - the throttle, not the metrics call, is what the caller handles
            logger.warning("cannot classify a throttle of %s from CloudWatch (%s); not growing", self.table_name, error)
            return ThrottleScope.UNKNOWN

    def _from_metrics(self) -> ThrottleScope:
        end = datetime.fromtimestamp(self.clock(), UTC)
        start = end - timedelta(minutes=5)

        def largest(metric: str, statistic: str) -> float | None:
            points = self.cloudwatch().get_metric_statistics(
                Namespace="AWS/DynamoDB",
                MetricName=metric,
                StartTime=start,
                EndTime=end,
                Period=60,
                Statistics=[statistic],
                Dimensions=[{"Name": "TableName", "Value": self.table_name}],
            )["Datapoints"]
            return max(p[statistic] for p in points) if points else None

        consumed = largest("ConsumedWriteCapacityUnits", "Sum")
        provisioned = largest("ProvisionedWriteCapacityUnits", "Average")
        if consumed is None or not provisioned:
            return ThrottleScope.TABLE  # on-demand or no data: do not shard on a guess
        return ThrottleScope.PARTITION if consumed / 60 < self.table_headroom * provisioned else ThrottleScope.TABLE
