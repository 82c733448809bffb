"""The table under "Environment variables each `bind` sets" (docs/constructs/index.md) is what `bind` sets.

Each construct is bound to a function of its own in one synthesized stack; the variable names in each function's
template environment are compared with the page's rows for that construct, both ways.
"""

from __future__ import annotations

import re

from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, ShardMetadataTable, StreamArchiver, TimestreamTable
from tests.support.docs import DOCS
from tests.support.nag import new_app

HEADING = "## Environment variables each `bind` sets"


def documented(text: str) -> dict[str, set[str]]:
    """Construct -> the variables the section's table lists for it (an empty first cell continues the row above)."""
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    table: dict[str, set[str]] = {}
    construct = None
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not re.fullmatch(r"`CDK_TS_\w+`", cells[1]):
            continue
        construct = cells[0].strip("`") or construct
        table.setdefault(construct, set()).add(cells[1].strip("`"))
    return table


def bound() -> dict[str, set[str]]:
    """Construct -> the variables ``bind`` set on a function of its own, read from the synthesized template."""
    stack = Stack(new_app(), "Bound")
    stream = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES
    log = DeviceLogTable(stack, "DeviceLog", stream=stream)
    constructs = {
        "RotatingTimeSeriesTables": RotatingTimeSeriesTables(stack, "Readings", table_prefix="readings"),
        "DeviceLogTable": log,
        "ShardMetadataTable": ShardMetadataTable(stack, "Shards", main_table=log),
        "StreamArchiver": StreamArchiver(stack, "Archiver", source=log),
        "TimestreamTable": TimestreamTable(stack, "Fleet", database_name="fleet", table_name="telemetry"),
    }
    for name, construct in constructs.items():
        function = lambda_.Function(stack, f"{name}Fn", runtime=lambda_.Runtime.PYTHON_3_12, handler="app.handler",
                                    code=lambda_.Code.from_inline("def handler(event, context):\n    return {}\n"))
        construct.bind(function)
    functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
    result = {}
    for name in constructs:
        (props,) = [r["Properties"] for logical, r in functions.items() if logical.startswith(f"{name}Fn")]
        result[name] = set(props.get("Environment", {}).get("Variables", {}))
    return result


def test_the_page_lists_exactly_the_variables_bind_sets_for_each_construct():
    assert documented((DOCS / "constructs" / "index.md").read_text()) == bound()


def test_the_table_reader_sees_a_missing_row():
    text = (f"{HEADING}\n\n| construct | variable | value | read by |\n|---|---|---|---|\n"
            "| `DeviceLogTable` | `CDK_TS_DEVICE_LOG_TABLE_NAME` | name | x |\n| | `CDK_TS_OTHER` | y | |\n\n## Next\n"
            "| `Else` | `CDK_TS_NOT_IN_THE_SECTION` | | |\n")
    assert documented(text) == {"DeviceLogTable": {"CDK_TS_DEVICE_LOG_TABLE_NAME", "CDK_TS_OTHER"}}
