"""A misspelt keyword on a construct fails with the construct's path and the closest keyword, creating nothing."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, ShardMetadataTable
from tests.constructs.test_sharding import audit_table
from tests.support.nag import new_app

#: Each construct with the keywords it always needs.
CONSTRUCTS = {
    "DeviceLogTable": lambda stack, **kw: DeviceLogTable(stack, "Bad", **kw),
    "RotatingTimeSeriesTables": lambda stack, **kw: RotatingTimeSeriesTables(stack, "Bad", table_prefix="bad", **kw),
    "ShardMetadataTable": lambda stack, **kw: ShardMetadataTable(stack, "Bad", main_table=audit_table(stack), **kw),
}


@pytest.mark.parametrize(
    ("construct", "typo", "suggestion"),
    [
        ("DeviceLogTable", "max_read_request_unit", "max_read_request_units"),  # a capacity keyword
        ("DeviceLogTable", "warm_write_units_per_sec", "warm_write_units_per_second"),
        ("DeviceLogTable", "tabel_name", "table_name"),  # a table keyword
        ("RotatingTimeSeriesTables", "periode", "period"),  # a layout keyword
        ("RotatingTimeSeriesTables", "sort_keys", "sort_key"),
        ("RotatingTimeSeriesTables", "retain_period", "retain_periods"),  # a rotation keyword
        ("ShardMetadataTable", "table_clas", "table_class"),  # a capacity keyword of the metadata table
    ],
)
def test_a_misspelt_keyword_fails_with_the_path_and_the_closest_name(construct, typo, suggestion):
    stack = Stack(new_app(), "Test")
    value = dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS if typo == "table_clas" else 3
    expected = f"^Test/Bad: unknown keyword argument '{typo}'; did you mean '{suggestion}'"
    with pytest.raises(ValueError, match=expected):
        CONSTRUCTS[construct](stack, **{typo: value})
    assert stack.node.try_find_child("Bad") is None
