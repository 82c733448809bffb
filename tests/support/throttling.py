"""Writers behind the rules proxy's per-partition limits: ShardedTable on a clock shared with the proxy, and
PeriodRouter with its period tables. The fixtures that start the proxies (``limited``, ``router_proxy``) are
in ``tests/conftest.py``."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime

from cdk_ts_runtime import PeriodRouter, ShardedTable
from cdk_ts_runtime._retries import DATA_PATH, WRITE_PATH
from tests.support.router import create_tables
from tests.support.times import utc

#: Where the ``limited`` proxy's frozen clock, and the writers' ``ProxyClock``, start.
SHARDING_START = datetime(2026, 1, 1, tzinfo=UTC)
#: Where the ``router_proxy``'s frozen clock starts: the day of ``router_through``'s table and of ``hot_items``.
ROUTER_START = datetime(2026, 3, 2, tzinfo=UTC)


class ProxyClock:
    """The writers' clock and the proxy's, moved together (the proxy's frozen clock refills the buckets)."""

    def __init__(self, proxy):
        self.proxy = proxy
        self.now = SHARDING_START.timestamp()
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds
            self.proxy.advance(seconds)


def writer(proxy, main, metadata, clock, seed=0, **kwargs):
    """A ShardedTable writing through ``proxy`` with the runtime's WRITE_PATH and DATA_PATH retries.

    No real sleeps and an rng seeded with ``seed`` unless ``sleep=`` or ``rng=`` is given.
    """
    kwargs.setdefault("sleep", lambda _s: None)
    kwargs.setdefault("rng", random.Random(seed))
    return ShardedTable(
        main, metadata, partition_key="file_path", sort_key="timestamp",
        dynamodb_client=proxy.client(config=WRITE_PATH), dynamodb_read_client=proxy.client(config=DATA_PATH),
        clock=clock, **kwargs,
    )


def router_through(proxy, unique_name, config, **kwargs):
    """A PeriodRouter whose client goes through ``proxy`` with ``config``'s retries; its table for 2026-03-02 exists."""
    router = PeriodRouter(unique_name, dynamodb_client=proxy.client(config=config), **kwargs)
    create_tables(proxy.client(), router.layout, router.tables_between(utc(2026, 3, 2), utc(2026, 3, 2)))
    return router
