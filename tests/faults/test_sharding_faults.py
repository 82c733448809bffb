"""Sharding: one growth per cooldown whatever the burst, validated metadata, no growth on index or unknown throttles."""

from __future__ import annotations

import random
import threading

import pytest
from botocore.exceptions import ClientError

from cdk_ts_runtime import CorruptShardMetadataError, ShardedTable, ThrottledError
from tests.support.sharding import Clock, create_tables, metadata_item, sharded, throttle_puts
from tests.support.threads import start_and_join
from tests.support.wire import CLOUDWATCH_ACCESS_DENIED, answer_error


def writers(client, main, metadata, clock, count=16, **options):
    return [
        ShardedTable(
            main, metadata, partition_key="file_path", sort_key="timestamp", dynamodb_client=client,
            clock=clock, rng=random.Random(i), max_backoff_seconds=0.02, sleep=lambda _s: None, **options,
        )
        for i in range(count)
    ]


def burst(group, key, seen_by_each):
    barrier = threading.Barrier(len(group))
    results = []

    def grow(writer, seen):
        barrier.wait()
        results.append(writer.grow(key, seen))

    start_and_join(threading.Thread(target=grow, args=pair) for pair in zip(group, seen_by_each, strict=True))
    return results


def test_two_bursts_of_16_writers_inside_one_second_grow_the_key_once(dynalite, unique_name):
    # The growth is a conditional update on the metadata item, which DynamoDB applies atomically per item
    # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalUpdate);
    # dynalite does too, moto_server does not (see test_sharding.py).
    from cdk_ts.testing import server_client_for

    client = server_client_for(dynalite)
    main, metadata = create_tables(client, unique_name)
    clock = Clock(start=1_767_225_600.2)  # metadata created 0.2 s into a second
    group = writers(client, main, metadata, clock, cooldown_seconds=1)
    group[0].put_item({"file_path": "/hot", "timestamp": 0})
    clock.now += 1.1  # past the cooldown, and the growth lands in the next whole second
    first_seen = group[0].shard_info("/hot", fresh=True)
    first = burst(group, "/hot", [first_seen] * 16)
    clock.now += 0.2  # a second burst 0.2 s later: same whole second as the growth, inside the cooldown
    second_seen = [w.shard_info("/hot", fresh=True) for w in group[:8]] + [first_seen] * 8
    second = burst(group, "/hot", second_seen)
    assert (first.count(True), second.count(True)) == (1, 0)
    item = metadata_item((client, main, metadata), "/hot")
    assert (item["number_of_shards"], item["version"]) == ({"N": "2"}, {"N": "2"})


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"number_of_shards": {"S": "many"}}, "number_of_shards 'many' is not a whole number"),
        ({"number_of_shards": {"N": "0"}}, r"number_of_shards 0 is outside 1\.\.1024"),
        # past the hard ceiling, and past the cap the growing writer recorded: no fleet could have grown it
        ({"number_of_shards": {"N": "100000"}}, r"number_of_shards 100000 is outside 1\.\.1024"),
        ({"number_of_shards": {"N": "40"}, "max_shards": {"N": "32"}}, r"number_of_shards 40 is outside 1\.\.32"),
        ({"number_of_shards": {"N": "2.5"}}, "number_of_shards 2.5 is not a whole number"),
        ({"shard_history": {"SS": ["1767225600:1", "yesterday:2"]}}, "shard_history entry 'yesterday:2'"),
        ({"shard_history": {"SS": ["1767225600:100000"]}}, "shard_history entry '1767225600:100000'"),
        ({"shard_history": {"S": "1767225600:1"}}, "shard_history '1767225600:1' is not a set"),
        ({"last_updated": {"S": "now"}}, "last_updated 'now' is not a whole number"),
    ],
)
def test_a_corrupt_metadata_item_is_an_error_naming_key_and_attribute(sharded_tables, attributes, message):
    client, main, metadata = sharded_tables
    item = {
        "file_path": {"S": "/bad"},
        "number_of_shards": {"N": "2"},
        "last_updated": {"N": "1767225600"},
        "shard_history": {"SS": ["1767225600:1"]},
        **attributes,
    }
    client.put_item(TableName=metadata, Item=item)
    table = sharded(sharded_tables)
    queries = []
    client.meta.events.register("provide-client-params.dynamodb.Query", lambda params, **_: queries.append(params))
    with pytest.raises(CorruptShardMetadataError, match=f"'/bad'.*{message}"):
        table.query("/bad")
    assert queries == []  # no fan-out on a value nobody can trust
    assert metadata_item(sharded_tables, "/bad") == item


def test_an_index_key_range_throttle_never_grows_the_base_tables_shards(sharded_tables):
    table = sharded(sharded_tables, cooldown_seconds=1, max_attempts=3)
    table.put_item({"file_path": "/gsi-hot", "timestamp": 0})
    table.clock.now += 5
    throttle_puts(table.dynamodb, table.table_name, on_demand=True, reasons=("IndexWriteKeyRangeThroughputExceeded",))
    with pytest.raises(ThrottledError, match="index: IndexWriteKeyRangeThroughputExceeded"):
        table.put_item({"file_path": "/gsi-hot", "timestamp": 1})
    assert metadata_item(sharded_tables, "/gsi-hot")["number_of_shards"] == {"N": "1"}


def test_a_cloudwatch_failure_while_classifying_is_no_growth_and_the_throttle_is_what_raises(sharded_tables):
    import boto3

    client, _main, _metadata = sharded_tables
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    denied = answer_error(cloudwatch, "GetMetricStatistics", CLOUDWATCH_ACCESS_DENIED)
    table = sharded(sharded_tables, cooldown_seconds=1, max_attempts=3, cloudwatch_client=cloudwatch)
    table.put_item({"file_path": "/quiet", "timestamp": 0})
    table.clock.now += 5
    throttle_puts(table.dynamodb, table.table_name, reasons=())
    with pytest.raises(ClientError) as raised:
        table.put_item({"file_path": "/quiet", "timestamp": 1})
    assert raised.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert denied == {"answered": 3}  # asked once per throttled attempt
    assert metadata_item(sharded_tables, "/quiet")["number_of_shards"] == {"N": "1"}


@pytest.mark.parametrize("cooldown", [0, 0.5, -1, True, float("nan"), float("inf")])
def test_a_cooldown_under_one_second_is_refused(cooldown):
    with pytest.raises(ValueError, match="cooldown_seconds .* must be a finite number >= 1"):
        ShardedTable("t", "m", partition_key="p", sort_key="s", cooldown_seconds=cooldown)
