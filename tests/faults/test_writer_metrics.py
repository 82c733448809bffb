"""The data-plane writers' metrics: growths, throttles by scope and refused writes, to a sink or as EMF lines.

Partition throttles come from the rules proxy (DynamoDB's per-partition limit, botocore's retries running);
table-level throttles are DynamoDB's wire answers parsed by botocore (``tests/support/wire.py``). Every EMF line
is checked against the specification as it is written (``tests/support/emf.py``).
"""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError

from cdk_ts_runtime import BatchWriteError, MetricPoint, ShardedTable, ThrottledError
from cdk_ts_runtime._retries import DATA_PATH, WRITE_PATH
from tests.support.emf import EmfLines
from tests.support.environment import REGION
from tests.support.router import hot_items
from tests.support.sharding import create_tables
from tests.support.throttling import ProxyClock, router_through, writer
from tests.support.wire import answer, on_demand_throttle


def test_a_sharded_writer_reports_partition_throttles_a_refused_write_and_a_growth_as_emf(limited):
    proxy, main, metadata = limited
    lines = EmfLines()
    clock = ProxyClock(proxy)
    table = writer(proxy, main, metadata, clock, max_attempts=3, metrics=lines.writer("MyApp/Writers"))
    for i in range(10):  # one second's worth of units for the key's only shard
        table.put_item({"file_path": "/hot", "timestamp": i})
    assert lines.lines == []  # nothing happened worth a metric

    with pytest.raises(ThrottledError):
        table.put_item({"file_path": "/hot", "timestamp": 10})

    assert lines.values("Throttles", TableName=main, ThrottleScope="partition") == [1, 1, 1]
    [refused] = [d for d in lines.documents() if "RefusedWrites" in d]
    assert (refused["RefusedWrites"], refused["key"], refused["TableName"]) == (1, "/hot", main)
    assert "TableWriteKeyRangeThroughputExceeded" in refused["reason"]

    clock.advance(table.cooldown_seconds)  # past the cooldown a key may grow
    assert table.grow("/hot", table.shard_info("/hot", fresh=True), target=4)
    [grown] = [d for d in lines.documents() if "ShardGrowths" in d]
    assert (grown["ShardGrowths"], grown["key"], grown["from"], grown["to"]) == (1, "/hot", 1, 4)
    assert all(d["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "MyApp/Writers" for d in lines.documents())
    assert table.shard_count("/hot") == 4


def test_a_table_level_throttle_is_reported_with_its_scope_and_a_failing_sink_never_fails_the_write(
    dynamodb, unique_name
):
    main, metadata = create_tables(dynamodb, unique_name)
    seen: list[MetricPoint] = []

    def sink(point: MetricPoint) -> None:
        seen.append(point)
        raise RuntimeError("the metrics pipeline is down")

    throttled = {"left": 1}

    def table_throttle(request):
        if request.get("TableName") == main and throttled["left"]:
            throttled["left"] -= 1
            return on_demand_throttle(main, "TableWriteMaxOnDemandThroughputExceeded")
        return None

    writes = boto3.client("dynamodb", region_name=REGION, config=WRITE_PATH)  # the throttle reaches the writer
    answer(writes, "PutItem", table_throttle)
    table = ShardedTable(
        main, metadata, partition_key="file_path", sort_key="timestamp", dynamodb_client=writes,
        dynamodb_read_client=dynamodb, sleep=lambda _s: None, metrics=sink,
    )

    assert table.put_item({"file_path": "/any", "timestamp": 1}) == "/any_1"  # the retry took it

    assert [(p.name, p.dimensions) for p in seen] == [("Throttles", {"TableName": main, "ThrottleScope": "table"})]
    assert [i["timestamp"] for i in table.query("/any")] == [1]


def test_a_router_reports_a_single_write_given_up_and_the_items_a_batch_could_not_write(router_proxy, unique_name):
    points: list[MetricPoint] = []
    router = router_through(router_proxy, unique_name, DATA_PATH, sleep=lambda _s: None, max_batch_attempts=2,
                            metrics=points.append)
    items = hot_items(12)  # one partition key taking 10 writes, and the clock never moves
    for item in items[:10]:
        router.put_item(item)
    assert points == []

    with pytest.raises(ClientError):
        router.put_item(items[10])
    table = router.table_for(items[10][router.layout.sort_key])
    assert [(p.name, p.dimensions.get("ThrottleScope")) for p in points] == [
        ("Throttles", "partition"), ("RefusedWrites", None),
    ]
    assert all(p.dimensions["TableName"] == table for p in points)


def test_a_router_batch_that_leaves_items_reports_how_many_as_refused_writes(router_proxy, unique_name):
    points: list[MetricPoint] = []
    router = router_through(router_proxy, unique_name, DATA_PATH, sleep=lambda _s: None, max_batch_attempts=2,
                            metrics=points.append)
    with pytest.raises(BatchWriteError) as raised:
        router.put_items(hot_items(30))  # 10 taken, the clock never moves: 20 left after 2 attempts

    refused = [p for p in points if p.name == "RefusedWrites"]
    assert sum(p.value for p in refused) == len(raised.value.items) == 20
    assert all("throttled" in " ".join(p.properties["reasons"]) for p in refused)
    assert {p.dimensions.get("ThrottleScope") for p in points if p.name == "Throttles"} <= {"partition"}
