"""ShardedTable on moto, moto_server and dynalite: round trips, growth on partition throttles only, races."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.exceptions import ClientError

from cdk_ts_runtime import ShardedTable, ShardGrowth, ShardStrategy, ThrottledError
from cdk_ts_runtime._sharding.throttles import ThrottleWindow
from tests.support.requests import RequestCounter
from tests.support.sharding import Clock, create_tables, metadata_item, shard_history, sharded, throttle_puts
from tests.support.threads import start_and_join


@pytest.mark.parametrize("strategy", ["random", "computed"])
def test_round_trip_over_several_shards(sharded_tables, strategy):
    table = sharded(sharded_tables, strategy=strategy, growth="double", cooldown_seconds=1)
    for i in range(10):
        table.put_item({"file_path": "/viral.mp4", "timestamp": 1000 + i, "n": i})
    table.clock.now += 1
    table.grow("/viral.mp4", table.shard_info("/viral.mp4", fresh=True))
    table.clock.now += 1
    table.grow("/viral.mp4", table.shard_info("/viral.mp4", fresh=True))
    for i in range(10, 30):
        table.put_item({"file_path": "/viral.mp4", "timestamp": 1000 + i, "n": i})

    items = table.query("/viral.mp4")
    assert [i["n"] for i in items] == list(range(30))
    assert {i["file_path"] for i in items} == {"/viral.mp4"}
    assert [i["n"] for i in table.query("/viral.mp4", between=(1005, 1007))] == [5, 6, 7]
    assert table.get_item("/viral.mp4", 1003)["n"] == 3
    assert table.get_item("/viral.mp4", 999) is None
    assert table.shard_count("/viral.mp4") == 4


def test_first_writer_creates_the_metadata_item(sharded_tables):
    table = sharded(sharded_tables)
    table.put_item({"file_path": "/a", "timestamp": 1})
    epoch = int(table.clock())
    item = metadata_item(sharded_tables, "/a")
    assert item == {
        "file_path": {"S": "/a"},
        "number_of_shards": {"N": "1"},
        "last_updated": {"N": str(epoch)},
        "last_updated_ms": {"N": str(int(table.clock() * 1000))},
        "version": {"N": "1"},
        "max_shards": {"N": "64"},  # the creating writer's cap: a count above it is corrupt
        "shard_history": {"SS": [f"{epoch}:1"]},
    }
    stored = sharded_tables[0].query(
        TableName=sharded_tables[1],
        KeyConditionExpression="file_path = :k",
        ExpressionAttributeValues={":k": {"S": "/a_1"}},
    )["Items"]
    assert len(stored) == 1


@pytest.mark.parametrize("on_demand", [True, False], ids=["on-demand", "provisioned"])
def test_a_partition_throttle_grows_the_key_after_the_cooldown(sharded_tables, on_demand):
    table = sharded(sharded_tables, growth="increment", cooldown_seconds=10)
    table.put_item({"file_path": "/hot", "timestamp": 1})
    created = int(table.clock())
    pending = throttle_puts(table.dynamodb, sharded_tables[1], times=1, on_demand=on_demand)
    table.put_item({"file_path": "/hot", "timestamp": 2})  # inside the cooldown: throttled, retried, not grown
    assert table.shard_count("/hot") == 1

    table.clock.now += 10
    pending["throttles"] = 1
    table.put_item({"file_path": "/hot", "timestamp": 3})
    grown = int(table.clock())
    item = metadata_item(sharded_tables, "/hot")
    assert item["number_of_shards"] == {"N": "2"}
    assert item["last_updated"] == {"N": str(grown)}
    assert sorted(item["shard_history"]["SS"]) == sorted([f"{created}:1", f"{grown}:2"])
    assert [i["timestamp"] for i in table.query("/hot")] == [1, 2, 3]


@pytest.mark.parametrize("on_demand", [True, False], ids=["on-demand", "provisioned"])
def test_a_key_never_grown_grows_once_its_share_is_measured_and_then_once_per_cooldown(sharded_tables, on_demand):
    # given a new key whose every write to the main table is throttled by key range (in the answer of the
    # table's billing mode), one attempt a write, one write every 0.1 s
    client, main, _metadata = sharded_tables
    table = sharded(sharded_tables, cooldown_seconds=10, max_attempts=1)
    table.put_item({"file_path": "/new", "timestamp": 0})
    created = table.clock.now
    throttle_puts(table.dynamodb, main, on_demand=on_demand)

    def refused_writes(count):
        for stamp in range(count):
            table.clock.now += 0.1
            with pytest.raises(ClientError):
                table.put_item({"file_path": "/new", "timestamp": stamp})

    # when 19 writes are refused over 1.9 s, the share is not measured yet (20 writes since the first
    # throttle, a second old): no growth inside the cooldown
    refused_writes(ThrottleWindow.MIN_SAMPLES - 1)
    assert table.shard_count("/new") == 1
    # then the 20th measures it (all not taken: the most one step grows, 16x), 2 s after the key was recorded
    refused_writes(1)
    assert table.shard_count("/new") == 16
    grown = table.clock.now
    # and the next growth waits one cooldown however many writes are refused meanwhile
    refused_writes(99)
    assert table.shard_count("/new") == 16
    table.clock.now = grown + 10
    refused_writes(1)
    item = metadata_item(sharded_tables, "/new")
    assert (item["number_of_shards"], item["version"]) == ({"N": "64"}, {"N": "3"})
    history = shard_history(item)
    assert [count for _epoch, count in history] == [1, 16, 64]
    assert history[1][0] - created < 3 and history[2][0] - history[1][0] >= 9  # whole seconds in the history


def test_one_throttle_after_many_accepted_writes_does_not_grow_the_key(sharded_tables):
    # given a key recorded a minute ago that took 100 writes, one every 0.1 s
    client, main, _metadata = sharded_tables
    table = sharded(sharded_tables, cooldown_seconds=10, max_attempts=3)
    for stamp in range(100):
        table.put_item({"file_path": "/calm", "timestamp": stamp})
        table.clock.now += 0.1
    before = metadata_item(sharded_tables, "/calm")
    # when one write is throttled once (then stored on a retry), and writing goes on
    throttle_puts(table.dynamodb, main, times=1)
    for stamp in range(100, 130):
        table.put_item({"file_path": "/calm", "timestamp": stamp})
        table.clock.now += 0.1
    # then the key keeps its one shard: one throttle in 130 writes is not a full partition
    assert metadata_item(sharded_tables, "/calm") == before
    assert len(table.query("/calm")) == 130


def test_a_key_grown_before_versions_waits_the_cooldown_before_growing_again(sharded_tables):
    # given a metadata item written by 0.1 (no version) for a key grown to 2 shards a minute ago
    client, main, metadata = sharded_tables
    table = sharded(sharded_tables, cooldown_seconds=10, max_attempts=1)
    recorded = int(table.clock.now) - 60
    client.put_item(TableName=metadata, Item={
        "file_path": {"S": "/old"}, "number_of_shards": {"N": "2"}, "last_updated": {"N": str(recorded)},
        "shard_history": {"SS": [f"{recorded - 60}:1", f"{recorded}:2"]},
    })
    throttle_puts(table.dynamodb, main)
    first_sight = table.clock.now
    # when every write is refused, one every 0.1 s for 15 s
    for stamp in range(150):
        table.clock.now += 0.1
        with pytest.raises(ClientError):
            table.put_item({"file_path": "/old", "timestamp": stamp})
    # then it grew once, not before one cooldown after this new writer first saw the key (the stamp a minute old
    # could be a clock running behind), and not again inside the cooldown after that (the item's first version
    # is no sign of a key never grown)
    item = metadata_item(sharded_tables, "/old")
    assert item["version"] == {"N": "1"} and int(item["number_of_shards"]["N"]) > 2
    history = shard_history(item)
    assert len(history) == 3
    assert history[-1][0] >= int(first_sight + 10)


@pytest.mark.parametrize(
    ("reasons", "on_demand"),
    [
        (("TableWriteProvisionedThroughputExceeded",), False),
        (("TableWriteAccountLimitExceeded",), True),
        (("TableWriteMaxOnDemandThroughputExceeded",), True),
        (("IndexWriteKeyRangeThroughputExceeded",), True),
        (("IndexWriteProvisionedThroughputExceeded",), False),
        # a key range AND the table's limit: more shards would only meet the table's limit
        (("TableWriteKeyRangeThroughputExceeded", "TableWriteMaxOnDemandThroughputExceeded"), True),
    ],
)
def test_table_index_and_account_throttles_back_off_without_sharding(sharded_tables, reasons, on_demand):
    calls = []
    table = sharded(sharded_tables, cooldown_seconds=1, on_table_throttle=calls.append)
    table.put_item({"file_path": "/busy", "timestamp": 1})
    client, main, _metadata = sharded_tables
    pending = throttle_puts(table.dynamodb, main, times=0, on_demand=on_demand, reasons=reasons)
    # 25 refusals over 5 s, each write stored at its sixth attempt: a partition's throttling this long would grow it
    for stamp in range(2, 7):
        table.clock.now += 1
        pending["throttles"] = 5
        table.put_item({"file_path": "/busy", "timestamp": stamp})
    assert table.shard_count("/busy") == 1
    assert calls == [main] * 25
    assert len(table.query("/busy")) == 6


def test_throttles_that_outlast_the_retries_are_raised(sharded_tables):
    table = sharded(sharded_tables, max_attempts=3)
    table.put_item({"file_path": "/x", "timestamp": 1})
    throttle_puts(table.dynamodb, sharded_tables[1], reasons=("TableWriteProvisionedThroughputExceeded",))
    with pytest.raises(ThrottledError, match="still throttled after 3 attempts") as raised:
        table.put_item({"file_path": "/x", "timestamp": 2})
    assert isinstance(raised.value, ClientError)  # callers that caught ClientError still do
    assert raised.value.throttle.scope == "table"
    assert raised.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"


def test_without_reasons_cloudwatch_decides(aws):
    client = boto3.client("dynamodb", region_name="us-east-1")
    main, metadata = create_tables(client, "cw")
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    now = datetime.now(UTC)
    for metric, value in (("ConsumedWriteCapacityUnits", 60 * 200), ("ProvisionedWriteCapacityUnits", 1000)):
        cloudwatch.put_metric_data(
            Namespace="AWS/DynamoDB",
            MetricData=[
                {
                    "MetricName": metric,
                    "Value": value,
                    "Timestamp": now - timedelta(minutes=1),
                    "Dimensions": [{"Name": "TableName", "Value": main}],
                }
            ],
        )
    table = sharded(
        (client, main, metadata), cloudwatch_client=cloudwatch, cooldown_seconds=1, clock=Clock(now.timestamp())
    )
    table.put_item({"file_path": "/f", "timestamp": 1})
    pending = throttle_puts(table.dynamodb, main, times=1, reasons=())  # an answer that names no reason
    table.clock.now += 1.1  # a new whole-second epoch, so the growth entry differs from the creation entry
    table.put_item({"file_path": "/f", "timestamp": 2})
    assert table.shard_count("/f") == 1  # one throttle is not yet a full partition
    pending["throttles"] = 1
    table.clock.now += 0.5  # throttled again, half a second later (the 1 s cooldown's window judges then)
    table.put_item({"file_path": "/f", "timestamp": 3})
    assert table.shard_count("/f") == 2  # 200 WCU/s used of 1,000 provisioned: the partition was the limit


# DynamoDB applies a conditional update atomically per item, and so does dynalite (a lock per key).
# moto_server does not: it serves requests on threads with no lock around the condition check and the
# write, and two of 16 racing updates have both passed there (a clean-clone CI run), so the race runs on dynalite.
@pytest.mark.parametrize("server_dynamodb", ["dynalite"], indirect=True)
def test_16_writers_at_the_cooldown_boundary_grow_once(server_dynamodb, unique_name):
    main, metadata = create_tables(server_dynamodb, unique_name)
    clock = Clock()
    writers = [
        ShardedTable(
            main,
            metadata,
            partition_key="file_path",
            sort_key="timestamp",
            dynamodb_client=server_dynamodb,
            growth="increment",
            cooldown_seconds=10,
            clock=clock,
            rng=random.Random(i),
            max_backoff_seconds=0.05,
        )
        for i in range(16)
    ]
    writers[0].put_item({"file_path": "/race", "timestamp": 0})
    seen = writers[0].shard_info("/race", fresh=True)
    clock.now += 10  # exactly at the boundary
    barrier = threading.Barrier(16)
    results = []

    def grow(writer):
        barrier.wait()
        results.append(writer.grow("/race", seen))

    start_and_join(threading.Thread(target=grow, args=(w,)) for w in writers)
    assert results.count(True) == 1
    item = server_dynamodb.get_item(TableName=metadata, Key={"file_path": {"S": "/race"}}, ConsistentRead=True)["Item"]
    assert item["number_of_shards"] == {"N": "2"}
    assert len(item["shard_history"]["SS"]) == 2


def test_items_written_concurrently_while_growing_are_all_read_back(server_dynamodb, unique_name):
    main, metadata = create_tables(server_dynamodb, unique_name)
    clock = Clock()
    table = ShardedTable(
        main,
        metadata,
        partition_key="file_path",
        sort_key="timestamp",
        dynamodb_client=server_dynamodb,
        cooldown_seconds=1,
        clock=clock,
        cache_ttl_seconds=0,
    )
    table.put_item({"file_path": "/n", "timestamp": -1})

    def write(worker):
        for i in range(25):
            table.put_item({"file_path": "/n", "timestamp": worker * 100 + i})
            if worker == 0 and i in (5, 15):
                clock.now += 1
                seen = table.shard_info("/n", fresh=True)
                table.grow("/n", seen, target=seen.number_of_shards * 2)  # every write was taken: size by hand

    start_and_join(threading.Thread(target=write, args=(w,)) for w in range(8))
    read = [i["timestamp"] for i in table.query("/n")]
    assert read == sorted([-1] + [w * 100 + i for w in range(8) for i in range(25)])
    assert table.shard_count("/n") == 4


def test_computed_point_reads_touch_the_shard_in_force_at_the_items_time(aws):
    client = boto3.client("dynamodb", region_name="us-east-1")
    main, metadata = create_tables(client, "pt")
    clock = Clock()
    table = sharded(
        (client, main, metadata),
        strategy="computed",
        cooldown_seconds=1,
        clock=clock,
        sort_key_time_unit="s",
        growth="double",
    )
    early = int(clock())
    table.put_item({"file_path": "/p", "timestamp": early})
    for _ in range(3):
        clock.now += 5
        table.grow("/p", table.shard_info("/p", fresh=True))
    counter = RequestCounter(client)
    assert table.get_item("/p", early)["timestamp"] == early
    (keys,) = [len(p["RequestItems"][main]["Keys"]) for op, p in counter.params if op == "BatchGetItem"]
    assert keys == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_shards": 0}, "max_shards 0 must be a whole number >= 1 and <= 1024"),
        ({"max_shards": 2000}, "max_shards 2000 must be a whole number >= 1 and <= 1024"),
        ({"max_attempts": 0}, "max_attempts 0 must be a whole number >= 1"),
        ({"cooldown_seconds": 0.5}, "cooldown_seconds 0.5 must be a finite number >= 1"),
        ({"strategy": "hash"}, "strategy 'hash' is not one of random, computed"),
        ({"growth": "triple"}, "growth 'triple' is not one of increment, double"),
    ],
)
def test_bad_settings_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ShardedTable("t", "m", partition_key="pk", sort_key="sk", **kwargs)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"file_path": "/a"}, "item has no 'timestamp'"),
        ({"timestamp": 1}, "item has no 'file_path'"),
        ({"file_path": "/log_2024", "timestamp": 1}, "ends like a shard suffix"),
        ({"file_path": 7, "timestamp": 1}, "must be a non-empty string"),
    ],
)
def test_bad_items_are_clear_errors(item, message):
    table = ShardedTable("t", "m", partition_key="file_path", sort_key="timestamp", dynamodb_client=object())
    with pytest.raises(ValueError, match=message):
        table.put_item(item)


def test_strategy_and_growth_take_the_enums_or_their_values():
    by_enum = ShardedTable("t", "m", partition_key="pk", sort_key="sk",
                           strategy=ShardStrategy.COMPUTED, growth=ShardGrowth.INCREMENT)
    by_value = ShardedTable("t", "m", partition_key="pk", sort_key="sk", strategy="computed", growth="increment")
    for table in (by_enum, by_value):
        assert table.strategy is ShardStrategy.COMPUTED
        assert table.growth is ShardGrowth.INCREMENT
    assert ShardedTable("t", "m", partition_key="pk", sort_key="sk").growth is ShardGrowth.DOUBLE

