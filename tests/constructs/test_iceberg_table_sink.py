"""IcebergTableSink's template: cdk-nag and cfn-lint clean, least-privilege IAM, the Firehose and S3 Tables wiring."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Match, Template

from cdk_ts import CompactionOptions, DeviceLogTable, StreamArchiver
from cdk_ts.archive.iceberg_table_sink import IcebergTableSink, sink_fields
from cdk_ts_runtime._firehose_iceberg import ENV_ROUTE, IcebergRoute, SinkMode
from tests.support.nag import new_app, new_stack, unacknowledged_findings

REPO = Path(__file__).resolve().parents[2]
PANDAS = "arn:aws:lambda:eu-west-1:336392948345:layer:AWSSDKPandas-Python313-Arm64:4"
COLUMNS = [{"name": "temperature", "type": "decimal(10,2)"}, {"name": "status"}]


def table(stack, construct_id="Readings"):
    return dynamodb.Table(stack, construct_id, partition_key=dynamodb.Attribute(
        name="pk", type=dynamodb.AttributeType.STRING), stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True))


def sink_stack(**props):
    app, stack = new_stack()
    sink = IcebergTableSink(stack, "Sink", table_bucket_name="telemetry-sink", source=table(stack), columns=COLUMNS,
                            **props)
    sink.add_default_alarms()
    return app, stack, sink


@pytest.fixture(scope="module")
def changes():
    _app, stack, sink = sink_stack()
    return stack, sink, Template.from_stack(stack)


def policy_statements(template: Template, role_prefix: str) -> list[dict]:
    return [s for name, policy in template.find_resources("AWS::IAM::Policy").items() if name.startswith(role_prefix)
            for s in policy["Properties"]["PolicyDocument"]["Statement"]]


@pytest.mark.slow  # cdk-nag over one stack: ~25 s on the shared VM
def test_passes_cdk_nag_with_every_acknowledgement_reasoned():
    app, _stack, sink = sink_stack()
    assert unacknowledged_findings(app) == []
    reasons = {k: v for c in sink.node.find_all() for e in c.node.metadata
               if e.type == "aws:cdk:acknowledged-rules" for k, v in e.data.items() if "AwsSolutions" in k}
    for rule in ("AwsSolutions-IAM5[Resource::*]", "AwsSolutions-KDF1"):
        assert any(key.endswith(rule) for key in reasons), (rule, sorted(reasons))
    for rule, reason in reasons.items():
        assert len(reason) >= 30 and not re.search(r"\b(needed|required|todo)\b", reason, re.I), (rule, reason)


@pytest.mark.slow  # cfn-lint over one stack: ~8 s
def test_the_template_is_cfn_lint_clean(changes, tmp_path):
    _stack, _sink, template = changes
    path = tmp_path / "Sink.template.json"
    path.write_text(json.dumps(template.to_json()))
    result = subprocess.run(
        [str(Path(sys.executable).with_name("cfn-lint")), "--config-file", str(REPO / ".cfnlintrc.yaml"), "--",
         str(path)], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_firehose_may_touch_only_the_sinks_own_resources_and_star_only_where_iam_has_no_resources(changes):
    stack, sink, template = changes
    statements = policy_statements(template, "SinkDeliveryRole")
    star = [s for s in statements if s["Resource"] == "*"]
    assert [s["Action"] for s in star] == ["lakeformation:GetDataAccess"]
    glue = next(s for s in statements if "glue:UpdateTable" in s["Action"])
    resolved = json.dumps(glue["Resource"])
    assert "*" not in resolved and resolved.endswith('table/s3tablescatalog/telemetry-sink/archive/changes"]]}]')
    kinesis = next(s for s in statements if "kinesis:GetRecords" in s["Action"])
    assert kinesis["Resource"] == stack.resolve(sink.stream.stream_arn)
    writes = next(s for s in statements if "s3:PutObject" in s["Action"])
    assert writes["Resource"] == stack.resolve(sink.error_bucket.arn_for_objects("iceberg-errors/*"))
    invoke = next(s for s in statements if "lambda:InvokeFunction" in s["Action"])
    assert invoke["Resource"] == stack.resolve(sink.function.function_arn)


def test_every_change_is_appended_to_an_hourly_partitioned_table_keyed_by_eventid(changes):
    stack, sink, template = changes
    template.has_resource_properties("AWS::KinesisFirehose::DeliveryStream", {
        "DeliveryStreamType": "KinesisStreamAsSource",
        "KinesisStreamSourceConfiguration": {"KinesisStreamARN": stack.resolve(sink.stream.stream_arn)},
        "IcebergDestinationConfiguration": Match.object_like({
            "AppendOnly": True,
            "CatalogConfiguration": {"CatalogArn": stack.resolve(sink.catalog_arn)},
            "DestinationTableConfigurationList": [{
                "DestinationDatabaseName": "archive", "DestinationTableName": "changes",
                "UniqueKeys": ["eventid"], "S3ErrorOutputPrefix": "iceberg-errors/"}],
            "s3BackupMode": "FailedDataOnly",
            "BufferingHints": {"IntervalInSeconds": 300, "SizeInMBs": 128},
        }),
    })
    (table_props,) = [r["Properties"] for r in template.find_resources("AWS::S3Tables::Table").values()]
    schema = table_props["IcebergMetadata"]["IcebergSchema"]["SchemaFieldList"]
    route = IcebergRoute("archive", "changes", SinkMode.CHANGES, tuple(COLUMNS))
    assert [(f["Name"], f["Type"]) for f in schema] == [(n, t) for n, t, _r in sink_fields(route.mode, route.columns)]
    partitions = table_props["IcebergMetadata"]["IcebergPartitionSpec"]["Fields"]
    assert [f["Name"] for f in partitions] == ["table", "dt", "hour"]


def test_the_function_reads_the_route_the_stream_delivers_to(changes):
    stack, sink, template = changes
    environment = template.find_resources("AWS::Lambda::Function")[
        stack.get_logical_id(sink.function.node.default_child)]["Properties"]["Environment"]["Variables"]
    route = IcebergRoute.from_env({ENV_ROUTE: environment[ENV_ROUTE]})
    assert (route.database, route.table, route.mode) == ("archive", "changes", SinkMode.CHANGES)
    assert [c.name for c in route.columns] == ["temperature", "status"]


def test_the_source_table_streams_its_changes_to_the_sinks_stream_in_microseconds(changes):
    stack, sink, template = changes
    template.has_resource_properties("AWS::DynamoDB::Table", {"KinesisStreamSpecification": {
        "StreamArn": stack.resolve(sink.stream.stream_arn), "ApproximateCreationDateTimePrecision": "MICROSECOND"}})


def test_latest_images_update_and_delete_by_table_and_keys_without_append_only():
    _app, _stack, sink = sink_stack(mode="latest", table_name="items")
    template = Template.from_stack(Stack.of(sink))
    template.has_resource_properties("AWS::KinesisFirehose::DeliveryStream", {
        "IcebergDestinationConfiguration": Match.object_like({
            "AppendOnly": False,
            "DestinationTableConfigurationList": [Match.object_like({"UniqueKeys": ["table", "keys"]})]})})
    (table_props,) = [r["Properties"] for r in template.find_resources("AWS::S3Tables::Table").values()]
    assert [f["Name"] for f in table_props["IcebergMetadata"]["IcebergPartitionSpec"]["Fields"]] == ["table"]


def test_firehose_waits_for_the_table_and_its_lake_formation_grant(changes):
    stack, sink, template = changes
    (stream,) = template.find_resources("AWS::KinesisFirehose::DeliveryStream").values()
    first = {stack.get_logical_id(sink.table), stack.get_logical_id(sink.lake_formation_grant)}
    assert first <= set(stream["DependsOn"])
    template.has_resource_properties("AWS::LakeFormation::PrincipalPermissions", {
        "Resource": {"Table": {
            "CatalogId": {"Fn::Join": ["", [{"Ref": "AWS::AccountId"}, ":s3tablescatalog/telemetry-sink"]]},
            "DatabaseName": "archive", "Name": "changes"}},
        "Permissions": ["DESCRIBE", "SELECT", "INSERT", "DELETE", "ALTER"]})


def test_default_alarms_watch_freshness_failed_rows_and_the_function(changes):
    _stack, sink, template = changes
    assert set(sink.alarms) == {"data_freshness", "failed_rows", "transform_errors"}
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "DeliveryToIceberg.DataFreshness", "Namespace": "AWS/Firehose", "Threshold": 900})
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "DeliveryToIceberg.FailedRowCount", "Threshold": 0})


def test_an_archiver_that_also_compacts_the_table_is_refused_at_synth():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "Archiver", source=log, compaction=CompactionOptions(pyarrow_layer_arn=PANDAS))
    IcebergTableSink(stack, "Sink", table_bucket_name="telemetry-sink", source=log)
    with pytest.raises(RuntimeError, match="Test/Archiver compacts Test/Log/Table while Test/Sink streams it"):
        app.synth()


def test_an_archiver_without_compaction_keeps_the_raw_layer_beside_the_sink():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "Archiver", source=log)
    IcebergTableSink(stack, "Sink", table_bucket_name="telemetry-sink", source=log)
    app.synth()  # raw JSON Lines from DynamoDB Streams, columnar rows from Kinesis: both from one table


@pytest.mark.parametrize(("props", "message"), [
    ({"table_name": "my-table"}, "table 'my-table' must be 1-255 of"),
    ({"buffering_interval": Duration.minutes(20)}, "buffering_interval 1200 s must be 0-900 seconds"),
    ({"buffering_size_mib": 256}, "buffering_size_mib 256 must be a whole number >= 1 and <= 128"),
    ({"error_prefix": "errors"}, "error_prefix 'errors' must end with '/'"),
    ({"table_bucket_name": "ab"}, "table_bucket_name 'ab' must be 3-63"),
    ({"table_bucket_name": "Telemetry_Sink"}, "table_bucket_name 'Telemetry_Sink' must be 3-63 of"),
])
def test_bad_props_fail_at_synth_naming_the_value(props, message):
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match=re.escape("Test/Sink") + ".*" + re.escape(message)):
        IcebergTableSink(stack, "Sink", **{"table_bucket_name": "telemetry-sink", **props})


def test_a_table_v2_source_is_refused_with_the_way_to_connect_it():
    stack = Stack(new_app(), "Test")
    global_table = dynamodb.TableV2(stack, "Global", partition_key=dynamodb.Attribute(
        name="pk", type=dynamodb.AttributeType.STRING))
    with pytest.raises(ValueError, match="source Test/Global is not a dynamodb.Table of this app: connect"):
        IcebergTableSink(stack, "Sink", table_bucket_name="telemetry-sink", source=global_table)
