"""Shards as a function of the item's time, through the rules proxy (cdk_ts.testing) over dynalite.

Hypothesis drives writers with skewed clocks and short metadata caches: items in order, late and far in the past,
growths and shrinks by several writers at once, and the clock moving between rounds. Then random windows are
queried by a fresh reader. Each query must return exactly the items whose sort key matches, and its Query requests
must be exactly the shards in force over its window, as the test reads them from the stored ``shard_history``
with its own reference (not the library's).
"""

from __future__ import annotations

import itertools
import math
import threading
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts_runtime import ShardedTable, ShardShrink
from tests.support.sharding import metadata_item, shard_history, throttle_puts
from tests.support.threads import start_and_join
from tests.support.throttling import ProxyClock, writer

#: The writers' clocks, seconds off the proxy's: within the documented bound (MAX_CLOCK_SKEW_SECONDS, 5 s).
SKEWS = (-4.5, 0.0, 4.5)
_keys = itertools.count()

#: Sort-key offsets from a writer's clock: in order (now or just before), late (minutes), far past (years).
OFFSETS = st.one_of(st.integers(-2, 0), st.integers(-900, -10), st.integers(-10**8, -10**6))
OPERATIONS = st.one_of(
    st.tuples(st.just("write"), st.integers(0, len(SKEWS) - 1), OFFSETS),
    st.tuples(st.just("grow"), st.integers(0, len(SKEWS) - 1), st.sampled_from([2, 4])),
    st.tuples(st.just("shrink"), st.integers(0, len(SKEWS) - 1), st.sampled_from([2, 4])),
)
ROUNDS = st.lists(
    st.tuples(st.lists(OPERATIONS, min_size=1, max_size=5), st.sampled_from([0, 0.5, 2, 30, 61, 300])),
    min_size=2, max_size=7,
)
CONDITIONS = ("between", "gte", "gt", "lte", "lt", "eq", None)


def reference_shards(item, low, high):
    """The shard numbers in force over ``[low, high]``, from the stored metadata item (the test's own reading).

    The count in force at ``low`` (the first entry's for earlier times) and every count recorded after it up to
    ``high``; a window starting before ``time_sharded_since`` also every count recorded before that time.
    """
    history = shard_history(item)
    counts = [count for since, count in history if since <= low][-1:] or [history[0][1]]
    counts += [count for since, count in history if low < since <= high]
    since = int(item["time_sharded_since"]["N"]) if "time_sharded_since" in item else math.inf
    if low < since:
        counts += [count for at, count in history if at <= since] + [history[0][1]]
    return set(range(1, max(counts) + 1))


def window_of(condition, a, b):
    """``(low, high)`` and the test's own match for a sort-key condition."""
    if condition is None:
        return (-math.inf, math.inf), lambda stamp: True
    if condition == "between":
        return (a, b), lambda stamp: a <= stamp <= b
    if condition == "eq":
        return (a, a), lambda stamp: stamp == a
    match = {"gte": lambda s: s >= a, "gt": lambda s: s > a, "lte": lambda s: s <= a, "lt": lambda s: s < a}
    return ((a, math.inf) if condition in ("gte", "gt") else (-math.inf, a)), match[condition]


class Fleet:
    """Writers of one key on skewed clocks, the items they stored, and the steps Hypothesis chose."""

    def __init__(self, proxy, main, metadata, clock, key):
        self.key = key
        self.clock = clock
        self.writers = [
            writer(proxy, main, metadata, lambda skew=skew: clock() + skew, seed=i, sort_key_time_unit="s",
                   cooldown_seconds=1, cache_ttl_seconds=5, max_shards=16)
            for i, skew in enumerate(SKEWS)
        ]
        self.stored: set[int] = set()
        self._taken: set[int] = set()
        self._lock = threading.Lock()

    def run(self, operation):
        kind, index, value = operation
        w = self.writers[index]
        if kind == "write":
            stamp = int(w.clock()) + value
            with self._lock:
                if stamp in self._taken:
                    return  # one item per sort key: two on different shards would both be read back
                self._taken.add(stamp)
            w.put_item({"file_path": self.key, "timestamp": stamp})
            with self._lock:
                self.stored.add(stamp)
            return
        seen = w.shard_info(self.key, fresh=True)
        now = w.clock()
        current = seen.count_from(now)
        if kind == "grow":
            w.grow(self.key, seen, target=min(16, current * value))
        elif current > 1 and not any(since > now for since, _count in seen.history):
            w.metadata.shrink(self.key, seen, max(1, current // value))


def queried_shards(reader, key, condition, a, b=None):
    """What ``reader.query`` returned for the condition, and the shard numbers its Query requests named."""
    shards = []

    def note(params, **_kwargs):
        shards.append(reader.shard_number(params["ExpressionAttributeValues"][":pk"]["S"]))

    reader.read_dynamodb.meta.events.register("provide-client-params.dynamodb.Query", note)
    try:
        arguments = {} if condition is None else {condition: (a, b) if condition == "between" else a}
        items = reader.query(key, **arguments)
    finally:
        reader.read_dynamodb.meta.events.unregister("provide-client-params.dynamodb.Query", note)
    return [item.get("timestamp", item.get("at")) for item in items], shards


@pytest.mark.slow  # ten examples through the rules proxy: ~15 s
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=ROUNDS, data=st.data())
def test_every_window_reads_exactly_its_items_from_exactly_the_shards_in_force_over_it(limited, rounds, data):
    proxy, main, metadata = limited
    proxy.configure(write_units_per_second=1000)  # this test is about placement, not throttling
    clock = ProxyClock(proxy)
    clock.now = proxy.now().timestamp()
    clock.advance(math.ceil(clock.now) + 1 - clock.now)  # each example starts on a whole second: replays repeat
    fleet = Fleet(proxy, main, metadata, clock, f"/item-time/{next(_keys)}")
    fleet.run(("write", 1, 0))  # the key's creation
    for operations, advance in rounds:
        start_and_join(threading.Thread(target=fleet.run, args=(op,)) for op in operations)
        clock.advance(advance)

    reader = writer(proxy, main, metadata, clock, sort_key_time_unit="s")
    stamps = sorted(fleet.stored)
    # drawn relative to the stamps: the proxy's clock runs on across examples, and a replay must draw the same
    near = st.tuples(st.integers(0, len(stamps) - 1), st.integers(-5, 5)).map(lambda p: stamps[p[0]] + p[1])
    anywhere = st.integers(-1000, stamps[-1] - stamps[0] + 1000).map(lambda offset: stamps[0] + offset)
    for _ in range(4):
        condition = data.draw(st.sampled_from(CONDITIONS))
        a, b = sorted([data.draw(st.one_of(near, anywhere)), data.draw(st.one_of(near, anywhere))])
        (low, high), matches = window_of(condition, a, b)
        read, shards = queried_shards(reader, fleet.key, condition, a, b)
        assert read == [stamp for stamp in stamps if matches(stamp)]
        expected = reference_shards(metadata_item((proxy.client(), main, metadata), fleet.key), low, high)
        assert sorted(shards) == sorted(expected)  # one request per shard: every shard once, no other


def test_a_window_after_a_shrink_takes_effect_reads_the_smaller_set_and_the_one_before_it_the_larger(limited):
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    clock.now = proxy.now().timestamp()
    table: ShardedTable = writer(proxy, main, metadata, clock, sort_key_time_unit="s", cooldown_seconds=1)
    table.put_item({"file_path": "/cool", "timestamp": int(clock())})
    clock.advance(2)
    assert table.grow("/cool", table.shard_info("/cool", fresh=True), target=8)
    burst = [int(clock()) + i for i in range(40)]
    for stamp in burst:
        table.put_item({"file_path": "/cool", "timestamp": stamp})
        clock.advance(1)
    effective = table.metadata.shrink("/cool", table.shard_info("/cool", fresh=True), 2)
    assert effective is not None and effective >= clock() + 60
    assert table.shard_count("/cool") == 8  # writers use 8 until the shrink takes effect
    clock.advance(120)
    assert table.shard_count("/cool") == 2
    after = [int(clock()) + i for i in range(20)]
    for stamp in after:
        table.put_item({"file_path": "/cool", "timestamp": stamp})
    read, shards = queried_shards(table, "/cool", "between", after[0], after[-1])
    assert (read, sorted(shards)) == (after, [1, 2])
    read, shards = queried_shards(table, "/cool", "between", burst[0], burst[-1])
    assert (read, sorted(shards)) == (burst, list(range(1, 9)))


def test_a_key_written_by_todays_writers_is_read_whole_by_the_new_readers_without_migration(limited):
    # given a key written as writers before the time model write it: by their clock, late items included
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    clock.now = proxy.now().timestamp()
    today = writer(proxy, main, metadata, clock, cooldown_seconds=1)  # no sort_key_time_unit: today's writer
    start = int(clock())
    early = [start + i for i in range(5)]
    for stamp in early:
        today.put_item({"file_path": "/old", "timestamp": stamp})
    clock.advance(10)
    assert today.grow("/old", today.shard_info("/old", fresh=True), target=8)
    late = [start + 5 + i for i in range(30)]  # times before the growth, written after it: on shards 1..8
    for stamp in late:
        today.put_item({"file_path": "/old", "timestamp": stamp})
    stored = metadata_item((proxy.client(), main, metadata), "/old")
    assert "time_sharded_since" not in stored and len(shard_history(stored)) == 2
    # when new readers read windows, before and after a new writer starts placing items by their time
    reader = writer(proxy, main, metadata, clock, seed=5, sort_key_time_unit="s")
    read, shards = queried_shards(reader, "/old", "between", start, start + 40)
    assert (read, sorted(shards)) == (early + late, list(range(1, 9)))
    clock.advance(60)
    new = writer(proxy, main, metadata, clock, seed=6, sort_key_time_unit="s", cooldown_seconds=1)
    new.put_item({"file_path": "/old", "timestamp": int(clock())})
    clock.advance(1)
    new.metadata.shrink("/old", new.shard_info("/old", fresh=True), 1)
    clock.advance(120)
    recent = [int(clock()) + i for i in range(5)]
    for stamp in recent:
        new.put_item({"file_path": "/old", "timestamp": stamp})
    # then the old window still reads every shard its items may be on, and finds them all
    read, shards = queried_shards(reader, "/old", "lte", start + 40)
    assert (read, sorted(shards)) == (early + late, list(range(1, 9)))
    # and a window after the shrink took effect reads the one shard in force
    read, shards = queried_shards(reader, "/old", "gte", recent[0])
    assert (read, sorted(shards)) == (recent, [1])


def test_a_cooled_key_shrinks_after_its_quiet_time_to_what_its_measured_rate_needs(limited):
    # given a key at 8 shards that now takes 2 writes a second: a fifth of one partition's 10 units
    proxy, main, metadata = limited
    proxy.configure(write_units_per_second=10)
    clock = ProxyClock(proxy)
    clock.now = proxy.now().timestamp()
    points = []
    shrink = ShardShrink(quiet_seconds=30, partition_write_units=10, utilisation=0.5, window_seconds=10)
    table = writer(proxy, main, metadata, clock, sort_key_time_unit="ms", cooldown_seconds=10, shrink=shrink,
                   metrics=points.append)
    start = int(clock() * 1000)
    table.put_item({"file_path": "/cools", "timestamp": start})
    clock.advance(11)  # past the cooldown
    assert table.grow("/cools", table.shard_info("/cools", fresh=True), target=8)
    grown_at = clock()
    written = [start]
    # when it writes 2 a second for two minutes, one partition throttle (injected on the wire) 20 s in
    pending = throttle_puts(table.dynamodb, main, times=0, on_demand=True)
    for step in range(240):
        if step == 40:
            pending["throttles"] = 1
            throttled_at = clock()
        stamp = int(clock() * 1000)
        table.put_item({"file_path": "/cools", "timestamp": stamp})
        written.append(stamp)
        clock.advance(0.5)
    # then it shrank once, to 1 shard, a quiet time after the throttle, effective a notice later
    (shrunk,) = [p for p in points if p.name == "ShardShrinks"]
    assert (shrunk.properties["from"], shrunk.properties["to"]) == (8, 1)
    history = shard_history(metadata_item((proxy.client(), main, metadata), "/cools"))
    assert [count for _since, count in history] == [1, 8, 1]
    assert history[-1][0] >= throttled_at + 30 + 60 and history[-1][0] > grown_at + 30 + 60
    # and a window after it takes effect reads one shard, the window of the grown key all 8, missing nothing
    effective_ms = history[-1][0] * 1000
    read, shards = queried_shards(table, "/cools", "gte", effective_ms)
    assert (read, shards) == ([s for s in written if s >= effective_ms], [1])
    assert [(p.value, p.properties["low"]) for p in points if p.name == "ShardsRead"] == [(1, effective_ms / 1000)]
    read, shards = queried_shards(table, "/cools", "between", start, effective_ms - 1)
    assert read == [s for s in written if s < effective_ms] and sorted(shards) == list(range(1, 9))


def test_shrinking_needs_the_time_model_and_a_quiet_time_no_shorter_than_the_growth_cooldown():
    with pytest.raises(ValueError, match="shrink needs sort_key_time_unit"):
        ShardedTable("t", "m", partition_key="pk", sort_key="sk", shrink=ShardShrink())
    with pytest.raises(ValueError, match=r"quiet_seconds 5 is shorter than cooldown_seconds 10.*>= 10"):
        ShardedTable("t", "m", partition_key="pk", sort_key="sk", sort_key_time_unit="s",
                     shrink=ShardShrink(quiet_seconds=5))


def test_a_writer_with_a_cached_history_from_before_a_shrink_writes_where_readers_of_its_window_look(limited):
    # given two writers of a key at 16 shards, one of which has the history cached
    proxy, main, metadata = limited
    proxy.configure(write_units_per_second=1000)  # placement, not throttling
    clock = ProxyClock(proxy)
    clock.now = proxy.now().timestamp()
    shrinking, cached = (writer(proxy, main, metadata, clock, seed=i, sort_key_time_unit="s", cooldown_seconds=1,
                                cache_ttl_seconds=5) for i in range(2))
    shrinking.put_item({"file_path": "/stale", "timestamp": int(clock())})
    clock.advance(2)
    assert shrinking.grow("/stale", shrinking.shard_info("/stale", fresh=True), target=16)
    cached.put_item({"file_path": "/stale", "timestamp": int(clock())})  # caches the 16
    # when the other records a shrink to 1 and the cached writer writes within its cache's life, now and ahead
    clock.advance(1)
    assert shrinking.metadata.shrink("/stale", shrinking.shard_info("/stale", fresh=True), 1) is not None
    clock.advance(3)
    now = int(clock())
    stamps = [now + i for i in range(40)] + [now + 3600]  # the last an hour ahead: past the cache's horizon
    for stamp in stamps:
        cached.put_item({"file_path": "/stale", "timestamp": stamp})
    # then every one of them is read by a window holding it, each window from its own shard set
    reader = writer(proxy, main, metadata, clock, seed=3, sort_key_time_unit="s")
    for stamp in stamps:
        read, shards = queried_shards(reader, "/stale", "eq", stamp)
        assert read == [stamp]
    read, shards = queried_shards(reader, "/stale", "eq", now + 3600)
    assert shards == [1]  # an hour ahead, the shrink is in force: the cached writer read the history again


def test_iso_sort_keys_a_day_by_begins_with_reads_the_shards_of_that_day_only(limited, unique_name):
    # given a table whose sort key is ISO 8601 text, and a key grown to 8 on 2 January then shrunk to 1 on the 3rd
    proxy, _main, metadata = limited
    proxy.configure(write_units_per_second=1000)
    client = proxy.client()
    main = f"{unique_name}-iso"
    client.create_table(
        TableName=main, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "file_path", "KeyType": "HASH"}, {"AttributeName": "at", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "file_path", "AttributeType": "S"},
                              {"AttributeName": "at", "AttributeType": "S"}],
    )
    clock = ProxyClock(proxy)
    clock.now = proxy.now().timestamp()  # 2026-01-01T00:00Z
    table = ShardedTable(main, metadata, partition_key="file_path", sort_key="at", sort_key_time_unit="iso",
                         cooldown_seconds=1, clock=clock, sleep=lambda _s: None,
                         dynamodb_client=proxy.client(), dynamodb_read_client=proxy.client())
    days = {}
    for day in ("2026-01-01", "2026-01-02", "2026-01-03"):
        clock.now = datetime.fromisoformat(f"{day}T12:00:00+00:00").timestamp()
        if day == "2026-01-02":
            assert table.grow("/iso", table.shard_info("/iso", fresh=True), target=8)
        if day == "2026-01-03":
            assert table.metadata.shrink("/iso", table.shard_info("/iso", fresh=True), 1) is not None
            clock.now += 120  # past the notice
        days[day] = [f"{day}T{hour:02d}:30:00Z" for hour in range(13, 20)]
        for stamp in days[day]:
            table.put_item({"file_path": "/iso", "at": stamp})
    # when each day is read by its ISO date, then each reads its items from the shards in force that day: the
    # 3rd's morning still had 8; an hour of its afternoon, after the shrink took effect, has 1
    for prefix, count in (("2026-01-01", 1), ("2026-01-02", 8), ("2026-01-03", 8), ("2026-01-03T14", 1)):
        read, shards = queried_shards(table, "/iso", "begins_with", prefix)
        assert read == [stamp for stamp in days[prefix[:10]] if stamp.startswith(prefix)]
        assert sorted(shards) == list(range(1, count + 1))
