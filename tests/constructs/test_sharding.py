"""ShardMetadataTable: key taken from the main table, defaults, bind/grants, errors, cdk-nag."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Match, Template

from cdk_ts import DeviceLogTable, ShardMetadataTable
from cdk_ts._defaults import runtime_function
from cdk_ts_runtime.sharding import ENV_METADATA_TABLE, ENV_PARTITION_KEY, ENV_SORT_KEY, ENV_TABLE
from tests.support.nag import new_app, unacknowledged_findings

STRING, NUMBER = dynamodb.AttributeType.STRING, dynamodb.AttributeType.NUMBER


def audit_table(stack):
    return dynamodb.Table(
        stack,
        "Audit",
        partition_key=dynamodb.Attribute(name="file_path", type=STRING),
        sort_key=dynamodb.Attribute(name="timestamp", type=NUMBER),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
    )


@pytest.fixture(scope="module")
def wired():
    app = new_app()
    stack = Stack(app, "Test")
    main = audit_table(stack)
    shards = ShardMetadataTable(stack, "Shards", main_table=main, strategy="computed")
    function = runtime_function(stack, "Writer", handler="app.handler", description="w", environment={})
    shards.bind(function)
    return app, stack, main, shards, Template.from_stack(stack)


def test_metadata_key_matches_the_main_tables_partition_key(wired):
    _app, stack, _main, shards, template = wired
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "KeySchema": [{"AttributeName": "file_path", "KeyType": "HASH"}],
                    "AttributeDefinitions": [{"AttributeName": "file_path", "AttributeType": "S"}],
                    "BillingMode": "PAY_PER_REQUEST",
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                }
            ),
        },
    )


def test_bind_sets_the_client_configuration_and_grants_both_tables(wired):
    _app, stack, main, shards, template = wired
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Environment": {
                "Variables": {
                    ENV_TABLE: stack.resolve(main.table_name),
                    ENV_METADATA_TABLE: stack.resolve(shards.table.table_name),
                    ENV_PARTITION_KEY: "file_path",
                    ENV_SORT_KEY: "timestamp",
                    "SHARDING_STRATEGY": "computed",
                }
            }
        },
    )
    statements = [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    writes = [s for s in statements if "dynamodb:PutItem" in s["Action"]]
    resources = str([s["Resource"] for s in writes])
    assert stack.get_logical_id(main.node.default_child) in resources
    assert stack.get_logical_id(shards.table.node.default_child) in resources


def test_key_comes_from_a_device_log_table_too():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log")
    shards = ShardMetadataTable(stack, "Shards", main_table=log)
    assert (shards.partition_key.name, shards.sort_key_name) == ("DeviceID", "State#Date")


def test_imported_tables_need_the_partition_key():
    stack = Stack(new_app(), "Test")
    imported = dynamodb.Table.from_table_name(stack, "Imported", "audit")
    with pytest.raises(ValueError, match="pass partition_key="):
        ShardMetadataTable(stack, "Shards", main_table=imported)
    shards = ShardMetadataTable(
        stack,
        "Shards2",
        main_table=imported,
        partition_key=dynamodb.Attribute(name="file_path", type=STRING),
        sort_key_name="ts",
    )
    assert shards.partition_key.name == "file_path"


def test_number_partition_keys_cannot_hold_shard_suffixes():
    stack = Stack(new_app(), "Test")
    table = dynamodb.Table(stack, "T", partition_key=dynamodb.Attribute(name="id", type=NUMBER))
    with pytest.raises(ValueError, match="must be a String"):
        ShardMetadataTable(stack, "Shards", main_table=table)


def test_unknown_strategy_is_rejected():
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match="strategy 'hash' is not one of random, computed"):
        ShardMetadataTable(stack, "Shards", main_table=audit_table(stack), strategy="hash")


def test_passes_cdk_nag():
    app = new_app()
    stack = Stack(app, "Test")
    shards = ShardMetadataTable(stack, "Shards", main_table=audit_table(stack))
    shards.bind(runtime_function(stack, "Writer", handler="app.handler", description="w", environment={}))
    assert unacknowledged_findings(app) == []


def test_metadata_table_takes_caps_warm_throughput_and_table_class():
    stack = Stack(new_app(), "Test")
    ShardMetadataTable(
        stack, "Shards", main_table=audit_table(stack), max_read_request_units=100, max_write_request_units=50,
        warm_write_units_per_second=4500, table_class=dynamodb.TableClass.STANDARD,
    )
    Template.from_stack(stack).has_resource_properties("AWS::DynamoDB::Table", {
        "KeySchema": [{"AttributeName": "file_path", "KeyType": "HASH"}],
        "OnDemandThroughput": {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
        "WarmThroughput": {"WriteUnitsPerSecond": 4500},
        "TableClass": "STANDARD",
    })


def test_metadata_table_rejects_a_bad_cap():
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match="max_read_request_units 0 must be"):
        ShardMetadataTable(stack, "Shards", main_table=audit_table(stack), max_read_request_units=0)
