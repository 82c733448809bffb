"""ShardMetadataTable: key taken from the main table, defaults, bind/grants, errors, cdk-nag."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from cdk_ts import DeviceLogTable, ShardMetadataTable
from cdk_ts._defaults import runtime_function
from cdk_ts_runtime._sharding import ENV_METADATA_TABLE, ENV_PARTITION_KEY, ENV_SORT_KEY, ENV_TABLE, ShardStrategy
from tests.support.iam import policy_statements, role_actions
from tests.support.nag import new_app, new_stack, unacknowledged_findings
from tests.support.problems import raises_problems

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
    app, stack = new_stack()
    main = audit_table(stack)
    shards = ShardMetadataTable(stack, "Shards", main_table=main, strategy="computed")
    function = runtime_function(stack, "Writer", handler="app.handler", description="w", environment={})
    shards.bind(function)
    return stack, main, shards, Template.from_stack(stack)


def test_metadata_key_matches_the_main_tables_partition_key(wired):
    *_, template = wired
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
    stack, main, shards, template = wired
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Environment": {
                "Variables": {
                    ENV_TABLE: stack.resolve(main.table_name),
                    ENV_METADATA_TABLE: stack.resolve(shards.table.table_name),
                    ENV_PARTITION_KEY: "file_path",
                    ENV_SORT_KEY: "timestamp",
                    "CDK_TS_SHARDING_STRATEGY": "computed",
                }
            }
        },
    )
    statements = policy_statements(template)
    writes = [s for s in statements if "dynamodb:PutItem" in s["Action"]]
    resources = str([s["Resource"] for s in writes])
    assert stack.get_logical_id(main.node.default_child) in resources
    assert stack.get_logical_id(shards.table.node.default_child) in resources


def test_key_comes_from_a_device_log_table_too():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log")
    shards = ShardMetadataTable(stack, "Shards", main_table=log)
    assert (shards.partition_key.name, shards.sort_key_name) == ("DeviceID", "State#Date")


def test_sharding_a_device_log_table_passes_cdk_nag_with_the_users_opt_in():
    app, stack = new_stack()
    shards = ShardMetadataTable(stack, "Shards", main_table=DeviceLogTable(stack, "Log"))
    writer = runtime_function(stack, "Writer", handler="app.handler", description="w", environment={})
    shards.bind(writer, read=True, acknowledge_nag_findings=True)
    assert unacknowledged_findings(app) == []


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
    table = dynamodb.Table(
        stack, "T", partition_key=dynamodb.Attribute(name="id", type=NUMBER),
        sort_key=dynamodb.Attribute(name="ts", type=NUMBER),
    )
    with pytest.raises(ValueError, match="must be a String"):
        ShardMetadataTable(stack, "Shards", main_table=table)


def test_key_schema_is_read_from_a_table_v2():
    stack = Stack(new_app(), "Test")
    table = dynamodb.TableV2(
        stack, "V2", partition_key=dynamodb.Attribute(name="device", type=STRING),
        sort_key=dynamodb.Attribute(name="ts", type=NUMBER),
    )
    shards = ShardMetadataTable(stack, "Shards", main_table=table)
    assert (shards.partition_key.name, shards.partition_key.type, shards.sort_key_name) == ("device", STRING, "ts")
    Template.from_stack(stack).has_resource_properties("AWS::DynamoDB::Table", {
        "KeySchema": [{"AttributeName": "device", "KeyType": "HASH"}],
    })


def test_a_main_table_without_sort_key_is_refused_at_construction_not_at_bind():
    stack = Stack(new_app(), "Test")
    table = dynamodb.Table(stack, "T", partition_key=dynamodb.Attribute(name="id", type=STRING))
    with pytest.raises(ValueError, match="^Test/Shards: main_table Test/T has no sort key"):
        ShardMetadataTable(stack, "Shards", main_table=table)


def test_every_bad_prop_is_reported_in_one_error_with_the_construct_path():
    stack = Stack(new_app(), "Test")
    table = dynamodb.Table(stack, "T", partition_key=dynamodb.Attribute(name="id", type=NUMBER))
    raises_problems(
        lambda: ShardMetadataTable(stack, "Shards", main_table=table, strategy="hash"), "Test/Shards",
        "strategy 'hash'", "'id' is NUMBER", "has no sort key",
    )
    assert stack.node.try_find_child("Shards") is None


def test_strategy_takes_the_enum():
    stack = Stack(new_app(), "Test")
    shards = ShardMetadataTable(stack, "Shards", main_table=audit_table(stack), strategy=ShardStrategy.COMPUTED)
    assert shards.strategy is ShardStrategy.COMPUTED


def test_unknown_strategy_is_rejected():
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match="strategy 'hash' is not one of random, computed"):
        ShardMetadataTable(stack, "Shards", main_table=audit_table(stack), strategy="hash")


def test_passes_cdk_nag_when_the_user_acknowledges_the_grant_findings():
    app, stack = new_stack()
    shards = ShardMetadataTable(stack, "Shards", main_table=audit_table(stack))
    shards.bind(
        runtime_function(stack, "Writer", handler="app.handler", description="w", environment={}),
        acknowledge_nag_findings=True,
    )
    assert unacknowledged_findings(app) == []


def test_bind_leaves_the_users_role_unacknowledged_by_default():
    app, stack = new_stack()
    shards = ShardMetadataTable(stack, "Shards", main_table=audit_table(stack))
    shards.bind(runtime_function(stack, "Writer", handler="app.handler", description="w", environment={}))
    findings = unacknowledged_findings(app)
    assert any(f.startswith("AwsSolutions-IAM5") and "Test/WriterRole/" in f for f in findings), findings


def test_bind_returns_the_grant_and_grants_reads_only_when_asked():
    stack = Stack(new_app(), "Test")
    main = audit_table(stack)
    shards = ShardMetadataTable(stack, "Shards", main_table=main)
    writer = runtime_function(stack, "Writer", handler="app.handler", description="w", environment={})
    reader = runtime_function(stack, "Reader", handler="app.handler", description="r", environment={})
    assert isinstance(shards.bind(writer), iam.Grant)
    assert isinstance(shards.bind(reader, read=True, write=False), iam.Grant)
    template = Template.from_stack(stack)
    writer_actions = role_actions(template, stack, writer.role)
    reader_actions = role_actions(template, stack, reader.role)
    assert "dynamodb:PutItem" in writer_actions and "cloudwatch:GetMetricStatistics" in writer_actions
    assert "dynamodb:Query" in reader_actions and "dynamodb:PutItem" not in reader_actions


def test_bind_that_grants_nothing_names_the_construct():
    stack = Stack(new_app(), "Test")
    shards = ShardMetadataTable(stack, "Shards", main_table=audit_table(stack))
    writer = runtime_function(stack, "Writer", handler="app.handler", description="w", environment={})
    with pytest.raises(ValueError, match=r"^Test/Shards\.bind\(Test/Writer\): read=False and write=False"):
        shards.bind(writer, read=False, write=False)


@pytest.mark.parametrize("table_class", [dynamodb.TableClass.STANDARD, "STANDARD"])
def test_metadata_table_takes_caps_warm_throughput_and_table_class(table_class):
    stack = Stack(new_app(), "Test")
    ShardMetadataTable(
        stack, "Shards", main_table=audit_table(stack), max_read_request_units=100, max_write_request_units=50,
        warm_write_units_per_second=4500, table_class=table_class,
    )
    Template.from_stack(stack).has_resource_properties("AWS::DynamoDB::Table", {
        "KeySchema": [{"AttributeName": "file_path", "KeyType": "HASH"}],
        "OnDemandThroughput": {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
        "WarmThroughput": {"WriteUnitsPerSecond": 4500},
        "TableClass": "STANDARD",
    })


def test_metadata_table_refuses_an_unknown_table_class_by_name():
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match="table_class 'GLACIER' is not one of STANDARD, STANDARD_INFREQUENT_ACCESS"):
        ShardMetadataTable(stack, "Shards", main_table=audit_table(stack), table_class="GLACIER")


def test_bad_caps_join_the_other_problems():
    stack = Stack(new_app(), "Test")
    raises_problems(
        lambda: ShardMetadataTable(
            stack, "Shards", main_table=audit_table(stack), strategy="hash", max_read_request_units=0,
            warm_write_units_per_second=-1,
        ),
        "Test/Shards",
        "strategy 'hash'", "max_read_request_units 0", "warm_write_units_per_second -1",
    )


def test_metadata_table_rejects_a_bad_cap():
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match="max_read_request_units 0 must be"):
        ShardMetadataTable(stack, "Shards", main_table=audit_table(stack), max_read_request_units=0)
