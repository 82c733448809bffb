"""StreamArchiver: mapping settings, DLQ, bucket security, alarms, Glue, rotating-table wiring, errors, cdk-nag."""

from __future__ import annotations

import json

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Match, Template

from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, StreamArchiver
from cdk_ts.stream_archiver import TTL_DELETIONS_ONLY
from cdk_ts_runtime.stream_consumer import STREAM_CONSUMER_ENV
from tests.support.nag import new_app, unacknowledged_findings


@pytest.fixture(scope="module")
def fixed():
    app = new_app()
    stack = Stack(app, "Test")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(
        stack, "Archive", source=log, glue_database_name="archive_db", filter_patterns=[TTL_DELETIONS_ONLY]
    )
    return app, stack, archiver, Template.from_stack(stack)


def test_mapping_reads_from_the_start_reports_partial_failures_and_sends_give_ups_to_the_dlq(fixed):
    _app, stack, archiver, template = fixed
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "StartingPosition": "TRIM_HORIZON",
            "BatchSize": 1000,
            "MaximumBatchingWindowInSeconds": 60,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "BisectBatchOnFunctionError": True,
            "MaximumRetryAttempts": 10,
            "MaximumRecordAgeInSeconds": 86400,
            "DestinationConfig": {"OnFailure": {"Destination": stack.resolve(archiver.dead_letter_queue.queue_arn)}},
            "FilterCriteria": {"Filters": [{"Pattern": json.dumps(TTL_DELETIONS_ONLY)}]},
        },
    )


def test_default_bucket_is_encrypted_private_ssl_only_versioned_logged_and_tiered(fixed):
    _app, stack, archiver, template = fixed
    bucket_id = stack.get_logical_id(archiver.bucket.node.default_child)
    props = template.to_json()["Resources"][bucket_id]["Properties"]
    encryption = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert encryption == {"SSEAlgorithm": "AES256"}
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert "LoggingConfiguration" in props
    transitions = props["LifecycleConfiguration"]["Rules"][0]["Transitions"]
    assert [(t["StorageClass"], t["TransitionInDays"]) for t in transitions] == [
        ("STANDARD_IA", 30),
        ("GLACIER_IR", 180),
    ]
    template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "Bucket": {"Ref": bucket_id},
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})]
                )
            },
        },
    )


def test_dead_letter_queue_is_encrypted_and_ssl_only(fixed):
    template = fixed[3]
    template.has_resource_properties(
        "AWS::SQS::Queue", {"SqsManagedSseEnabled": True, "MessageRetentionPeriod": 1209600}
    )
    template.has_resource_properties(
        "AWS::SQS::QueuePolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})]
                )
            }
        },
    )


def test_alarms_watch_iterator_age_dlq_depth_and_errors(fixed):
    _app, _stack, archiver, template = fixed
    assert set(archiver.alarms) == {"iterator_age", "dead_letter_queue", "errors"}
    template.has_resource_properties("AWS::CloudWatch::Alarm", {"MetricName": "IteratorAge", "Threshold": 3_600_000})
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 0}
    )
    template.has_resource_properties("AWS::CloudWatch::Alarm", {"MetricName": "Errors", "Threshold": 0})


def test_glue_table_projects_table_dt_and_hour_partitions(fixed):
    template = fixed[3]
    (table,) = template.find_resources("AWS::Glue::Table").values()
    table_input = table["Properties"]["TableInput"]
    assert [p["Name"] for p in table_input["PartitionKeys"]] == ["table", "dt", "hour"]
    parameters = table_input["Parameters"]
    assert parameters["projection.enabled"] == "true"
    assert (parameters["projection.dt.type"], parameters["projection.hour.range"]) == ("date", "0,23")
    assert "table=${table}/dt=${dt}/hour=${hour}/" in json.dumps(parameters["storage.location.template"])


def test_function_writes_only_under_the_prefix(fixed):
    template = fixed[3]
    statements = [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    put = next(s for s in statements if "s3:PutObject" in s["Action"])
    assert json.dumps(put["Resource"]).endswith('"/dynamodb/*"]]}')


def test_rotating_tables_get_their_mapping_from_the_rotation_function():
    app = new_app()
    stack = Stack(app, "Test")
    tables = RotatingTimeSeriesTables(
        stack,
        "Telemetry",
        table_prefix="telemetry",
        retain_periods=7,
        stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    )
    archiver = StreamArchiver(stack, "Archive", source=tables)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Lambda::EventSourceMapping", 0)
    rotation = next(
        iter(
            template.find_resources(
                "AWS::Lambda::Function", {"Properties": {"Handler": "cdk_ts_runtime.handlers.rotation.handler"}}
            ).values()
        )
    )
    consumer = rotation["Properties"]["Environment"]["Variables"][STREAM_CONSUMER_ENV]
    assert "Fn::Join" in consumer and stack.resolve(archiver.function.function_arn) in consumer["Fn::Join"][1]
    statements = [
        s
        for p in template.find_resources("AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    create = next(s for s in statements if "lambda:CreateEventSourceMapping" in s["Action"])
    assert create["Condition"] == {
        "StringEquals": {"lambda:FunctionArn": stack.resolve(archiver.function.function_arn)}
    }
    stream_read = next(
        s
        for s in statements
        if s["Action"] == ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"]
    )
    assert json.dumps(stream_read["Resource"]).endswith('table/telemetry_????-??-??/stream/*"]]}')
    assert unacknowledged_findings(app) == []


@pytest.mark.parametrize(
    ("make_source", "message"),
    [
        (
            lambda s: dynamodb.Table(
                s, "T", partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING)
            ),
            "has no stream",
        ),
        (lambda s: DeviceLogTable(s, "L"), "has no stream"),
        (
            lambda s: RotatingTimeSeriesTables(s, "R", table_prefix="tele", retain_periods=3),
            "has no stream: pass stream=",
        ),
        (lambda s: "not a table", "is not a DynamoDB table"),
    ],
)
def test_sources_without_a_stream_fail_at_synth(make_source, message):
    stack = Stack(new_app(), "Test")
    with pytest.raises((ValueError, TypeError), match=message):
        StreamArchiver(stack, "Archive", source=make_source(stack))


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"batch_size": 0}, "batch_size 0 must be 1-10000"),
        ({"max_batching_window": Duration.minutes(6)}, "max_batching_window 6 minutes must be at most 300 seconds"),
        ({"max_record_age": Duration.days(8)}, "max_record_age 8 days must be 60 seconds to 7 days"),
        ({"prefix": "no-slash"}, "prefix 'no-slash' must end with '/'"),
    ],
)
def test_bad_props_fail_at_synth(props, message):
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "L", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    with pytest.raises(ValueError, match=message):
        StreamArchiver(stack, "Archive", source=log, **props)


def test_fixed_table_archiver_passes_cdk_nag(fixed):
    app = new_app()
    stack = Stack(app, "Test")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "Archive", source=log, glue_database_name="archive_db")
    assert unacknowledged_findings(app) == []
