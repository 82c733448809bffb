"""A misspelt keyword on a construct fails with the construct's path and the closest keyword, creating nothing."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, ShardMetadataTable
from tests.support.nag import new_app


def _main_table(stack: Stack) -> dynamodb.Table:
    partition_key = dynamodb.Attribute(name="file_path", type=dynamodb.AttributeType.STRING)
    sort_key = dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER)
    return dynamodb.Table(stack, "Main", partition_key=partition_key, sort_key=sort_key)


#: Each construct with the keywords it always needs.
CONSTRUCTS = {
    "DeviceLogTable": lambda stack, **kw: DeviceLogTable(stack, "Bad", **kw),
    "RotatingTimeSeriesTables": lambda stack, **kw: RotatingTimeSeriesTables(stack, "Bad", table_prefix="bad", **kw),
    "ShardMetadataTable": lambda stack, **kw: ShardMetadataTable(stack, "Bad", main_table=_main_table(stack), **kw),
}
IA = dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS


@pytest.mark.parametrize(
    ("construct", "typo", "value", "suggestion"),
    [
        ("DeviceLogTable", "max_read_request_unit", 100, "max_read_request_units"),  # a capacity keyword
        ("DeviceLogTable", "warm_write_units_per_sec", 100, "warm_write_units_per_second"),
        ("DeviceLogTable", "tabel_name", "log", "table_name"),  # a table keyword
        ("RotatingTimeSeriesTables", "periode", "daily", "period"),  # a layout keyword
        ("RotatingTimeSeriesTables", "sort_keys", 3, "sort_key"),
        ("RotatingTimeSeriesTables", "retain_period", 3, "retain_periods"),  # a rotation keyword
        ("ShardMetadataTable", "table_clas", IA, "table_class"),  # a capacity keyword of the metadata table
    ],
)
def test_a_misspelt_keyword_fails_with_the_path_and_the_closest_name(construct, typo, value, suggestion):
    stack = Stack(new_app(), "Test")
    expected = f"^Test/Bad: unknown keyword argument '{typo}'; did you mean '{suggestion}'"
    with pytest.raises(ValueError, match=expected):
        CONSTRUCTS[construct](stack, **{typo: value})
    assert stack.node.try_find_child("Bad") is None
