"""The writers meet the throttles DynamoDB sends in each billing mode, through the rules proxy (botocore unmodified).

On-demand tables answer ``ThrottlingException`` with ``throttlingReasons``; provisioned ones
``ProvisionedThroughputExceededException`` with ``ThrottlingReasons`` (botocore's service model). A hot
partition grows the key in both; a table at its own limit (provisioned units, the on-demand maximum) and an
index's hot partition never do. Each test asserts the stored items and the shard metadata, not only the errors.
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from cdk_ts.testing import server_client_for, start_rules_proxy
from cdk_ts_runtime import DeviceLogRepository, ThrottledError, ThrottleScope
from cdk_ts_runtime._retries import DATA_PATH
from tests.support.device_log import create_device_log_table
from tests.support.sharding import create_tables, metadata_item
from tests.support.throttling import SHARDING_START, ProxyClock, writer

MODES = {
    "on-demand": ({}, "ThrottlingException", "throttlingReasons"),
    "provisioned": ({"main_capacity": 1000}, "ProvisionedThroughputExceededException", "ThrottlingReasons"),
}


@pytest.fixture
def proxy(dynalite):
    """A rules proxy on a frozen clock in front of dynalite: 10 write units a second per partition key value.

    A new provisioned table holds one second of its capacity, not the default five minutes of burst credit: these
    tests meet a table at its own rate, which a fresh table's burst would hide for their four seconds.
    """
    proxy = start_rules_proxy(dynalite, start_time=SHARDING_START, create_seconds=0, write_units_per_second=10,
                              partition_per_key_value=True, initial_burst_seconds=1)
    yield proxy
    proxy.stop()


def offer(table, clock, key, *, per_second, seconds):
    """Write ``key`` ``per_second`` times a second for ``seconds`` of proxy time; (stored stamps, refusals)."""
    stored, refused = [], []
    for stamp in range(int(per_second * seconds)):
        try:
            table.put_item({"file_path": key, "timestamp": stamp})
        except ClientError as error:
            refused.append(error)
        else:
            stored.append(stamp)
        clock.advance(1 / per_second)
    return stored, refused


@pytest.mark.parametrize("mode", MODES)
def test_a_hot_partition_grows_the_key_in_either_billing_mode(proxy, unique_name, mode):
    # given a key offered 3x its partition's 10 units a second, by one writer
    tables, code, member = MODES[mode]
    main, metadata = create_tables(proxy.client(), unique_name, **tables)
    clock = ProxyClock(proxy)
    table = writer(proxy, main, metadata, clock, max_attempts=2)
    table.put_item({"file_path": "/hot", "timestamp": -1})
    stored, refused = offer(table, clock, "/hot", per_second=30, seconds=4)
    # then it grew, every write the table took is there, and every refusal was the key range in the mode's shape
    assert table.shard_count("/hot") > 1
    assert int(metadata_item((proxy.client(), main, metadata), "/hot")["number_of_shards"]["N"]) > 1
    assert sorted(i["timestamp"] for i in table.query("/hot")) == [-1, *stored]
    assert len(stored) > 60  # more than one partition's 40 units over the 4 s
    for error in refused:
        assert isinstance(error, ThrottledError) and error.response["Error"]["Code"] == code
        assert error.response[member][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
    assert proxy.stats()["refusal_reasons"].get(f"PutItem:{code}:TableWriteKeyRangeThroughputExceeded", 0) > 0


TABLE_LIMITS = {
    # a provisioned table of 5 WCU: its own limit, whatever the key
    "provisioned units": ({"main_capacity": 5}, "ProvisionedThroughputExceededException", "ThrottlingReasons",
                          "TableWriteProvisionedThroughputExceeded"),
    # an on-demand table capped at 5 write request units a second (OnDemandThroughput)
    "on-demand maximum": ({"main_max_writes": 5}, "ThrottlingException", "throttlingReasons",
                          "TableWriteMaxOnDemandThroughputExceeded"),
}


@pytest.mark.parametrize("limit", TABLE_LIMITS)
def test_a_table_at_its_own_limit_never_grows_a_key(proxy, unique_name, limit):
    # given a table whose own limit (5 units a second) is below the key's partition's (10)
    tables, code, member, reason = TABLE_LIMITS[limit]
    main, metadata = create_tables(proxy.client(), unique_name, **tables)
    clock = ProxyClock(proxy)
    told = []
    table = writer(proxy, main, metadata, clock, max_attempts=2, on_table_throttle=told.append)
    table.put_item({"file_path": "/busy", "timestamp": -1})
    # when the key is offered 20 writes a second for 4 s, the table refusing most of them
    stored, refused = offer(table, clock, "/busy", per_second=20, seconds=4)
    # then the key kept its one shard: more shards would only meet the same table limit
    assert table.shard_count("/busy") == 1
    item = metadata_item((proxy.client(), main, metadata), "/busy")
    assert item["number_of_shards"] == {"N": "1"} and len(item["shard_history"]["SS"]) == 1
    assert refused and told and set(told) == {main}
    for error in refused:
        assert isinstance(error, ThrottledError) and error.throttle.scope is ThrottleScope.TABLE
        assert error.response["Error"]["Code"] == code and error.response[member][0]["reason"] == reason
    # and what the table took is stored, nothing else
    assert sorted(i["timestamp"] for i in table.query("/busy")) == [-1, *stored]


@pytest.mark.parametrize("capacity", [None, 100], ids=["on-demand", "provisioned"])
def test_a_hot_index_partition_is_named_and_the_refused_entry_is_not_stored(moto_server, unique_name, capacity):
    # given the device log behind the proxy, 2 write units a second per partition key value, on a frozen clock:
    # three devices, each its own base-table partition, share one operator, GSI1's partition key
    proxy = start_rules_proxy(moto_server, start_time=SHARDING_START, create_seconds=0, write_units_per_second=2,
                              partition_per_key_value=True)
    try:
        create_device_log_table(proxy.client(), unique_name, capacity=capacity)
        repo = DeviceLogRepository(unique_name, dynamodb_client=proxy.client(config=DATA_PATH))
        for device in ("d-1", "d-2"):
            repo.create_log_entry_for_specific_device(device, "WARNING", "2026-01-01T00:00:00", operator="op-1")
        # when a third device's entry for the same operator is written in the same second
        with pytest.raises(ThrottledError) as raised:
            repo.create_log_entry_for_specific_device("d-3", "WARNING", "2026-01-01T00:00:00", operator="op-1")
    finally:
        proxy.stop()
    # then the error names the index, after the SDK's three attempts, and no shard growth would cure it
    throttle = raised.value.throttle
    assert throttle.scope is ThrottleScope.INDEX and not throttle.sharding_helps
    assert [r.reason for r in throttle.reasons] == ["IndexWriteKeyRangeThroughputExceeded"]
    assert throttle.reasons[0].resource.endswith(f"table/{unique_name}/index/GSI1")
    assert raised.value.attempts == 3
    # and the refused entry is not stored while the other two are, in the table and in GSI1
    stored = DeviceLogRepository(unique_name, dynamodb_client=server_client_for(moto_server, "dynamodb"))
    by_operator = stored.get_logs_for_operator_between_two_dates("op-1", "2026-01-01", "2026-01-01")
    assert sorted(e["DeviceID"] for e in by_operator) == ["d-1", "d-2"]
    assert stored.get_logs_for_specific_device("d-3", "WARNING") == []
