"""The rules proxy refuses what DynamoDB refuses and accepts the rest, through unmodified boto3 clients.

Pure rule logic first (no server), then each rule over HTTP on moto_server and dynalite.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import zlib
from datetime import UTC, datetime, timedelta

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from cdk_ts.testing import RulesSettings, start_rules_proxy
from cdk_ts.testing._control_plane import ControlPlane
from cdk_ts.testing._rules import (
    RuleError,
    TokenBuckets,
    item_size,
    query_partition_value,
    read_units,
    write_units,
)
from cdk_ts.testing._throughput import ON_DEMAND_TABLE_MESSAGE
from tests.support.conformance import NO_RETRIES
from tests.support.environment import RULES_START_TIME

pytestmark = pytest.mark.server

CLASS_ALONE = (
    "One or more parameter values were invalid: TableClass modification must be the only operation in the request"
)




def create(ddb, name, *, billing="PROVISIONED", rcu=100, wcu=100, **extra):
    params = {
        "TableName": name,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "S"}],
        "BillingMode": billing,
        **extra,
    }
    if billing == "PROVISIONED":
        params["ProvisionedThroughput"] = {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu}
    return ddb.create_table(**params)


def active_table(proxy, ddb, name, **kwargs):
    """A table past its CREATING window."""
    create(ddb, name, **kwargs)
    proxy.advance(proxy.settings.create_seconds)
    return name


def throughput(rcu, wcu):
    return {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu}


def error_of(excinfo) -> tuple[str, str]:
    error = excinfo.value.response["Error"]
    return error["Code"], error["Message"]


# -- pure rules ------------------------------------------------------------------------------------------------
def test_item_size_follows_the_developer_guide_formulas():
    # names and strings: UTF-8 bytes; numbers: 1 byte per 2 significant digits + 1; binary: raw bytes;
    # bool/null: 1; map/list: 3 + 1 per element.
    assert item_size({"pk": {"S": "abc"}}) == 2 + 3
    assert item_size({"n": {"N": "12345"}}) == 1 + 3 + 1
    assert item_size({"n": {"N": "-0.00120"}}) == 1 + 1 + 1  # leading and trailing zeros trimmed
    assert item_size({"b": {"B": "AAEC"}}) == 1 + 3
    assert item_size({"f": {"BOOL": True}, "z": {"NULL": True}}) == 2 + 2
    assert item_size({"m": {"M": {"a": {"S": "x"}}}}) == 1 + 3 + 1 + 1 + 1
    assert item_size({"l": {"L": [{"S": "x"}, {"S": "yy"}]}}) == 1 + 3 + (1 + 1) + (1 + 2)


def test_capacity_units_round_up_per_kilobyte_and_four_kilobytes():
    assert [write_units(s) for s in (0, 1, 1024, 1025, 3000)] == [1, 1, 1, 2, 3]
    assert read_units(4096, consistent=True) == 1
    assert read_units(4097, consistent=True) == 2
    assert read_units(4097, consistent=False) == 1
    assert read_units(10, consistent=False) == 0.5


def test_query_partition_value_reads_key_condition_with_names_and_values():
    request = {
        "KeyConditionExpression": "#s BETWEEN :a AND :b AND #p = :pk",
        "ExpressionAttributeNames": {"#p": "pk", "#s": "sk"},
        "ExpressionAttributeValues": {":pk": {"S": "dev1"}, ":a": {"S": "1"}, ":b": {"S": "2"}},
    }
    assert query_partition_value(request, "pk") == {"S": "dev1"}
    assert query_partition_value({"KeyConditionExpression": ":v = pk", "ExpressionAttributeValues": {":v": {"N": "1"}}},
                                 "pk") == {"N": "1"}
    assert query_partition_value({"KeyConditions": {"pk": {"AttributeValueList": [{"S": "x"}]}}}, "pk") == {"S": "x"}


def test_token_bucket_holds_one_second_and_refills_with_time():
    buckets = TokenBuckets()
    assert all(buckets.try_take(("w", "t", "k"), 1, 10, now=0.0) for _ in range(10))
    assert not buckets.try_take(("w", "t", "k"), 1, 10, now=0.0)
    assert buckets.try_take(("w", "t", "other"), 1, 10, now=0.0)  # another partition has its own bucket
    assert buckets.try_take(("w", "t", "k"), 5, 10, now=0.5)
    buckets.take(("r", "t", "k"), 15, 10, now=0.0)  # a read overdraws
    assert buckets.level(("r", "t", "k"), 10, now=0.4) < 0
    assert buckets.level(("r", "t", "k"), 10, now=0.6) > 0
    assert buckets.level(("r", "t", "k"), 10, now=100.0) == 10  # never more than one second's worth


def test_decrease_budget_in_pure_logic():
    control = ControlPlane(RulesSettings(update_seconds=0))
    now = RULES_START_TIME
    control.record_create({"TableName": "t", "ProvisionedThroughput": throughput(100, 100)}, now)
    for units in (99, 98, 97, 96):
        now += timedelta(minutes=1)
        request = {"TableName": "t", "ProvisionedThroughput": throughput(units, 100)}
        control.record_update("t", control.check_update(request, {}, now), now)
    with pytest.raises(RuleError, match="Number of decreases today: 4"):
        control.check_update({"TableName": "t", "ProvisionedThroughput": throughput(95, 100)}, {}, now)


def test_settings_refuse_unknown_names():
    with pytest.raises(ValueError, match="unknown RulesSettings"):
        RulesSettings().updated(update_secs=1)


# -- UpdateTable -----------------------------------------------------------------------------------------------
def test_table_class_change_must_be_the_only_change(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-class")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST", TableClass="STANDARD_INFREQUENT_ACCESS")
    assert error_of(excinfo) == ("ValidationException", CLASS_ALONE)
    assert proxy.table_state(name)["billing_mode"] == "PROVISIONED"  # nothing of the refused call applied

    response = ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")  # alone: accepted

    assert response["TableDescription"]["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    summary = ddb.describe_table(TableName=name)["Table"]["TableClassSummary"]
    changed_at = RULES_START_TIME + timedelta(seconds=20)
    assert summary == {"TableClass": "STANDARD_INFREQUENT_ACCESS", "LastUpdateDateTime": changed_at}


def test_equal_throughput_is_refused_and_other_unchanged_values_are_accepted(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-noop", rcu=5, wcu=5)
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(5, 5))
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert message.startswith("The provisioned throughput for the table will not change. The requested value equals "
                              "the current value. Current ReadCapacityUnits provisioned for the table: 5.")
    assert proxy.table_state(name)["updates"] == 0

    # the same class and the same protection as now: accepted (no source says DynamoDB refuses them), nothing counted
    for same in ({"TableClass": "STANDARD"}, {"DeletionProtectionEnabled": False}):
        assert ddb.update_table(TableName=name, **same)["TableDescription"]["TableStatus"] == "UPDATING"
        proxy.advance(proxy.settings.update_seconds)
    state = proxy.table_state(name)
    assert (state["table_class"], state["class_updates_30d"], state["deletion_protection"]) == ("STANDARD", 0, False)

    ddb.update_table(TableName=name, ProvisionedThroughput=throughput(6, 5))

    # while UPDATING the table "still has the provisioned throughput from before the call" (UpdateTable, 2011-12-05)
    assert ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    proxy.advance(proxy.settings.update_seconds)
    assert ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 6


def test_on_demand_on_a_table_already_on_demand_is_accepted_and_counts_no_switch(proxy, ddb, unique_name):
    """BillingMode PAY_PER_REQUEST on an on-demand table is accepted: no public source says DynamoDB refuses it."""
    name = active_table(proxy, ddb, f"{unique_name}-ondemand", billing="PAY_PER_REQUEST")

    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")

    proxy.advance(proxy.settings.update_seconds)
    table = ddb.describe_table(TableName=name)["Table"]
    assert (table["TableStatus"], table["BillingModeSummary"]["BillingMode"]) == ("ACTIVE", "PAY_PER_REQUEST")
    # set when the table was created on-demand (API_BillingModeSummary), not moved by the accepted update
    assert table["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"] == RULES_START_TIME
    assert proxy.table_state(name)["on_demand_switches_24h"] == 0


def test_billing_mode_and_throughput_must_agree(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-agree", billing="PAY_PER_REQUEST")
    with pytest.raises(ClientError, match="Neither ReadCapacityUnits nor WriteCapacityUnits can be specified"):
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(5, 5))
    with pytest.raises(ClientError, match="ProvisionedThroughput must be specified when BillingMode is PROVISIONED"):
        ddb.update_table(TableName=name, BillingMode="PROVISIONED")

    ddb.update_table(TableName=name, BillingMode="PROVISIONED", ProvisionedThroughput=throughput(5, 5))

    table = ddb.describe_table(TableName=name)["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 5


def test_each_accepted_update_leaves_the_table_updating_for_update_seconds(proxy, ddb, unique_name):
    proxy.configure(update_seconds=90)
    name = active_table(proxy, ddb, f"{unique_name}-updating")

    response = ddb.update_table(TableName=name, DeletionProtectionEnabled=True)  # protection only: still UPDATING

    assert response["TableDescription"]["TableStatus"] == "UPDATING"
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "UPDATING"
    for call in (lambda: ddb.update_table(TableName=name, ProvisionedThroughput=throughput(200, 100)),
                 lambda: ddb.delete_table(TableName=name)):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == (
            "ResourceInUseException",
            f"Attempt to change a resource which is still in use: Table is being updated: {name}",
        )
    proxy.advance(89)
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "UPDATING"
    proxy.advance(1)
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert table["DeletionProtectionEnabled"] is True
    ddb.update_table(TableName=name, ProvisionedThroughput=throughput(200, 100))  # accepted once ACTIVE
    assert proxy.table_state(name)["updates"] == 2


def _all_table_names(ddb) -> list[str]:
    """Every table the server lists, over all pages (a shared server holds other tests' tables too)."""
    return [name for page in ddb.get_paginator("list_tables").paginate() for name in page["TableNames"]]


def test_create_and_delete_have_their_windows_and_the_engine_deletes_after(proxy, ddb, unique_name):
    proxy.configure(create_seconds=30, delete_seconds=40)
    name = f"{unique_name}-lifecycle"

    assert create(ddb, name)["TableDescription"]["TableStatus"] == "CREATING"
    with pytest.raises(ClientError, match="Table is being created"):
        ddb.delete_table(TableName=name)
    proxy.advance(30)
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"

    assert ddb.delete_table(TableName=name)["TableDescription"]["TableStatus"] == "DELETING"
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "DELETING"
    assert name in _all_table_names(ddb)  # still listed while DELETING
    with pytest.raises(ClientError, match="Table is being deleted"):
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(1, 1))
    proxy.advance(40)
    assert name not in _all_table_names(ddb)
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_deletion_protection_refuses_delete(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-protected", DeletionProtectionEnabled=True)
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_table(TableName=name)
    assert error_of(excinfo)[0] == "ValidationException"
    ddb.update_table(TableName=name, DeletionProtectionEnabled=False)
    proxy.advance(proxy.settings.update_seconds)
    assert ddb.delete_table(TableName=name)["TableDescription"]["TableStatus"] == "DELETING"


def test_capacity_decreases_follow_the_daily_budget(proxy, ddb, unique_name):
    proxy.configure(update_seconds=1)
    name = active_table(proxy, ddb, f"{unique_name}-decreases", rcu=1000, wcu=1000)
    rcu = 1000

    def decrease():
        nonlocal rcu
        rcu -= 1
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(rcu, 1000))
        proxy.advance(1)

    for _ in range(4):  # four at any time
        decrease()
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(rcu - 1, 1000))
    code, message = error_of(excinfo)
    assert code == "LimitExceededException"
    assert message.startswith("Subscriber limit exceeded: Provisioned throughput decreases are limited within a "
                              "given UTC day. After the first 4 decreases, each subsequent decrease in the same UTC "
                              "day can be performed at most once every 3600 seconds. Number of decreases today: 4.")
    ddb.update_table(TableName=name, ProvisionedThroughput=throughput(rcu, 1001))  # an increase is not limited
    proxy.advance(1)

    last = proxy.now()
    proxy.set_time(last + timedelta(minutes=59))
    with pytest.raises(ClientError, match="Number of decreases today: 4"):
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(rcu - 1, 1001))
    fourth = proxy.table_state(name)["last_decrease"]
    proxy.set_time(fourth + timedelta(hours=1))  # an hour after the 4th decrease
    rcu -= 1
    ddb.update_table(TableName=name, ProvisionedThroughput=throughput(rcu, 1001))

    # a change counts and is dated when its UPDATING window ends (dynalite's updateTable test, recorded against
    # DynamoDB: the old count while UPDATING, a later LastIncreaseDateTime once ACTIVE); the limit counts the call
    table = ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    assert (table["NumberOfDecreasesToday"], table["LastDecreaseDateTime"]) == (4, proxy.now())
    called = proxy.now()
    proxy.advance(proxy.settings.update_seconds)
    table = ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    assert table["NumberOfDecreasesToday"] == 5
    assert table["LastDecreaseDateTime"] == called + timedelta(seconds=proxy.settings.update_seconds)
    assert table["LastIncreaseDateTime"] == last  # the increase's window ended one second after its call

    for hour in range(2, 24):  # then one an hour: 27 in the day
        proxy.set_time(fourth + timedelta(hours=hour))
        rcu -= 1
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(rcu, 1001))
    assert proxy.table_state(name)["decreases_today"] == 27
    proxy.set_time(RULES_START_TIME + timedelta(hours=23, minutes=59))
    with pytest.raises(ClientError, match="Number of decreases today: 27"):
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(rcu - 1, 1001))

    proxy.set_time(RULES_START_TIME + timedelta(days=1))  # a new UTC day: four again at any time
    for _ in range(4):
        decrease()
    assert ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 4


def test_switches_to_on_demand_are_four_per_rolling_24_hours(proxy, ddb, unique_name):
    proxy.configure(update_seconds=1)
    name = active_table(proxy, ddb, f"{unique_name}-switches", rcu=5, wcu=5)
    switched_at = []
    for _ in range(4):
        switched_at.append(proxy.now())
        ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
        proxy.advance(1)
        ddb.update_table(TableName=name, BillingMode="PROVISIONED", ProvisionedThroughput=throughput(5, 5))
        proxy.advance(3600)  # back to provisioned: allowed at any time

    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
    assert error_of(excinfo)[0] == "LimitExceededException"
    assert "24-hour rolling window" in error_of(excinfo)[1]

    proxy.set_time(switched_at[0] + timedelta(hours=24, seconds=1))  # the first switch left the window
    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["BillingModeSummary"] == {
        "BillingMode": "PAY_PER_REQUEST", "LastUpdateToPayPerRequestDateTime": proxy.now()
    }
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 0


def test_table_class_changes_are_two_per_trailing_30_days(proxy, ddb, unique_name):
    proxy.configure(update_seconds=1)
    name = active_table(proxy, ddb, f"{unique_name}-classes")
    first = proxy.now()
    ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")
    proxy.advance(timedelta(days=1))
    ddb.update_table(TableName=name, TableClass="STANDARD")
    proxy.advance(timedelta(days=1))

    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")
    assert error_of(excinfo)[0] == "LimitExceededException"
    assert "trailing 30-day period" in error_of(excinfo)[1]

    proxy.set_time(first + timedelta(days=30, seconds=1))
    ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")
    summary = ddb.describe_table(TableName=name)["Table"]["TableClassSummary"]
    assert summary["TableClass"] == "STANDARD_INFREQUENT_ACCESS"


def test_warm_throughput_starts_as_documented_and_can_only_rise(proxy, ddb, unique_name):
    proxy.configure(update_seconds=1)
    on_demand = active_table(proxy, ddb, f"{unique_name}-warm-od", billing="PAY_PER_REQUEST")
    # tracked either way; reported where the engine reports it (moto) or once set (dynalite reports none)
    assert (proxy.table_state(on_demand)["warm_read"], proxy.table_state(on_demand)["warm_write"]) == (12000, 4000)
    warm = ddb.describe_table(TableName=on_demand)["Table"].get("WarmThroughput")
    assert warm in ({"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}, None)

    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=on_demand, WarmThroughput={"ReadUnitsPerSecond": 11000, "WriteUnitsPerSecond": 4000})
    assert error_of(excinfo)[0] == "ValidationException"
    assert "can only be increased" in error_of(excinfo)[1]

    response = ddb.update_table(TableName=on_demand,
                                WarmThroughput={"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 5000})
    assert response["TableDescription"]["WarmThroughput"]["Status"] == "UPDATING"
    proxy.advance(1)
    warm = ddb.describe_table(TableName=on_demand)["Table"]["WarmThroughput"]
    assert warm == {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 5000, "Status": "ACTIVE"}

    provisioned = active_table(proxy, ddb, f"{unique_name}-warm-pr", rcu=5, wcu=5)
    assert proxy.table_state(provisioned)["warm_read"] == 5
    # below the on-demand floor, above the table's own: accepted (terraform-provider-aws#49894)
    ddb.update_table(TableName=provisioned, WarmThroughput={"ReadUnitsPerSecond": 100, "WriteUnitsPerSecond": 50})
    proxy.advance(1)
    assert ddb.describe_table(TableName=provisioned)["Table"]["WarmThroughput"]["WriteUnitsPerSecond"] == 50


def test_on_demand_throughput_is_reported(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-odt", billing="PAY_PER_REQUEST")
    ddb.update_table(TableName=name, OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50})
    table = ddb.describe_table(TableName=name)["Table"]
    assert table["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}


# -- control plane ---------------------------------------------------------------------------------------------
def test_control_plane_limit_counts_tables_in_transition(proxy, ddb, unique_name):
    older = active_table(proxy, ddb, f"{unique_name}-older")
    proxy.configure(control_plane_limit=2)
    create(ddb, f"{unique_name}-a")
    create(ddb, f"{unique_name}-b")

    expected = ("LimitExceededException",
                "Subscriber limit exceeded: Only 2 tables can be created, updated, or deleted simultaneously")
    for call in (lambda: create(ddb, f"{unique_name}-c"),
                 lambda: ddb.update_table(TableName=older, ProvisionedThroughput=throughput(1, 1)),
                 lambda: ddb.delete_table(TableName=older)):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == expected
    assert f"{unique_name}-c" not in ddb.list_tables()["TableNames"]

    proxy.advance(proxy.settings.create_seconds)
    create(ddb, f"{unique_name}-c")  # the others are ACTIVE now
    ddb.update_table(TableName=older, ProvisionedThroughput=throughput(1, 1))


def test_limit_for_tables_with_secondary_indexes_in_creation(proxy, ddb, unique_name):
    proxy.configure(control_plane_limit_with_indexes=1)
    index = {"IndexName": "by_sk", "KeySchema": [{"AttributeName": "sk", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}
    create(ddb, f"{unique_name}-gsi1", billing="PAY_PER_REQUEST", GlobalSecondaryIndexes=[index])
    with pytest.raises(ClientError) as excinfo:
        create(ddb, f"{unique_name}-gsi2", billing="PAY_PER_REQUEST", GlobalSecondaryIndexes=[index])
    assert error_of(excinfo)[0] == "LimitExceededException"
    create(ddb, f"{unique_name}-plain", billing="PAY_PER_REQUEST")  # no index: only the overall limit counts
    proxy.advance(proxy.settings.create_seconds)
    create(ddb, f"{unique_name}-gsi2", billing="PAY_PER_REQUEST", GlobalSecondaryIndexes=[index])


def test_reads_and_writes_wait_for_an_active_table(proxy, ddb, unique_name):
    name = f"{unique_name}-creating"
    create(ddb, name, billing="PAY_PER_REQUEST")
    key = {"pk": {"S": "k"}, "sk": {"S": "s"}}
    for call in (lambda: ddb.put_item(TableName=name, Item=key),
                 lambda: ddb.get_item(TableName=name, Key=key),
                 lambda: ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": key}}]})):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found")
    proxy.advance(proxy.settings.create_seconds)
    ddb.put_item(TableName=name, Item=key)
    ddb.update_table(TableName=name, DeletionProtectionEnabled=True)
    ddb.put_item(TableName=name, Item=key)  # UPDATING tables stay writable
    assert "Item" in ddb.get_item(TableName=name, Key=key)


# -- partition throughput --------------------------------------------------------------------------------------
def put(ddb, name, pk, sk="s", size=0):
    item = {"pk": {"S": pk}, "sk": {"S": sk}}
    if size:
        item["v"] = {"S": "x" * size}
    return ddb.put_item(TableName=name, Item=item)


def test_writes_are_limited_per_partition_key_with_throttling_reasons(proxy, ddb, unique_name):
    proxy.configure(write_units_per_second=10)
    name = active_table(proxy, ddb, f"{unique_name}-hot", billing="PAY_PER_REQUEST")
    for i in range(10):
        put(ddb, name, "hot", sk=str(i))
    with pytest.raises(ClientError) as excinfo:
        put(ddb, name, "hot", sk="x")
    assert error_of(excinfo)[0] == "ThrottlingException"
    arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
    assert excinfo.value.response["throttlingReasons"] == [
        {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn}
    ]
    put(ddb, name, "cold")  # another partition key: its own bucket
    proxy.advance(0.5)
    for i in range(5):
        put(ddb, name, "hot", sk=f"later{i}")
    with pytest.raises(ClientError):
        put(ddb, name, "hot", sk="x")
    # 1 KB per write unit, rounded up: a 2.5 KB item takes 3 of the bucket's 10
    proxy.advance(1)
    for i in range(3):
        put(ddb, name, "big", sk=str(i), size=2500)
    with pytest.raises(ClientError):
        put(ddb, name, "big", sk="3", size=2500)
    ddb.update_item(TableName=name, Key={"pk": {"S": "cold"}, "sk": {"S": "s"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"N": "1"}})
    ddb.delete_item(TableName=name, Key={"pk": {"S": "cold"}, "sk": {"S": "s"}})


def test_throttle_body_is_dynamodbs_json_with_a_valid_crc32(proxy, ddb, unique_name):
    proxy.configure(write_units_per_second=1)
    name = active_table(proxy, ddb, f"{unique_name}-raw", billing="PAY_PER_REQUEST")
    arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
    body = json.dumps({"TableName": name, "Item": {"pk": {"S": "k"}, "sk": {"S": "s"}}}).encode()
    headers = {"X-Amz-Target": "DynamoDB_20120810.PutItem", "Content-Type": "application/x-amz-json-1.0",
               "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260310/us-east-1/dynamodb/aws4_request, "
                                "SignedHeaders=host;x-amz-date, Signature=0", "X-Amz-Date": "20260310T000000Z"}
    urllib.request.urlopen(urllib.request.Request(proxy.endpoint_url, data=body, headers=headers))  # noqa: S310
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        urllib.request.urlopen(urllib.request.Request(proxy.endpoint_url, data=body, headers=headers))  # noqa: S310
    response = excinfo.value
    raw = response.read()
    assert response.code == 400
    assert json.loads(raw) == {
        "__type": "com.amazon.coral.availability#ThrottlingException",  # awslabs/dynein#195
        "message": ON_DEMAND_TABLE_MESSAGE,
        "throttlingReasons": [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn}],
    }
    assert list(json.loads(raw)) == ["__type", "message", "throttlingReasons"]
    assert int(response.headers["x-amz-crc32"]) == zlib.crc32(raw)


@pytest.mark.parametrize(("config", "attempts"), [
    (None, 4),  # botocore's default for DynamoDB: standard mode, 3 retries (4 attempts)
    (Config(retries={"mode": "standard", "total_max_attempts": 3}), 3),
    (Config(retries={"mode": "standard", "max_attempts": 1}), 2),  # max_attempts counts retries
])
def test_botocore_standard_retries_retry_a_throttled_write(proxy, unique_name, config, attempts):
    proxy.configure(write_units_per_second=1)
    ddb = proxy.client(config=config) if config else proxy.client()
    name = active_table(proxy, ddb, f"{unique_name}-retry", billing="PAY_PER_REQUEST")
    put(ddb, name, "k")
    proxy.reset_stats()

    with pytest.raises(ClientError) as excinfo:
        put(ddb, name, "k", sk="again")  # the frozen clock never refills: every attempt is throttled

    assert excinfo.value.response["ResponseMetadata"]["RetryAttempts"] == attempts - 1
    assert excinfo.value.response["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
    stats = proxy.stats()
    assert stats["requests"]["PutItem"] == attempts  # every attempt reached the proxy
    assert stats["refusals"]["PutItem:ThrottlingException"] == attempts


def test_a_retried_write_succeeds_once_the_bucket_refills_on_the_real_clock(moto_server, unique_name):
    proxy = start_rules_proxy(moto_server, create_seconds=0, write_units_per_second=2)
    try:
        ddb = proxy.client(config=Config(retries={"mode": "standard", "total_max_attempts": 10}))
        name = f"{unique_name}-refill"
        create(ddb, name, billing="PAY_PER_REQUEST")
        for i in range(6):  # 2 units a second: botocore's backoff waits for the bucket
            put(ddb, name, "hot", sk=str(i))
        assert proxy.stats()["refusals"].get("PutItem:ThrottlingException", 0) >= 1
    finally:
        proxy.stop()


def test_reads_are_charged_after_the_response_and_then_refused(proxy, ddb, unique_name):
    proxy.configure(read_units_per_second=2)
    name = active_table(proxy, ddb, f"{unique_name}-reads", billing="PAY_PER_REQUEST")
    for i in range(3):
        put(ddb, name, "dev", sk=str(i), size=4000)  # ~4 KB each: one read unit strongly consistent
    key = {"pk": {"S": "dev"}, "sk": {"S": "0"}}

    for _ in range(4):  # eventually consistent: half a unit each, 2 units in the bucket
        ddb.get_item(TableName=name, Key=key)
    ddb.get_item(TableName=name, Key=key, ConsistentRead=True)  # at 0, not below: allowed, overdraws to -1
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "dev"}})
    assert error_of(excinfo)[0] == "ThrottlingException"
    assert excinfo.value.response["throttlingReasons"][0]["reason"] == "TableReadKeyRangeThroughputExceeded"
    ddb.get_item(TableName=name, Key={"pk": {"S": "other"}, "sk": {"S": "0"}})  # another partition

    proxy.advance(1)  # back to +1: a query of three ~4 KB items (3 units, halved) overdraws to -0.5
    items = ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": {"S": "dev"}})["Items"]
    assert len(items) == 3
    with pytest.raises(ClientError):
        ddb.get_item(TableName=name, Key=key)
    proxy.advance(0.25)
    ddb.get_item(TableName=name, Key=key)


def test_batch_write_returns_throttled_items_unprocessed_and_writes_the_rest(proxy, ddb, unique_name):
    proxy.configure(write_units_per_second=2)
    name = active_table(proxy, ddb, f"{unique_name}-batch", billing="PAY_PER_REQUEST")

    def request(pk, sk):
        return {"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"S": sk}}}}

    writes = [request("hot", str(i)) for i in range(4)] + [request("cold", "0")]
    response = ddb.batch_write_item(RequestItems={name: writes})  # botocore checks the rewritten body's crc32

    assert response["UnprocessedItems"] == {name: [request("hot", "2"), request("hot", "3")]}
    stored = ddb.scan(TableName=name)["Items"]
    assert sorted((i["pk"]["S"], i["sk"]["S"]) for i in stored) == [("cold", "0"), ("hot", "0"), ("hot", "1")]

    with pytest.raises(ClientError) as excinfo:  # nothing can be written: the whole call is throttled
        ddb.batch_write_item(RequestItems={name: [request("hot", "9")]})
    assert error_of(excinfo)[0] == "ThrottlingException"
    assert excinfo.value.response["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"


def test_batch_get_returns_throttled_keys_unprocessed(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-bget", billing="PAY_PER_REQUEST")
    put(ddb, name, "hot", size=8000)
    put(ddb, name, "cold")
    proxy.configure(read_units_per_second=1)
    hot, cold = {"pk": {"S": "hot"}, "sk": {"S": "s"}}, {"pk": {"S": "cold"}, "sk": {"S": "s"}}
    ddb.get_item(TableName=name, Key=hot, ConsistentRead=True)  # 2 units from a 1-unit bucket: overdrawn

    response = ddb.batch_get_item(RequestItems={name: {"Keys": [hot, cold]}})

    assert [i["pk"]["S"] for i in response["Responses"][name]] == ["cold"]
    assert response["UnprocessedKeys"][name]["Keys"] == [hot]
    with pytest.raises(ClientError) as excinfo:
        ddb.batch_get_item(RequestItems={name: {"Keys": [hot]}})
    assert excinfo.value.response["throttlingReasons"][0]["reason"] == "TableReadKeyRangeThroughputExceeded"


def test_partition_throttling_can_be_switched_off(proxy, ddb, unique_name):
    proxy.configure(write_units_per_second=1, throttle_partitions=False)
    name = active_table(proxy, ddb, f"{unique_name}-off", billing="PAY_PER_REQUEST")
    for i in range(5):
        put(ddb, name, "hot", sk=str(i))


# -- the proxy itself ------------------------------------------------------------------------------------------
def test_clock_is_frozen_by_default_in_tests_and_moves_only_when_told(rules_proxy):
    assert rules_proxy.now() == RULES_START_TIME
    rules_proxy.advance(timedelta(minutes=5))
    assert rules_proxy.now() == RULES_START_TIME + timedelta(minutes=5)
    rules_proxy.set_time(datetime(2026, 4, 1, 12, tzinfo=UTC))
    assert rules_proxy.now() == datetime(2026, 4, 1, 12, tzinfo=UTC)


def test_real_clock_without_start_time_and_stop_is_idempotent(moto_server):
    proxy = start_rules_proxy(moto_server, update_seconds=5)
    try:
        assert abs((proxy.now() - datetime.now(UTC)).total_seconds()) < 5
        assert proxy.settings.update_seconds == 5
        with pytest.raises(ValueError, match="time does not go back"):
            proxy.advance(-1)
        # advance takes control of a real clock: frozen at the moment it was called, then moved
        before = datetime.now(UTC)
        proxy.advance(3600)
        frozen = proxy.now()
        assert before + timedelta(seconds=3600) <= frozen <= datetime.now(UTC) + timedelta(seconds=3600)
        assert proxy.now() == frozen
    finally:
        proxy.stop()
        proxy.stop()
    assert proxy.server.process.poll() is not None


def test_reset_forgets_tracked_state(rules_proxy, unique_name):
    ddb = rules_proxy.client()
    name = active_table(rules_proxy, ddb, f"{unique_name}-reset")
    assert rules_proxy.table_state(name)["status"] == "ACTIVE"
    rules_proxy.reset()
    assert rules_proxy.table_state(name) == {}


# -- what settles after a moment: backups of a new table, tags, time to live (sources in _settling.py) --------
def test_pitr_on_a_table_just_turned_active_waits_until_its_backups_are_enabled(rules_proxy, unique_name):
    ddb = rules_proxy.client(config=NO_RETRIES)
    name = active_table(rules_proxy, ddb, f"{unique_name}-pitr")  # ACTIVE this very moment
    enable = {"PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True}}

    with pytest.raises(ClientError) as excinfo:
        ddb.update_continuous_backups(TableName=name, **enable)

    assert error_of(excinfo) == (
        "ContinuousBackupsUnavailableException", f"Backups are being enabled for the table: {name}. Please retry later"
    )
    pitr = ddb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
    assert pitr["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"
    rules_proxy.advance(rules_proxy.settings.backups_unavailable_seconds)
    ddb.update_continuous_backups(TableName=name, **enable)
    pitr = ddb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
    assert pitr["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"


def _tags(ddb, arn):
    return {t["Key"]: t["Value"] for t in ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]}


def test_tags_show_the_previous_or_an_empty_set_until_the_lag_has_passed(proxy, ddb, unique_name):
    lag = proxy.settings.tag_lag_seconds
    created = create(ddb, f"{unique_name}-tags", Tags=[{"Key": "owner", "Value": "rotation"}])
    arn = created["TableDescription"]["TableArn"]

    assert _tags(ddb, arn) == {}  # created with tags: there was no previous set
    proxy.advance(lag)
    assert _tags(ddb, arn) == {"owner": "rotation"}

    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "period", "Value": "day"}])
    assert _tags(ddb, arn) == {"owner": "rotation"}  # the previous set
    proxy.advance(lag)
    assert _tags(ddb, arn) == {"owner": "rotation", "period": "day"}

    ddb.untag_resource(ResourceArn=arn, TagKeys=["owner"])
    assert _tags(ddb, arn) == {"owner": "rotation", "period": "day"}
    proxy.advance(lag)
    assert _tags(ddb, arn) == {"period": "day"}


def test_time_to_live_changes_once_an_hour_a_repeat_is_refused_and_the_state_is_kept(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-ttl")
    enable = {"Enabled": True, "AttributeName": "expires"}
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}

    answer = ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=enable)

    assert answer["TimeToLiveSpecification"] == enable
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLING", "AttributeName": "expires"}
    with pytest.raises(ClientError) as excinfo:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=enable)
    assert error_of(excinfo) == ("ValidationException", "TimeToLive is already enabled")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"})
    assert error_of(excinfo) == (
        "ValidationException", "Time to live has been modified multiple times within a fixed interval")
    proxy.advance(proxy.settings.ttl_settle_seconds)
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}  # the refused disable changed nothing

    proxy.advance(3600 - proxy.settings.ttl_settle_seconds)  # an hour after the change
    ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"})
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]["TimeToLiveStatus"] == "DISABLING"
    proxy.advance(3600)
    with pytest.raises(ClientError) as excinfo:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"})
    assert error_of(excinfo) == ("ValidationException", "TimeToLive is already disabled")
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_time_to_live(TableName=f"{unique_name}-no-such-table")
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_delete_of_a_table_already_deleting_answers_its_description_and_keeps_the_window(proxy, ddb, unique_name):
    proxy.configure(delete_seconds=40)
    name = active_table(proxy, ddb, f"{unique_name}-twice")
    ddb.delete_table(TableName=name)
    proxy.advance(30)

    again = ddb.delete_table(TableName=name)["TableDescription"]

    assert (again["TableName"], again["TableStatus"]) == (name, "DELETING")
    proxy.advance(10)  # 40 s after the first DeleteTable, not the second: gone
    assert name not in _all_table_names(ddb)


def _index(name):
    return {"Create": {"IndexName": name, "KeySchema": [{"AttributeName": "sk", "KeyType": "HASH"}],
                       "Projection": {"ProjectionType": "KEYS_ONLY"},
                       "ProvisionedThroughput": throughput(1, 1)}}


def test_one_index_created_per_update_and_never_with_a_throughput_change(proxy, ddb, unique_name):
    name = active_table(proxy, ddb, f"{unique_name}-gsi", rcu=5, wcu=5)
    definitions = [{"AttributeName": "sk", "AttributeType": "S"}]

    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=name, AttributeDefinitions=definitions,
                         GlobalSecondaryIndexUpdates=[_index("gsi-a"), _index("gsi-b")])
    assert error_of(excinfo) == (
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
    with pytest.raises(ClientError, match="does not also modify the table's provisioned throughput") as excinfo:
        ddb.update_table(TableName=name, AttributeDefinitions=definitions, ProvisionedThroughput=throughput(6, 5),
                         GlobalSecondaryIndexUpdates=[_index("gsi-a")])
    assert error_of(excinfo)[0] == "ValidationException"

    table = ddb.describe_table(TableName=name)["Table"]
    assert not table.get("GlobalSecondaryIndexes")  # moto reports [], dynalite leaves the key out
    assert (table["TableStatus"], table["ProvisionedThroughput"]["ReadCapacityUnits"]) == ("ACTIVE", 5)
    assert proxy.table_state(name)["updates"] == 0


def test_boto3_waiters_see_a_new_and_an_updated_table_active_with_the_default_windows(moto_server, unique_name):
    """The default windows are a few seconds: an SDK waiter polling each second is done long before 15 tries."""
    proxy = start_rules_proxy(moto_server)  # the real clock and the default settings
    try:
        ddb = proxy.client(config=NO_RETRIES)
        wait = {"Delay": 1, "MaxAttempts": 15}
        name = f"{unique_name}-waiter"
        create(ddb, name, rcu=5, wcu=5)
        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=wait)
        ddb.update_table(TableName=name, ProvisionedThroughput=throughput(10, 5))
        assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "UPDATING"

        ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig=wait)

        table = ddb.describe_table(TableName=name)["Table"]
        assert (table["TableStatus"], table["ProvisionedThroughput"]["ReadCapacityUnits"]) == ("ACTIVE", 10)
    finally:
        proxy.stop()


def test_settling_in_pure_logic_a_second_tag_change_during_a_lag_keeps_the_older_set_shown():
    from cdk_ts.testing._settling import Settling

    settings = RulesSettings(tag_lag_seconds=10)
    settling = Settling(lambda: settings)
    arn, t0 = "arn:aws:dynamodb:us-east-1:123456789012:table/readings", RULES_START_TIME
    first, second = [{"Key": "a", "Value": "1"}], [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]

    settling.tags.changed(arn, first, t0)
    settling.tags.changed(arn, second, t0 + timedelta(seconds=5))  # before: what the engine had then

    assert settling.tags.shown(arn, t0 + timedelta(seconds=14)) == first
    assert settling.tags.shown(arn, t0 + timedelta(seconds=15)) is None  # the engine's own set from here
    settling.tags.changed(arn, first, t0 + timedelta(seconds=20))
    settling.forget("readings")
    assert settling.tags.shown(arn, t0 + timedelta(seconds=21)) is None
    settings = RulesSettings(tag_lag_seconds=0)  # the getter reads the settings in force: no lag at all
    settling.tags.changed(arn, first, t0 + timedelta(seconds=30))
    assert settling.tags.shown(arn, t0 + timedelta(seconds=30)) is None
