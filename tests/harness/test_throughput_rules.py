"""The rules proxy's data plane throttles as DynamoDB does: the billing mode's shape, partitions, table, index.

Pure throughput logic first (no server), then each limit over HTTP through unmodified boto3 clients.
"""

from __future__ import annotations

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from cdk_ts.testing import LocalServer, RulesSettings, start_rules_proxy
from cdk_ts.testing._engines import free_port
from cdk_ts.testing._rules import TokenBuckets
from cdk_ts.testing._throughput import (
    ON_DEMAND_INDEX_MESSAGE,
    ON_DEMAND_TABLE_MESSAGE,
    PROVISIONED_INDEX_MESSAGE,
    PROVISIONED_TABLE_MESSAGE,
    Capacity,
    IndexShape,
    TableShape,
    Throughput,
    index_writes,
    partition_count,
    partition_of,
    updated_item,
    write_charge,
)
from tests.support.conformance import NO_RETRIES
from tests.support.rules_tables import create_active, item, stored_keys

pytestmark = pytest.mark.server

# (billing mode, exception code, reasons member, table message, index message): botocore's service model.
SHAPES = {
    "PAY_PER_REQUEST": ("ThrottlingException", "throttlingReasons", ON_DEMAND_TABLE_MESSAGE, ON_DEMAND_INDEX_MESSAGE),
    "PROVISIONED": ("ProvisionedThroughputExceededException", "ThrottlingReasons", PROVISIONED_TABLE_MESSAGE,
                    PROVISIONED_INDEX_MESSAGE),
}
OTHER_MEMBER = {"throttlingReasons": "ThrottlingReasons", "ThrottlingReasons": "throttlingReasons"}




def throttle_of(excinfo, billing: str, *, index: bool = False) -> list[dict]:
    """Assert the throttle has the billing mode's code, message and reasons member; return the reasons."""
    code, member, table_message, index_message = SHAPES[billing]
    response = excinfo.value.response
    assert response["Error"]["Code"] == code
    assert response["Error"]["Message"] == (index_message if index else table_message)
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert OTHER_MEMBER[member] not in response
    return response[member]


def table_arn(ddb, name):
    return ddb.describe_table(TableName=name)["Table"]["TableArn"]


def keys_on_partitions(count: int) -> tuple[str, str, str]:
    """Two key values that hash onto one partition of ``count`` and a third on another."""
    names = [f"key{i}" for i in range(100)]
    first = names[0]
    same = next(n for n in names[1:] if partition_of({"S": n}, count) == partition_of({"S": first}, count))
    other = next(n for n in names if partition_of({"S": n}, count) != partition_of({"S": first}, count))
    return first, same, other


# -- pure logic ---------------------------------------------------------------------------------------------------
def test_partition_count_is_derived_from_throughput_unless_set():
    settings = RulesSettings()
    assert partition_count(3000, 1000, settings) == 2
    assert partition_count(12_000, 4_000, settings) == 8  # a new on-demand table's warm throughput
    assert partition_count(5, 5, settings) == 1
    assert partition_count(12_000, 4_000, settings.updated(partition_count=3)) == 3


def test_partition_of_is_deterministic_and_spreads_keys():
    values = [partition_of({"S": f"device-{i}"}, 8) for i in range(400)]
    assert values == [partition_of({"S": f"device-{i}"}, 8) for i in range(400)]
    assert set(values) == set(range(8))
    assert min(values.count(p) for p in range(8)) > 20  # md5 spreads 400 keys over all 8 partitions
    assert partition_of({"S": "1"}, 8) != partition_of({"N": "1"}, 8) or partition_of({"S": "2"}, 8) != partition_of(
        {"N": "2"}, 8)  # the type is part of the key's identity


def test_write_charge_is_the_larger_of_old_and_new_per_started_kilobyte():
    small, big = item("k", size=10), item("k", size=3000)
    assert write_charge(None, small) == 1
    assert write_charge(big, small) == 3  # overwriting a 3 KB item with a small one costs the 3 KB
    assert write_charge(small, big) == 3
    assert write_charge(big, None) == 3  # a delete costs the deleted item's size


def test_index_writes_follow_sparse_keys_projection_and_key_changes():
    index = IndexShape(name="by_site", arn="arn:t/index/by_site", hash_key="site", range_key=None,
                       projection="KEYS_ONLY", table_keys=("pk", "sk"), non_key_attributes=(),
                       read_capacity=0, write_capacity=0)
    without = item("k", size=5000)
    with_site = item("k", size=5000, site="s1")
    assert index_writes(index, None, without) == []  # sparse: no index key, no index write
    assert index_writes(index, None, with_site) == [({"S": "s1"}, 1)]  # keys only: the 5 KB value is not projected
    moved = item("k", size=5000, site="s2")
    assert index_writes(index, with_site, moved) == [({"S": "s1"}, 1), ({"S": "s2"}, 1)]  # delete + put
    assert index_writes(index, with_site, None) == [({"S": "s1"}, 1)]
    everything = IndexShape(**{**index.__dict__, "projection": "ALL"})
    assert index_writes(everything, None, with_site) == [({"S": "s1"}, 5)]


def test_updated_item_applies_simple_assignments_and_removes():
    old = item("k", size=10, a="1")
    new = updated_item(old, {"UpdateExpression": "SET #n = :n, b = :b REMOVE v",
                             "ExpressionAttributeNames": {"#n": "name"},
                             "ExpressionAttributeValues": {":n": {"S": "x"}, ":b": {"N": "2"}}})
    assert new == {"pk": {"S": "k"}, "sk": {"S": "s"}, "a": {"S": "1"}, "name": {"S": "x"}, "b": {"N": "2"}}
    assert old["v"]  # the stored item is not changed


def test_burst_bucket_starts_with_one_second_and_keeps_at_most_its_size():
    buckets = TokenBuckets()
    assert buckets.level(("t",), 5, 0.0, 1500) == 5
    assert buckets.try_take(("t",), 5, 5, 0.0, 1500)
    assert not buckets.try_take(("t",), 1, 5, 0.0, 1500)
    assert buckets.level(("t",), 5, 100.0, 1500) == 500
    assert buckets.level(("t",), 5, 10_000.0, 1500) == 1500


def _on_demand_shape():
    return TableShape(name="t", arn="arn:table/t", hash_key="pk", range_key=None, indexes={},
                      billing_mode="PAY_PER_REQUEST", read_capacity=0, write_capacity=0, warm_read=12, warm_write=4)


def test_on_demand_table_serves_double_its_previous_peak_only_after_the_window():
    throughput = Throughput(RulesSettings(on_demand_peak_window_seconds=1800))
    shape = _on_demand_shape()
    capacity = Capacity("PAY_PER_REQUEST", 0, 0, warm_read=12, warm_write=4, max_read=None, max_write=None)

    def write(units: int, now: float) -> list[dict]:
        key = {"S": f"k{now}"}
        return throughput.try_write([(throughput.table_limits(shape, capacity, key, True, now), units)], now)

    assert write(4, 0.0) == []  # the warm throughput: 4 units a second
    assert write(1, 0.0) == [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": "arn:table/t"}]
    assert write(4, 1000.0) == []
    assert write(1, 1000.0) != []  # the peak (4) is not 30 minutes old yet: still 4 a second
    assert write(8, 1801.0) == []  # second 0's peak is settled: double it
    assert write(1, 1801.0) != []


# -- the throttle's shape, per billing mode -----------------------------------------------------------------------
@pytest.mark.parametrize("billing", ["PAY_PER_REQUEST", "PROVISIONED"])
def test_hot_partition_throttle_has_the_billing_modes_shape(proxy, ddb, unique_name, billing):
    proxy.configure(write_units_per_second=2, read_units_per_second=1)
    name = create_active(proxy, ddb, f"{unique_name}-shape", billing=billing, rcu=3000, wcu=1000)
    arn = table_arn(ddb, name)
    ddb.put_item(TableName=name, Item=item("hot", "1"))
    ddb.put_item(TableName=name, Item=item("hot", "2"))

    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("hot", "3"))
    assert throttle_of(excinfo, billing) == [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn}]

    ddb.get_item(TableName=name, Key=item("hot", "1"), ConsistentRead=True)  # 1 unit: the bucket is at 0
    ddb.get_item(TableName=name, Key=item("hot", "1"), ConsistentRead=True)  # at 0, not below: overdraws
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=name, Key=item("hot", "1"))
    assert throttle_of(excinfo, billing) == [{"reason": "TableReadKeyRangeThroughputExceeded", "resource": arn}]

    with pytest.raises(ClientError) as excinfo:  # a batch whose every item is throttled: the same exception
        ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": item("hot", "4")}}]})
    assert throttle_of(excinfo, billing)[0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
    with pytest.raises(ClientError) as excinfo:
        ddb.batch_get_item(RequestItems={name: {"Keys": [item("hot", "1")]}})
    assert throttle_of(excinfo, billing)[0]["reason"] == "TableReadKeyRangeThroughputExceeded"

    assert stored_keys(ddb, name) == [("hot", "1"), ("hot", "2")]  # the throttled writes stored nothing
    stats = proxy.stats()
    code = SHAPES[billing][0]
    assert stats["refusal_reasons"][f"PutItem:{code}:TableWriteKeyRangeThroughputExceeded"] == 1
    assert stats["table_refusals"][f"{name}:PutItem:{code}"] == 1


def test_a_table_switched_to_on_demand_answers_in_the_on_demand_shape(rules_proxy, unique_name):
    ddb = rules_proxy.client(config=NO_RETRIES)
    # one bucket per key value, so the switch (which changes the partition count) keeps the hot key's bucket
    rules_proxy.configure(write_units_per_second=1, partition_per_key_value=True)
    name = create_active(rules_proxy, ddb, f"{unique_name}-switch", billing="PROVISIONED", rcu=5, wcu=5)
    ddb.put_item(TableName=name, Item=item("hot", "1"))
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("hot", "2"))
    throttle_of(excinfo, "PROVISIONED")

    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")  # the control plane's state says on-demand
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("hot", "2"))
    assert throttle_of(excinfo, "PAY_PER_REQUEST")[0]["reason"] == "TableWriteKeyRangeThroughputExceeded"


def test_partial_batches_keep_unprocessed_items_and_store_only_the_rest(proxy, ddb, unique_name):
    proxy.configure(write_units_per_second=1, partition_per_key_value=True)
    name = create_active(proxy, ddb, f"{unique_name}-pbatch", billing="PROVISIONED", rcu=50, wcu=50)
    writes = [{"PutRequest": {"Item": item(pk, "0")}} for pk in ("a", "a", "b")]
    writes[1]["PutRequest"]["Item"]["sk"] = {"S": "1"}

    response = ddb.batch_write_item(RequestItems={name: writes})

    assert response["UnprocessedItems"] == {name: [writes[1]]}
    assert stored_keys(ddb, name) == [("a", "0"), ("b", "0")]
    assert proxy.stats()["refusal_reasons"] == {
        "BatchWriteItem:UnprocessedItems:TableWriteKeyRangeThroughputExceeded": 1}


# -- physical partitions ----------------------------------------------------------------------------------------
def test_two_hot_keys_on_one_partition_share_its_budget(proxy, ddb, unique_name):
    proxy.configure(write_units_per_second=2, partition_count=4)
    first, same, other = keys_on_partitions(4)
    name = create_active(proxy, ddb, f"{unique_name}-shared")
    ddb.put_item(TableName=name, Item=item(first, "1"))
    ddb.put_item(TableName=name, Item=item(same, "1"))  # the partition's 2 units are spent by two keys

    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item(first, "2"))
    assert throttle_of(excinfo, "PAY_PER_REQUEST")[0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
    ddb.put_item(TableName=name, Item=item(other, "1"))  # another partition: its own budget

    proxy.configure(partition_per_key_value=True)  # hot keys isolated (adaptive capacity): each its own budget
    ddb.put_item(TableName=name, Item=item(f"{same}-alone", "1"))
    ddb.put_item(TableName=name, Item=item(f"{same}-alone", "2"))
    assert stored_keys(ddb, name) == sorted([(first, "1"), (same, "1"), (other, "1"), (f"{same}-alone", "1"),
                                             (f"{same}-alone", "2")])


# -- table-level limits -------------------------------------------------------------------------------------------
def test_provisioned_table_capacity_with_burst_of_300_seconds(proxy, ddb, unique_name):
    proxy.configure(initial_burst_seconds=1)  # a new table holds one second of its capacity (300 by default)
    name = create_active(proxy, ddb, f"{unique_name}-burst", billing="PROVISIONED", rcu=1, wcu=1)
    arn = table_arn(ddb, name)
    ddb.put_item(TableName=name, Item=item("a", "0", size=500))  # the first second's one unit
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("b", "0", size=500))  # another key, same table: the table's limit
    assert throttle_of(excinfo, "PROVISIONED") == [
        {"reason": "TableWriteProvisionedThroughputExceeded", "resource": arn}]

    proxy.advance(100)  # 100 unused seconds are kept: 50 KB items cost 50 units each
    for pk in ("c", "d"):
        ddb.put_item(TableName=name, Item=item(pk, "0", size=50 * 1024 - 100))
    with pytest.raises(ClientError):
        ddb.put_item(TableName=name, Item=item("e", "0", size=500))

    proxy.advance(1000)  # at most 300 seconds of unused capacity are kept
    for pk in "fghijk":
        ddb.put_item(TableName=name, Item=item(pk, "0", size=50 * 1024 - 100))
    with pytest.raises(ClientError):
        ddb.put_item(TableName=name, Item=item("l", "0", size=500))
    assert [k for k, _ in stored_keys(ddb, name)] == ["a", "c", "d", "f", "g", "h", "i", "j", "k"]

    ddb.get_item(TableName=name, Key=item("a", "0"), ConsistentRead=True)
    ddb.get_item(TableName=name, Key=item("c", "0"), ConsistentRead=True)  # at 0: allowed, overdraws 13 units
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=name, Key=item("d", "0"))
    assert throttle_of(excinfo, "PROVISIONED") == [
        {"reason": "TableReadProvisionedThroughputExceeded", "resource": arn}]


def test_on_demand_table_starts_at_its_initial_throughput_and_doubles_its_peak_after_30_minutes(
        proxy, ddb, unique_name):
    proxy.configure(on_demand_write_units=4)  # 4,000 scaled down
    name = create_active(proxy, ddb, f"{unique_name}-peak")
    arn = table_arn(ddb, name)
    for pk in "abcd":
        ddb.put_item(TableName=name, Item=item(pk))
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("e"))
    assert throttle_of(excinfo, "PAY_PER_REQUEST") == [
        {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn}]

    proxy.advance(1800)  # the peak of 4 is now "previous": double it
    for pk in "efghijkl":
        ddb.put_item(TableName=name, Item=item(pk))
    with pytest.raises(ClientError):
        ddb.put_item(TableName=name, Item=item("m"))
    assert len(stored_keys(ddb, name)) == 12


def test_on_demand_maximum_throughput_caps_the_table(proxy, ddb, unique_name):
    name = create_active(proxy, ddb, f"{unique_name}-max",
                         OnDemandThroughput={"MaxReadRequestUnits": 1, "MaxWriteRequestUnits": 2})
    arn = table_arn(ddb, name)
    ddb.put_item(TableName=name, Item=item("a"))
    ddb.put_item(TableName=name, Item=item("b"))
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("c"))
    assert throttle_of(excinfo, "PAY_PER_REQUEST") == [
        {"reason": "TableWriteMaxOnDemandThroughputExceeded", "resource": arn}]
    ddb.get_item(TableName=name, Key=item("a"), ConsistentRead=True)
    ddb.get_item(TableName=name, Key=item("b"), ConsistentRead=True)
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=name, Key=item("a"))
    assert throttle_of(excinfo, "PAY_PER_REQUEST") == [
        {"reason": "TableReadMaxOnDemandThroughputExceeded", "resource": arn}]
    assert stored_keys(ddb, name) == [("a", "s"), ("b", "s")]


def test_per_table_account_quota_throttles_an_on_demand_table(proxy, ddb, unique_name):
    proxy.configure(table_write_units_quota=3, table_read_units_quota=1)  # 40,000 scaled down
    name = create_active(proxy, ddb, f"{unique_name}-quota")
    arn = table_arn(ddb, name)
    ddb.put_item(TableName=name, Item=item("a", size=2500))  # 3 units
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("b"))
    assert throttle_of(excinfo, "PAY_PER_REQUEST") == [
        {"reason": "TableWriteAccountLimitExceeded", "resource": arn}]
    assert stored_keys(ddb, name) == [("a", "s")]

    ddb.get_item(TableName=name, Key=item("a"), ConsistentRead=True)  # 1 unit: the quota's second is spent
    ddb.get_item(TableName=name, Key=item("b"), ConsistentRead=True)  # at 0, not below: overdraws
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "a"}})
    assert throttle_of(excinfo, "PAY_PER_REQUEST") == [
        {"reason": "TableReadAccountLimitExceeded", "resource": arn}]
    assert proxy.stats()["table_refusals"] == {f"{name}:PutItem:ThrottlingException": 1,
                                               f"{name}:Query:ThrottlingException": 1}


# -- global secondary indexes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("billing", ["PAY_PER_REQUEST", "PROVISIONED"])
def test_a_hot_index_partition_pushes_back_on_table_writes(proxy, ddb, unique_name, billing):
    proxy.configure(write_units_per_second=2, read_units_per_second=1, partition_per_key_value=True)
    name = create_active(proxy, ddb, f"{unique_name}-gsi", billing=billing,
                         indexes=[{"name": "by_site", "key": "site"}])
    index_arn = f"{table_arn(ddb, name)}/index/by_site"  # API_GlobalSecondaryIndexDescription's IndexArn
    reported = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert reported.get("IndexArn", index_arn) == index_arn  # dynalite reports it; moto does not
    ddb.put_item(TableName=name, Item=item("a", site="s1"))
    ddb.put_item(TableName=name, Item=item("b", site="s1"))  # two base partitions, one index partition

    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("c", site="s1"))
    assert throttle_of(excinfo, billing, index=True) == [
        {"reason": "IndexWriteKeyRangeThroughputExceeded", "resource": index_arn}]
    ddb.put_item(TableName=name, Item=item("c", site="s2"))  # another index partition
    ddb.put_item(TableName=name, Item=item("d"))  # no site: not in the (sparse) index
    assert stored_keys(ddb, name) == [("a", "s"), ("b", "s"), ("c", "s"), ("d", "s")]

    query = {"TableName": name, "IndexName": "by_site", "KeyConditionExpression": "site = :s",
             "ExpressionAttributeValues": {":s": {"S": "s1"}}}
    ddb.query(**query)  # two small items, eventually consistent: half a unit
    ddb.query(**query)
    ddb.query(**query)  # at 0: allowed, overdraws
    with pytest.raises(ClientError) as excinfo:
        ddb.query(**query)
    assert throttle_of(excinfo, billing, index=True) == [
        {"reason": "IndexReadKeyRangeThroughputExceeded", "resource": index_arn}]
    ddb.get_item(TableName=name, Key=item("a"))  # the table's partitions are not the index's


def test_provisioned_index_capacity_pushes_back(proxy, ddb, unique_name):
    proxy.configure(initial_burst_seconds=1)  # a new index holds one second of its capacity (300 by default)
    name = create_active(proxy, ddb, f"{unique_name}-gsiprov", billing="PROVISIONED", rcu=50, wcu=50,
                         indexes=[{"name": "by_site", "key": "site", "wcu": 1, "rcu": 1}])
    index_arn = f"{table_arn(ddb, name)}/index/by_site"
    ddb.put_item(TableName=name, Item=item("a", site="s1"))
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=name, Item=item("b", site="s2"))
    assert throttle_of(excinfo, "PROVISIONED", index=True) == [
        {"reason": "IndexWriteProvisionedThroughputExceeded", "resource": index_arn}]
    ddb.put_item(TableName=name, Item=item("b"))  # not in the index: only the table's capacity
    assert stored_keys(ddb, name) == [("a", "s"), ("b", "s")]


# -- capacity as DynamoDB charges it --------------------------------------------------------------------------------
def test_writes_are_charged_for_the_larger_of_the_old_and_new_item(proxy, ddb, unique_name):
    proxy.configure(write_units_per_second=5, partition_count=1)  # both keys on one partition
    name = create_active(proxy, ddb, f"{unique_name}-larger")
    ddb.put_item(TableName=name, Item=item("k", size=3500))  # 4 units
    proxy.advance(1)
    proxy.reset_stats()

    ddb.put_item(TableName=name, Item=item("k", size=10))  # replaces 3.5 KB: 4 units, not 1
    ddb.put_item(TableName=name, Item=item("k", size=10))  # 1 unit: the bucket is empty
    with pytest.raises(ClientError):
        ddb.put_item(TableName=name, Item=item("k", size=20))
    stored = ddb.get_item(TableName=name, Key=item("k"), ConsistentRead=True)["Item"]
    assert stored["v"] == {"S": "x" * 10}

    stats = proxy.stats()
    assert stats["requests"] == {"PutItem": 3, "GetItem": 1}  # the proxy's own reads of the old item do not count

    proxy.advance(1)
    ddb.put_item(TableName=name, Item=item("u", size=3500))  # 4 of 5
    proxy.advance(1)
    ddb.update_item(TableName=name, Key=item("u"), UpdateExpression="REMOVE v")  # before: 3.5 KB, 4 units
    ddb.delete_item(TableName=name, Key=item("k"))  # 1 unit
    with pytest.raises(ClientError):
        ddb.delete_item(TableName=name, Key=item("u"))
    assert stored_keys(ddb, name) == [("u", "s")]


# -- a fault of the proxy itself -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["standard", "legacy"])
def test_a_proxy_fault_answers_once_in_a_shape_botocore_does_not_retry(mode):
    nothing = LocalServer("nothing-listens", f"http://127.0.0.1:{free_port()}", None)
    proxy = start_rules_proxy(nothing)
    try:
        ddb = proxy.client(config=Config(retries={"mode": mode, "total_max_attempts": 5}))
        with pytest.raises(ClientError) as excinfo:
            ddb.put_item(TableName="any-table", Item=item("k"))
        response = excinfo.value.response
        assert response["Error"]["Code"] == "HarnessFaultException"
        assert response["Error"]["Message"].startswith("The DynamoDB rules proxy (test harness) failed; this is not "
                                                       "an answer of DynamoDB: ConnectionRefusedError")
        assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert response["ResponseMetadata"]["RetryAttempts"] == 0
        stats = proxy.stats()
        assert stats["requests"] == {"PutItem": 1}
        assert stats["refusals"] == {"PutItem:HarnessFaultException": 1}
    finally:
        proxy.stop()
