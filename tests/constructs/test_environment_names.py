"""Every environment variable a construct sets, on its own functions and through ``bind``, has the one prefix."""

from __future__ import annotations

from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from cdk_ts import (
    CompactionOptions,
    DeviceLogTable,
    RotatingTimeSeriesTables,
    ShardMetadataTable,
    StreamArchiver,
    TimestreamTable,
)
from cdk_ts_runtime import _environment
from cdk_ts_runtime._compaction_plan import ColumnSpec

LAYER = "arn:aws:lambda:us-east-1:336392948345:layer:AWSSDKPandas-Python313-Arm64:4"


def test_constructs_set_only_prefixed_names_and_never_an_old_one():
    stack = Stack(App(), "Test")
    user = lambda_.Function(
        stack, "UserFn", runtime=lambda_.Runtime.PYTHON_3_12, handler="index.handler",
        code=lambda_.Code.from_inline("def handler(e, c): pass"),
    )
    tables = RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry", retain_periods=3)
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    shards = ShardMetadataTable(stack, "Shards", main_table=log)
    fleet = TimestreamTable(stack, "Fleet")
    for construct in (tables, log, shards, fleet):
        construct.bind(user)
    StreamArchiver(
        stack, "Archive", source=log,
        compaction=CompactionOptions(pyarrow_layer_arn=LAYER, columns=(ColumnSpec("device_id", "string"),)),
    )

    functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    names = {name for f in functions for name in f["Properties"].get("Environment", {}).get("Variables", {})}
    # the user's function got every bind's variables; the rotation, archiver and compaction functions their own
    assert {
        _environment.TABLE_PREFIX, _environment.DEVICE_LOG_TABLE_NAME, _environment.SHARDED_TABLE_NAME,
        _environment.ROTATION_CONFIG, _environment.ARCHIVE_BUCKET, _environment.COMPACTION_SETTINGS,
        _environment.TIMESTREAM_DATABASE_NAME, _environment.TIMESTREAM_TABLE_NAME,
    } <= names
    assert {name for name in names if not name.startswith(_environment.PREFIX)} == set()
    assert names & set(_environment.RENAMED.values()) == set()
