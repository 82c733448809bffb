"""ShardedTable across writers that disagree: other fleets' caps, a clock that runs ahead, sized growth."""

from __future__ import annotations

import random

import pytest

from cdk_ts_runtime import ShardReadError
from tests.support.sharding import KEY_RANGE, Clock, metadata_item, shard_history, sharded, throttle_puts
from tests.support.wire import answer, on_demand_throttle


def writer(sharded_tables, clock, **kwargs):
    """One fleet's writer: ``sharded`` on ``clock``, its rng seeded 7."""
    return sharded(sharded_tables, clock=clock, rng=random.Random(7), **kwargs)


def first_writer(sharded_tables, key, **kwargs):
    """``(writer, clock)``: a fleet's writer on a fresh Clock that has written ``key``'s first item (timestamp 0)."""
    clock = Clock()
    table = writer(sharded_tables, clock, **kwargs)
    table.put_item({"file_path": key, "timestamp": 0})
    return table, clock


def test_a_writer_whose_cap_is_below_the_stored_count_writes_and_reads_every_stored_shard(sharded_tables):
    # given a key grown to 16 shards by a fleet with the default cap (64)
    wide, clock = first_writer(sharded_tables, "/shared", cooldown_seconds=1)
    clock.now += 1
    assert wide.grow("/shared", wide.shard_info("/shared", fresh=True), target=16)
    # when a fleet rolled out with max_shards=4 writes and tries to grow it
    narrow = writer(sharded_tables, clock, max_shards=4, cooldown_seconds=1)
    stored = {narrow.put_item({"file_path": "/shared", "timestamp": t}) for t in range(1, 121)}
    clock.now += 5
    assert not narrow.grow("/shared", narrow.shard_info("/shared", fresh=True))
    # then it spread its writes over all 16 shards, reads everything back, and left the count alone
    assert max(narrow.shard_number(k) for k in stored) > 4
    assert [i["timestamp"] for i in narrow.query("/shared")] == list(range(121))
    item = metadata_item(sharded_tables, "/shared")
    assert (item["number_of_shards"], item["max_shards"]) == ({"N": "16"}, {"N": "64"})


def test_a_writer_never_grows_a_key_past_its_own_cap(sharded_tables):
    narrow, clock = first_writer(sharded_tables, "/capped", max_shards=4, cooldown_seconds=1)
    clock.now += 1
    assert narrow.grow("/capped", narrow.shard_info("/capped", fresh=True), target=64)
    assert narrow.shard_count("/capped") == 4
    assert metadata_item(sharded_tables, "/capped")["max_shards"] == {"N": "4"}


def test_a_growth_stamped_in_the_future_holds_others_back_one_cooldown_at_most(sharded_tables):
    # given a writer whose clock runs 60 s ahead grows the key
    slow_clock, fast_clock = Clock(), Clock()
    fast_clock.now += 60
    fast = writer(sharded_tables, fast_clock, cooldown_seconds=10)
    fast.put_item({"file_path": "/skew", "timestamp": 0})
    fast_clock.now += 10
    assert fast.grow("/skew", fast.shard_info("/skew", fresh=True), target=2)
    # when a writer on the right clock sees that growth (stamped 70 s ahead of it)
    slow = writer(sharded_tables, slow_clock, cooldown_seconds=10)
    seen = slow.shard_info("/skew", fresh=True)
    assert not slow.grow("/skew", seen, target=4)  # inside the cooldown from when it first saw the change
    slow_clock.now += 9.9
    assert not slow.grow("/skew", seen, target=4)
    # then one cooldown after it first saw it, it may grow: the future stamp counted as "now"
    slow_clock.now += 0.2
    assert slow.grow("/skew", seen, target=4)
    assert slow.shard_count("/skew") == 4


@pytest.mark.parametrize("saw_the_key_before", [True, False], ids=["writer-that-saw-the-key", "new-writer"])
def test_a_writer_whose_clock_runs_behind_cannot_shorten_another_writers_cooldown(sharded_tables, saw_the_key_before):
    # given a writer 5 minutes behind, and one on the right clock that read the key before the growth or never
    # did (a new Lambda container)
    right_clock, behind_clock = Clock(), Clock()
    behind_clock.now -= 300
    behind = writer(sharded_tables, behind_clock, cooldown_seconds=10)
    behind.put_item({"file_path": "/skew", "timestamp": 0})
    right = None
    if saw_the_key_before:
        right = writer(sharded_tables, right_clock, cooldown_seconds=10)
        right.put_item({"file_path": "/skew", "timestamp": 1})
    right_clock.now += 30
    behind_clock.now += 30
    if right is not None:
        right.shard_info("/skew", fresh=True)
    # when the writer behind grows the key (its stamp says 5 minutes ago, by the right clock)
    assert behind.grow("/skew", behind.shard_info("/skew", fresh=True), target=2)
    right = right or writer(sharded_tables, right_clock, cooldown_seconds=10)
    seen = right.shard_info("/skew", fresh=True)
    assert right_clock.now * 1000 - seen.updated_ms > 10_000  # the stamp alone says the cooldown is over
    # then the writer on the right clock still waits one whole cooldown from when it saw the growth
    assert not right.grow("/skew", seen, target=4)
    right_clock.now += 9.9
    assert not right.grow("/skew", seen, target=4)
    right_clock.now += 0.2
    assert right.grow("/skew", seen, target=4)
    assert right.shard_count("/skew") == 4


def test_stamps_never_go_backward_so_the_history_keeps_the_order_of_the_growths(sharded_tables):
    # given a key grown to 2 by a writer on the right clock
    right_clock, behind_clock = Clock(), Clock()
    behind_clock.now -= 300
    right = writer(sharded_tables, right_clock, cooldown_seconds=1)
    right.put_item({"file_path": "/order", "timestamp": 0})
    right_clock.now += 5
    assert right.grow("/order", right.shard_info("/order", fresh=True), target=2)
    # when a writer 5 minutes behind grows it next, to 4
    behind = writer(sharded_tables, behind_clock, cooldown_seconds=1)
    seen = behind.shard_info("/order", fresh=True)  # stamped ahead of its clock: a cooldown from now
    behind_clock.now += 1.1
    assert behind.grow("/order", seen, target=4)
    # then its stamp follows the growth it replaced: read by stamp, the history goes 1, 2, 4
    history = shard_history(metadata_item(sharded_tables, "/order"))
    assert [count for _epoch, count in history] == [1, 2, 4]
    info = right.shard_info("/order", fresh=True)
    assert info.updated_ms > right_clock.now * 1000 - 10_000  # not stamped 5 minutes back
    assert info.count_at(history[-1][0]) == 4


def test_a_growth_decided_on_a_stamp_fails_when_the_stamp_changed_under_the_same_version(sharded_tables):
    client, _main, metadata = sharded_tables
    table, clock = first_writer(sharded_tables, "/mixed", cooldown_seconds=1)
    clock.now += 5
    seen = table.shard_info("/mixed", fresh=True)
    # given a writer of 0.1 (which knows no version) grows the key to 8 after this writer read it
    client.update_item(
        TableName=metadata, Key={"file_path": {"S": "/mixed"}},
        UpdateExpression="SET number_of_shards = :n, last_updated = :t",
        ExpressionAttributeValues={":n": {"N": "8"}, ":t": {"N": str(int(clock.now))}},
    )
    # when this writer grows on what it read
    assert not table.metadata.grow("/mixed", seen, 2, cap=64)
    # then the other writer's count stands
    assert metadata_item(sharded_tables, "/mixed")["number_of_shards"] == {"N": "8"}


def test_growth_goes_in_one_step_to_the_count_the_observed_throttled_share_implies(sharded_tables):
    client, main, _metadata = sharded_tables
    table, clock = first_writer(sharded_tables, "/viral", cooldown_seconds=10)
    # given 9 in 10 of this writer's recent writes at 1 shard were throttled by key range
    clock.now += 5
    for i in range(100):
        table.throttles.record("/viral", 1, first=True, accepted=i % 10 == 0)
    clock.now += 5  # one cooldown after the key was created
    # when the next write is throttled by key range
    throttle_puts(table.dynamodb, main, times=1, on_demand=True)
    table.put_item({"file_path": "/viral", "timestamp": 1})
    # then the key grew once, straight to 16 shards (10x load, 12.5 with headroom, doubled up to it)
    item = metadata_item(sharded_tables, "/viral")
    assert (item["number_of_shards"], item["version"]) == ({"N": "16"}, {"N": "2"})
    assert [i["timestamp"] for i in table.query("/viral")] == [0, 1]


def test_a_retry_after_a_partition_throttle_moves_the_write_to_another_shard(sharded_tables):
    client, main, _metadata = sharded_tables
    table, clock = first_writer(sharded_tables, "/move", cooldown_seconds=1)
    clock.now += 1
    table.grow("/move", table.shard_info("/move", fresh=True), target=8)
    keys = []

    def throttle_first(request):
        keys.append(request["Item"]["file_path"]["S"])
        return on_demand_throttle(main, KEY_RANGE) if len(keys) == 1 else None

    answer(table.dynamodb, "PutItem", lambda r: throttle_first(r) if r["TableName"] == main else None)
    for _ in range(20):
        keys.clear()
        table.put_item({"file_path": "/move", "timestamp": 1})
        assert len(keys) == 2 and keys[0] != keys[1]


def test_a_fan_out_read_left_unprocessed_stops_after_max_attempts_naming_the_shards(sharded_tables):
    client, main, _metadata = sharded_tables
    table = writer(sharded_tables, Clock(), max_attempts=3)
    table.put_item({"file_path": "/cold", "timestamp": 0})
    calls = []

    class Accepted:
        status_code = 200
        headers: dict = {}

    def unprocessed(**_kwargs):  # DynamoDB answering "not now" for every key, every time
        return Accepted(), {"Responses": {}, "UnprocessedKeys": calls[-1]["RequestItems"]}

    client.meta.events.register("provide-client-params.dynamodb.BatchGetItem", lambda params, **_: calls.append(params))
    client.meta.events.register("before-call.dynamodb.BatchGetItem", unprocessed)
    with pytest.raises(ShardReadError, match=r"'/cold' at timestamp=5: shards \[1\] stayed unprocessed after 3"):
        table.get_item("/cold", 5)
    assert len(calls) == 3
