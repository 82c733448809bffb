"""``DeviceLogTable(table_name=...)`` and ``ShardMetadataTable(table_name=...)``: optional, DynamoDB's rule at synth.

A name is 3-255 characters of ``[A-Za-z0-9_.-]`` (CreateTable's ``TableName``); a deploy-time token cannot be
checked at synth and is passed through. Without a name CloudFormation generates one.
"""

from __future__ import annotations

import pytest
from aws_cdk import CfnParameter, Stack
from aws_cdk.assertions import Match, Template

from cdk_ts import DeviceLogTable, ShardMetadataTable
from tests.support.nag import new_app

RULE = r"is not a DynamoDB table name: use 3-255 characters of \[A-Za-z0-9_.-\]"


def _table_names(stack: Stack) -> list:
    tables = Template.from_stack(stack).find_resources("AWS::DynamoDB::Table")
    return sorted((r["Properties"].get("TableName") for r in tables.values()), key=str)


def test_both_tables_take_a_name_of_dynamodbs_rule():
    stack = Stack(new_app(), "S")
    log = DeviceLogTable(stack, "Log", table_name="device-log_2026.v1")
    ShardMetadataTable(stack, "Shards", main_table=log, table_name="x" * 255)
    assert _table_names(stack) == ["device-log_2026.v1", "x" * 255]


def test_without_a_name_cloudformation_generates_one():
    stack = Stack(new_app(), "S")
    ShardMetadataTable(stack, "Shards", main_table=DeviceLogTable(stack, "Log"))
    assert _table_names(stack) == [None, None]


@pytest.mark.parametrize("name", ["ab", "x" * 256, "device log", "device/log", ""])
def test_a_name_dynamodb_would_refuse_is_refused_at_synth_naming_the_path_and_the_value(name):
    stack = Stack(new_app(), "S")
    with pytest.raises(ValueError, match=rf"^S/Log: table_name {name!r} {RULE}"):
        DeviceLogTable(stack, "Log", table_name=name)
    main = DeviceLogTable(stack, "Main")
    with pytest.raises(ValueError, match=rf"^S/Shards: table_name {name!r} {RULE}"):
        ShardMetadataTable(stack, "Shards", main_table=main, table_name=name)
    assert stack.node.try_find_child("Log") is None and stack.node.try_find_child("Shards") is None


def test_a_deploy_time_name_is_not_checked_and_reaches_the_template():
    stack = Stack(new_app(), "S")
    name = CfnParameter(stack, "LogName").value_as_string  # unresolved at synth
    log = DeviceLogTable(stack, "Log", table_name=name)
    ShardMetadataTable(stack, "Shards", main_table=log, table_name=f"{name}-shards")
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::DynamoDB::Table", {"TableName": {"Ref": "LogName"}})
    template.has_resource_properties("AWS::DynamoDB::Table", {"TableName": Match.object_like(
        {"Fn::Join": ["", [{"Ref": "LogName"}, "-shards"]]})})
