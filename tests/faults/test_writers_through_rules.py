"""Issue 23's writer properties through the rules proxy, botocore's own retries included.

``tests/runtime/test_sharding_fleets.py`` and ``tests/faults/test_router_throttling.py`` show the same
properties on the engines directly or with injected throttles; here DynamoDB's per-partition limits are the
proxy's (the tables are on-demand: ``ThrottlingException`` with ``throttlingReasons``
``TableWriteKeyRangeThroughputExceeded``, reads over a partition's units left in ``UnprocessedKeys``). The
proxy's clock is frozen: time moves only when a test moves it. dynalite is the engine wherever writers grow a
key (its conditional updates are atomic). Every test asserts what was written (each item read back exactly
once under its logical key) and what the shard metadata holds afterwards.
"""

from __future__ import annotations

import random
import threading

import pytest
from botocore.exceptions import ClientError

from cdk_ts_runtime._retries import DATA_PATH
from cdk_ts_runtime._sharding import (
    SHARD_CEILING,
    CorruptShardMetadataError,
    ShardGrowth,
    ShardReadError,
)
from tests.support.router import hot_items
from tests.support.sharding import metadata_item, shard_history
from tests.support.threads import start_and_join
from tests.support.throttling import ProxyClock, router_through, writer
from tests.support.times import utc

KEY_RANGE = "TableWriteKeyRangeThroughputExceeded"


def metadata_of(proxy, metadata, key):
    """The metadata item as stored, read around the writers (strongly consistent); ``history``: counts, ascending.

    Each entry's epoch is the clock of the writer that grew the key, and writers' clocks may disagree.
    """
    item = metadata_item((proxy.client(), None, metadata), key)
    return {
        "number_of_shards": int(item["number_of_shards"]["N"]),
        "max_shards": int(item["max_shards"]["N"]) if "max_shards" in item else None,
        "version": int(item["version"]["N"]) if "version" in item else None,
        "history": sorted(count for _epoch, count in shard_history(item)),
        "stamped": shard_history(item),
    }


def stored_physical(proxy, main):
    """Every (physical key, timestamp) in the main table, read around the writers."""
    pages = proxy.client().get_paginator("scan").paginate(TableName=main, ConsistentRead=True)
    return [(i["file_path"]["S"], int(i["timestamp"]["N"])) for page in pages for i in page["Items"]]


def offer(table, key, stamps, accepted, refused):
    """Write one item per stamp; a throttle that outlasts the writer's attempts is noted, anything else fails."""
    for stamp in stamps:
        try:
            accepted[stamp] = table.put_item({"file_path": key, "timestamp": stamp})
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ThrottlingException"
            assert error.response["throttlingReasons"][0]["reason"] == KEY_RANGE
            refused.append(stamp)


def assert_read_back_once(table, proxy, main, key, accepted):
    """What the writers said they stored is what the table holds: each item once, under the logical key."""
    items = table.query(key)
    stamps = [i["timestamp"] for i in items]
    assert stamps == sorted(accepted), "an item lost or written twice"
    assert {i["file_path"] for i in items} == {key}
    physical = sorted(stored_physical(proxy, main))
    assert physical == sorted((accepted[s], s) for s in accepted)


# ---- 1. fleets with different settings ----------------------------------------------------------------------


def test_fleets_with_different_caps_and_growth_share_a_key_under_partition_throttling(limited):
    # given a fleet with max_shards=4 (doubling) writing 3x one partition's 10 writes/s to one key
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    narrow = writer(proxy, main, metadata, clock, seed=1, max_shards=4, cooldown_seconds=1, max_attempts=3)
    accepted: dict[int, str] = {}
    refused: list[int] = []
    stamps = iter(range(10**6))
    for _step in range(40):  # 4 s of proxy time, 3 writes every 0.1 s
        offer(narrow, "/shared", [next(stamps) for _ in range(3)], accepted, refused)
        clock.advance(0.1)
    # then it grew the key to its own cap and no further, however hard the key was throttled
    after_narrow = metadata_of(proxy, metadata, "/shared")
    assert (after_narrow["number_of_shards"], after_narrow["max_shards"]) == (4, 4)
    assert refused, "the load was meant to be throttled"
    assert_read_back_once(narrow, proxy, main, "/shared", accepted)
    # when a fleet rolled out with the default cap (64) and increment growth offers 10x one partition
    wide = writer(proxy, main, metadata, clock, seed=2, growth=ShardGrowth.INCREMENT, cooldown_seconds=1,
                  max_attempts=3)
    for _step in range(60):
        offer(wide, "/shared", [next(stamps) for _ in range(10)], accepted, refused)
        clock.advance(0.1)
    grown = metadata_of(proxy, metadata, "/shared")
    assert grown["number_of_shards"] > 4 and grown["max_shards"] == 64
    # and the narrow fleet keeps writing to the key it cannot grow any more
    before = len(accepted)
    for _step in range(20):
        offer(narrow, "/shared", [next(stamps) for _ in range(3)], accepted, refused)
        clock.advance(0.1)
    # then its writes went to every stored shard, not only its first 4, it left the count alone, and both
    # fleets read back every item each wrote, once
    narrow_late = [accepted[s] for s in list(accepted)[before:]]
    assert len(narrow_late) == 60 and max(narrow.shard_number(k) for k in narrow_late) > 4
    assert metadata_of(proxy, metadata, "/shared") == grown
    assert not narrow.grow("/shared", narrow.shard_info("/shared", fresh=True))
    assert_read_back_once(narrow, proxy, main, "/shared", accepted)
    assert wide.query("/shared") == narrow.query("/shared")
    # growth went once per grow: the history holds each count once, stamped in order (one clock here)
    assert grown["history"] == sorted(set(grown["history"])) and grown["version"] == len(grown["history"])
    assert [count for _epoch, count in grown["stamped"]] == grown["history"]


def test_fleets_with_different_caps_racing_on_one_key_grow_it_once_per_cooldown_and_lose_nothing(limited):
    # given two writers capped at 4 and two at the default 64 (increment and double growth), all at once
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    writers = [
        writer(proxy, main, metadata, clock, seed=10, max_shards=4, cooldown_seconds=2, max_attempts=2),
        writer(proxy, main, metadata, clock, seed=11, max_shards=4, cooldown_seconds=2, max_attempts=2),
        writer(proxy, main, metadata, clock, seed=12, cooldown_seconds=2, max_attempts=2),
        writer(proxy, main, metadata, clock, seed=13, growth=ShardGrowth.INCREMENT, cooldown_seconds=2,
               max_attempts=2),
    ]
    accepted: dict[int, str] = {0: writers[0].put_item({"file_path": "/race", "timestamp": 0})}
    refused: list[int] = []
    lock = threading.Lock()

    def one(table, stamp):
        mine: dict[int, str] = {}
        lost: list[int] = []
        offer(table, "/race", [stamp], mine, lost)
        with lock:
            accepted.update(mine)
            refused.extend(lost)

    # when each offers 15 writes a second (60/s against 10/s a partition) for 8 s of proxy time
    stamps = iter(range(1, 10**6))
    order = random.Random(5)
    for _step in range(8 * 15):
        start_and_join(threading.Thread(target=one, args=(w, next(stamps))) for w in order.sample(writers, 4))
        clock.advance(1 / 15)
    # then the key grew past the narrow writers' cap, every growth is recorded once (version = history), each
    # growth after the first at least one cooldown after the one before (a key never grown may grow as soon
    # as a writer has measured it), and every accepted write is read back once by every fleet
    item = proxy.client().get_item(TableName=metadata, Key={"file_path": {"S": "/race"}}, ConsistentRead=True)["Item"]
    history = shard_history(item)
    counts = [count for _epoch, count in history]
    assert counts == sorted(set(counts)) and counts[-1] == int(item["number_of_shards"]["N"]) > 4
    assert int(item["version"]["N"]) == len(history) >= 2
    growths = history[1:]  # whether a second growth is needed depends on which writer won the first race
    assert all(b[0] - a[0] >= 2 for a, b in zip(growths, growths[1:], strict=False))
    assert int(item["number_of_shards"]["N"]) <= int(item["max_shards"]["N"])
    assert refused, "the load was meant to be throttled"
    assert_read_back_once(writers[0], proxy, main, "/race", accepted)
    assert all(w.query("/race") == writers[0].query("/race") for w in writers[1:])


def test_a_writer_capped_below_the_stored_count_writes_and_reads_every_shard_through_the_proxy(limited):
    # given a key grown to 16 shards by a fleet with the default cap
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    wide = writer(proxy, main, metadata, clock, seed=3, cooldown_seconds=1)
    accepted: dict[int, str] = {0: wide.put_item({"file_path": "/wide", "timestamp": 0})}
    clock.advance(1)
    assert wide.grow("/wide", wide.shard_info("/wide", fresh=True), target=16)
    # when a writer with max_shards=4 writes 120 items, 12 every second (more than one partition takes)
    narrow = writer(proxy, main, metadata, clock, seed=4, max_shards=4, cooldown_seconds=1)
    for second in range(10):
        for i in range(12):
            stamp = 1 + second * 12 + i
            accepted[stamp] = narrow.put_item({"file_path": "/wide", "timestamp": stamp})
        clock.advance(1)
    # then every write was taken, spread over all 16 shards, read back once; the count and the cap are the wide fleet's
    assert max(narrow.shard_number(k) for k in accepted.values()) > 4
    assert_read_back_once(narrow, proxy, main, "/wide", accepted)
    assert narrow.get_item("/wide", 77)["timestamp"] == 77
    assert not narrow.grow("/wide", narrow.shard_info("/wide", fresh=True))
    stored = metadata_of(proxy, metadata, "/wide")
    assert (stored["number_of_shards"], stored["max_shards"], stored["version"]) == (16, 64, 2)


@pytest.mark.parametrize(
    ("count", "cap", "message"),
    [
        (SHARD_CEILING + 1, None, rf"number_of_shards {SHARD_CEILING + 1} is outside 1\.\.{SHARD_CEILING}"),
        (8, 4, r"number_of_shards 8 is outside 1\.\.4"),
    ],
    ids=["past-the-hard-ceiling", "past-the-recorded-cap"],
)
def test_a_count_no_fleet_could_have_grown_to_is_refused_before_any_fan_out(limited, count, cap, message):
    # given a metadata item whose count no writer could have stored
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    table = writer(proxy, main, metadata, clock, seed=5)
    item = {
        "file_path": {"S": "/corrupt"}, "number_of_shards": {"N": str(count)}, "last_updated": {"N": "1"},
        "version": {"N": "3"}, "shard_history": {"SS": ["1:1", f"2:{count}"]},
    }
    if cap is not None:
        item["max_shards"] = {"N": str(cap)}
    proxy.client().put_item(TableName=metadata, Item=item)
    proxy.reset_stats()
    # when it is written, queried and read by key
    for call in (
        lambda: table.put_item({"file_path": "/corrupt", "timestamp": 1}),
        lambda: table.query("/corrupt"),
        lambda: table.get_item("/corrupt", 1),
    ):
        with pytest.raises(CorruptShardMetadataError, match=rf"'/corrupt': {message}"):
            call()
    # then nothing reached the main table (only the metadata reads were sent), nothing was written, and the
    # item is as it was
    requests = proxy.stats()["requests"]
    assert set(requests) == {"GetItem"}
    assert stored_physical(proxy, main) == []
    assert proxy.client().get_item(TableName=metadata, Key={"file_path": {"S": "/corrupt"}})["Item"] == item


# ---- 2. clock skew -----------------------------------------------------------------------------------------


def test_a_growth_stamped_in_the_future_holds_growth_back_one_cooldown_at_most_through_the_proxy(limited):
    # given a writer whose clock runs 60 s ahead grows the key to 2 shards
    proxy, main, metadata = limited
    slow_clock = ProxyClock(proxy)
    fast = writer(proxy, main, metadata, lambda: slow_clock() + 60, seed=6, cooldown_seconds=10)
    accepted = {0: fast.put_item({"file_path": "/skew", "timestamp": 0})}
    slow_clock.advance(10)
    assert fast.grow("/skew", fast.shard_info("/skew", fresh=True), target=2)
    # when a writer on the right clock offers 3x what 2 shards take (growth stamped 70 s ahead of it)
    slow = writer(proxy, main, metadata, slow_clock, seed=7, cooldown_seconds=10, max_attempts=3)
    refused: list[int] = []
    stamps = iter(range(1, 10**6))
    for _step in range(99):  # 9.9 s: inside one cooldown from when it first saw the growth
        offer(slow, "/skew", [next(stamps) for _ in range(6)], accepted, refused)
        slow_clock.advance(0.1)
    held = metadata_of(proxy, metadata, "/skew")
    assert refused and (held["number_of_shards"], held["version"]) == (2, 2)
    # then one cooldown after it first saw the growth, the next throttle grows the key: the future stamp
    # held growth back one cooldown, not the 70 s until the slow clock reaches it
    for _step in range(20):
        offer(slow, "/skew", [next(stamps) for _ in range(6)], accepted, refused)
        slow_clock.advance(0.1)
    grown = metadata_of(proxy, metadata, "/skew")
    assert grown["number_of_shards"] > 2 and grown["version"] == 3 and grown["max_shards"] == 64
    assert grown["history"] == [1, 2, grown["number_of_shards"]]
    assert_read_back_once(slow, proxy, main, "/skew", accepted)


# ---- 3. bounded reads -------------------------------------------------------------------------------------


class OnShard(random.Random):
    """An rng that puts a random-strategy write on the shard the test names (backoff jitter stays seeded)."""

    def __init__(self, shard):
        super().__init__(0)
        self.shard = shard

    def randint(self, low, high):
        return min(max(self.shard, low), high)


def test_a_point_read_left_unprocessed_by_the_proxy_stops_after_max_attempts_naming_the_shards(limited):
    # given a key on 4 shards, read with the random strategy (a point read asks every shard in one
    # BatchGetItem), items at timestamp 5 of 24 KB, 44 KB and 390 KB on shards 2, 3 and 4, a partition read
    # limit of 5 units a second, and a writer whose backoff waits one second of proxy time
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)

    def on(shard):
        return writer(proxy, main, metadata, clock, rng=OnShard(shard), strategy="random", cooldown_seconds=1)

    table = writer(
        proxy, main, metadata, clock, seed=8, sleep=lambda _s: clock.advance(1), strategy="random",
        cooldown_seconds=1, max_attempts=3,
    )
    on(1).put_item({"file_path": "/cold", "timestamp": 0})
    clock.advance(1)
    assert table.grow("/cold", table.shard_info("/cold", fresh=True), target=4)
    for shard, size in ((2, 24_000), (3, 44_000), (4, 390_000)):
        on(shard).put_item({"file_path": "/cold", "timestamp": 5, "payload": "x" * size})
    accepted = set(stored_physical(proxy, main))
    assert accepted == {("/cold_1", 0), ("/cold_2", 5), ("/cold_3", 5), ("/cold_4", 5)}
    proxy.configure(read_units_per_second=5)
    # the first read finds an item; the proxy charges every item the batch returned (6, 11 and 96 units), which
    # overdraws those shards' partitions by 1, 6 and 91 units (the metadata item's, one unit a read, keeps its)
    assert len(table.get_item("/cold", 5)["payload"]) in (24_000, 44_000, 390_000)
    proxy.reset_stats()
    # when a timestamp with no item is read, each call is answered for the shards whose units are back
    # (shard 1 at once, shard 2 after one wait, shard 3 after two) and the rest come back in UnprocessedKeys
    with pytest.raises(ShardReadError) as raised:
        table.get_item("/cold", 6)
    # then it stopped after max_attempts BatchGetItem calls, naming the shard never read
    assert str(raised.value) == (
        "point read of '/cold' at timestamp=6: shards [4] stayed unprocessed after 3 BatchGetItem attempts "
        "(max_attempts); retry later"
    )
    stats = proxy.stats()
    assert stats["requests"]["BatchGetItem"] == 3
    assert stats["refusals"]["BatchGetItem:UnprocessedKeys"] == 3
    # and once the partitions' units refill, everything written is read back once; the metadata is untouched
    clock.advance(30)
    assert table.get_item("/cold", 6) is None
    items = table.query("/cold")
    assert [(i["file_path"], i["timestamp"]) for i in items] == [("/cold", 0), ("/cold", 5), ("/cold", 5), ("/cold", 5)]
    assert sorted(len(i.get("payload", "")) for i in items) == [0, 24_000, 44_000, 390_000]
    stored = metadata_of(proxy, metadata, "/cold")
    assert (stored["number_of_shards"], stored["version"], stored["history"]) == (4, 2, [1, 4])


def test_a_point_read_whose_retry_the_proxy_refuses_whole_raises_the_throttle_after_bounded_requests(limited):
    # given a key on 2 shards, one holding a 44 KB item at timestamp 5, and a read limit of 5 units a second
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    table = writer(
        proxy, main, metadata, clock, rng=OnShard(2), strategy="random", cooldown_seconds=1, max_attempts=3
    )
    table.put_item({"file_path": "/one", "timestamp": 0, "payload": "x" * 44_000})
    clock.advance(1)
    assert table.grow("/one", table.shard_info("/one", fresh=True), target=2)
    proxy.configure(read_units_per_second=5)
    assert table.get_item("/one", 0)["timestamp"] == 0  # overdraws the partition of /one_1 by 6 units
    proxy.reset_stats()
    # when a point read's only unprocessed shard is that one: the retry asks for it alone, and DynamoDB
    # refuses a BatchGetItem none of whose keys it can read with its throttle (ThrottlingException: on-demand)
    with pytest.raises(ClientError) as raised:
        table.get_item("/one", 6)
    # then the read stopped: one call answered in part, one call the SDK tried 3 times, then the throttle
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    stats = proxy.stats()
    assert stats["requests"]["BatchGetItem"] == 4
    assert stats["refusals"] == {
        "BatchGetItem:UnprocessedKeys": 1, "BatchGetItem:ThrottlingException": 3,
    }
    # and nothing written was lost or doubled, the metadata untouched
    clock.advance(30)
    assert [(i["file_path"], i["timestamp"]) for i in table.query("/one")] == [("/one", 0)]
    assert stored_physical(proxy, main) == [("/one_1", 0)]
    stored = metadata_of(proxy, metadata, "/one")
    assert (stored["number_of_shards"], stored["version"], stored["history"]) == (2, 2, [1, 2])


# ---- 4. PeriodRouter single puts and queries --------------------------------------------------------------


class SdkAttempts:
    """Counts botocore's attempts per API call; ``refill`` seconds pass on the proxy before each retry.

    The SDK's backoff sleeps real time, which the frozen proxy clock does not see: moving the proxy clock
    when the SDK resends is what its wait would have done to the partition.
    """

    def __init__(self, proxy, client, operation, refill=0.0):
        self.proxy, self.refill, self.calls = proxy, refill, []
        client.meta.events.register(f"before-call.dynamodb.{operation}", self._call)
        client.meta.events.register(f"before-send.dynamodb.{operation}", self._send)

    def _call(self, **_kwargs):
        self.calls.append(0)

    def _send(self, **_kwargs):
        if self.calls[-1] and self.refill:
            self.proxy.advance(self.refill)
        self.calls[-1] += 1


def test_router_single_puts_are_retried_by_the_sdk_then_written_or_raised_with_the_throttle(router_proxy, unique_name):
    proxy = router_proxy
    router = router_through(proxy, unique_name, DATA_PATH, sleep=lambda _s: None)
    attempts = SdkAttempts(proxy, router.dynamodb, "PutItem")
    items = hot_items(12)
    written = []
    # given one partition key taking 10 writes a second and a clock that does not move
    for item in items[:10]:
        router.put_item(item)
        written.append(item["i"])
    # when the 11th is written, the SDK tries 3 times, then the throttle is raised as DynamoDB gave it
    with pytest.raises(ClientError) as raised:
        router.put_item(items[10])
    assert attempts.calls == [1] * 10 + [3]
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    assert raised.value.response["throttlingReasons"][0]["reason"] == KEY_RANGE
    # when the partition refills while the SDK waits (0.15 s per retry: 1.5 units), the retry writes it
    attempts.refill = 0.15
    for item in items[10:]:
        router.put_item(item)
        written.append(item["i"])
    assert attempts.calls[-2:] == [2, 2]
    # then every item the router reported written is stored once, and the refused one is not there twice
    assert [i["i"] for i in router.query(7, utc(2026, 3, 2), utc(2026, 3, 2, 23))] == written == list(range(12))
    assert proxy.stats()["refusals"]["PutItem:ThrottlingException"] >= 3


def test_router_queries_of_a_throttled_partition_are_retried_by_the_sdk_and_lose_nothing(router_proxy, unique_name):
    # given 15 items of one partition and a partition read limit of a quarter unit a second
    proxy = router_proxy
    router = router_through(proxy, unique_name, DATA_PATH, sleep=lambda _s: None)
    assert router.put_items(hot_items(10)) == 10
    proxy.advance(1)
    assert router.put_items(hot_items(15)[10:]) == 5
    attempts = SdkAttempts(proxy, router.dynamodb, "Query")
    proxy.configure(read_units_per_second=0.25)
    window = (utc(2026, 3, 2), utc(2026, 3, 2, 23))
    # the first query reads them all and overdraws the partition's read units
    assert [i["i"] for i in router.query(7, *window)] == list(range(15))
    # when it is queried again with the clock still, the SDK's 3 attempts are refused and the throttle raised
    with pytest.raises(ClientError) as raised:
        router.query(7, *window)
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    assert attempts.calls == [1, 3]
    # when the partition refills while the SDK waits, its retry reads every item, once, in order
    attempts.refill = 2.0
    assert [i["i"] for i in router.query(7, *window, newest_first=True)] == list(range(14, -1, -1))
    assert attempts.calls[-1] == 2
    assert proxy.stats()["refusals"]["Query:ThrottlingException"] >= 4
