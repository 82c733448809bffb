"""StreamArchiver: mapping settings, DLQ, bucket security, alarms, Glue, rotating-table wiring, errors, cdk-nag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template

from cdk_ts import (
    TTL_DELETIONS_ONLY,
    DeviceLogTable,
    FailureDestination,
    RotatingTimeSeriesTables,
    StreamArchiver,
    deduplicated_view_sql,
)
from cdk_ts_runtime._stream_consumer import STREAM_CONSUMER_ENV, StreamConsumer
from tests.support.glue import presto_view
from tests.support.iam import policy_statements
from tests.support.nag import new_app, new_stack, unacknowledged_findings
from tests.support.problems import raises_problems
from tests.support.rotating_tables import build, rotation_config


@pytest.fixture(scope="module")
def fixed():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(
        stack, "Archive", source=log, glue_database="archive_db", create_glue_database=True,
        filter_patterns=[TTL_DELETIONS_ONLY],
    )
    return app, stack, archiver, Template.from_stack(stack)


def test_mapping_reads_from_the_start_reports_partial_failures_and_sends_give_ups_to_s3(fixed):
    _app, stack, archiver, template = fixed
    assert archiver.dead_letter_queue is None
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
            "DestinationConfig": {"OnFailure": {"Destination": stack.resolve(archiver.failure_bucket.bucket_arn)}},
            "FilterCriteria": {"Filters": [{"Pattern": json.dumps(TTL_DELETIONS_ONLY)}]},
        },
    )
    template.resource_count_is("AWS::SQS::Queue", 0)


def test_the_function_may_write_failure_records_and_replay_them(fixed):
    _app, stack, archiver, template = fixed
    bucket_arn = stack.resolve(archiver.failure_bucket.bucket_arn)
    grant = next(s for s in policy_statements(template) if "s3:PutObject" in s["Action"]
                 and bucket_arn in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]))
    assert {"s3:GetObject*", "s3:List*", "s3:DeleteObject*"} <= set(grant["Action"])
    (function,) = template.find_resources(
        "AWS::Lambda::Function", {"Properties": {"Handler": "cdk_ts_runtime.handlers.archiver.handler"}}
    ).values()
    assert function["Properties"]["Environment"]["Variables"]["CDK_TS_ARCHIVE_FAILURE_BUCKET"] == stack.resolve(
        archiver.failure_bucket.bucket_name
    )


def bucket_props(stack, template, bucket):
    return template.to_json()["Resources"][stack.get_logical_id(bucket.node.default_child)]["Properties"]


def test_failure_bucket_is_encrypted_private_ssl_only_versioned_and_keeps_undone_records(fixed):
    _app, stack, archiver, template = fixed
    props = bucket_props(stack, template, archiver.failure_bucket)
    encryption = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert encryption == {"SSEAlgorithm": "AES256"}
    assert set(props["PublicAccessBlockConfiguration"].values()) == {True}
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert "LoggingConfiguration" in props
    rules = props["LifecycleConfiguration"]["Rules"]
    assert {"NoncurrentVersionExpiration": {"NoncurrentDays": 30}, "Status": "Enabled"} in rules
    assert {"ExpirationInDays": 90, "Prefix": "done/", "Status": "Enabled"} in rules
    assert all("ExpirationInDays" not in r or r.get("Prefix") == "done/" for r in rules)  # aws/lambda/ stays
    assert props["MetricsConfigurations"] == [{"Id": archiver.failure_metrics_filter_id, "Prefix": "aws/lambda/"}]
    template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "Bucket": {"Ref": stack.get_logical_id(archiver.failure_bucket.node.default_child)},
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})]
                )
            },
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
    (rule,) = props["LifecycleConfiguration"]["Rules"]
    assert [(t["StorageClass"], t["TransitionInDays"]) for t in rule["Transitions"]] == [
        ("STANDARD_IA", 30),
        ("GLACIER_IR", 180),
    ]
    assert rule["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30}
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


def test_noncurrent_versions_expire_when_configured():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(stack, "Archive", source=log, noncurrent_version_expiration=Duration.days(7))
    template = Template.from_stack(stack)
    for bucket in (archiver.bucket, archiver.failure_bucket):
        rules = bucket_props(stack, template, bucket)["LifecycleConfiguration"]["Rules"]
        assert any(r.get("NoncurrentVersionExpiration") == {"NoncurrentDays": 7} for r in rules)


def test_sqs_stays_available_as_the_failure_destination():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(stack, "Archive", source=log, failure_destination=FailureDestination.SQS)
    archiver.add_default_alarms()
    template = Template.from_stack(stack)
    assert archiver.failure_bucket is None
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {"DestinationConfig": {"OnFailure": {"Destination": stack.resolve(archiver.dead_letter_queue.queue_arn)}}},
    )
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
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 0}
    )
    assert unacknowledged_findings(app) == []


def test_a_failure_bucket_passed_in_is_the_destination():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    failures = s3.Bucket.from_bucket_name(stack, "Failures", "my-failures")
    archiver = StreamArchiver(stack, "Archive", source=log, failure_bucket=failures)
    template = Template.from_stack(stack)
    assert archiver.failure_bucket is failures
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {"DestinationConfig": {"OnFailure": {"Destination": stack.resolve(failures.bucket_arn)}}},
    )
    assert unacknowledged_findings(app) == []


def test_alarms_watch_iterator_age_failed_batches_delivery_failures_and_errors():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(stack, "Archive", source=log)
    archiver.add_default_alarms()
    template = Template.from_stack(stack)
    assert set(archiver.alarms) == {"iterator_age", "dead_letter_queue", "failure_delivery", "errors"}
    template.has_resource_properties("AWS::CloudWatch::Alarm", {"MetricName": "IteratorAge", "Threshold": 3_600_000})
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Namespace": "AWS/S3",
            "MetricName": "PutRequests",
            "Dimensions": Match.array_with([
                {"Name": "FilterId", "Value": archiver.failure_metrics_filter_id},
            ]),
            "Threshold": 0,
        },
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "DestinationDeliveryFailures", "Threshold": 0}
    )
    template.has_resource_properties("AWS::CloudWatch::Alarm", {"MetricName": "Errors", "Threshold": 0})


def glue_tables(template):
    return {t["Properties"]["TableInput"]["Name"]: t["Properties"]["TableInput"]
            for t in template.find_resources("AWS::Glue::Table").values()}


def test_glue_table_projects_table_dt_and_hour_partitions_with_the_hive_json_serde(fixed):
    template = fixed[3]
    table_input = glue_tables(template)["archive"]  # derived from the construct ID "Archive"
    assert [p["Name"] for p in table_input["PartitionKeys"]] == ["table", "dt", "hour"]
    assert {c["Type"] for c in table_input["StorageDescriptor"]["Columns"]} == {"string"}
    serde = table_input["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"]
    assert serde == "org.apache.hive.hcatalog.data.JsonSerDe"
    parameters = table_input["Parameters"]
    assert parameters["projection.enabled"] == "true"
    assert (parameters["projection.dt.type"], parameters["projection.hour.range"]) == ("date", "0,23")
    assert "table=${table}/dt=${dt}/hour=${hour}/" in json.dumps(parameters["storage.location.template"])


def test_the_deduplicated_view_is_an_athena_view_partitioned_by_the_partition_columns(fixed):
    template = fixed[3]
    view = glue_tables(template)["archive_deduplicated"]
    assert view["TableType"] == "VIRTUAL_VIEW"
    assert view["Parameters"] == {"presto_view": "true", "comment": "Presto View"}
    presto = presto_view(view)
    assert presto["schema"] == "archive_db" and presto["catalog"] == "awsdatacatalog"
    assert presto["originalSql"] == deduplicated_view_sql('"archive_db"."archive"')
    assert 'PARTITION BY "table", dt, hour, eventid' in presto["originalSql"]
    assert [c["name"] for c in presto["columns"]] == [c["Name"] for c in view["StorageDescriptor"]["Columns"]]


def test_glue_table_name_can_be_chosen():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "TelemetryArchiver", source=log, glue_database="db", create_glue_database=True)
    StreamArchiver(
        stack, "Other", source=log, glue_database="db2", create_glue_database=True, glue_table_name="device_changes"
    )
    assert {"telemetry_archiver", "telemetry_archiver_deduplicated", "device_changes",
            "device_changes_deduplicated"} == set(glue_tables(Template.from_stack(stack)))


def test_function_writes_only_under_the_prefix_of_the_archive_bucket(fixed):
    _app, stack, archiver, template = fixed
    put = next(s for s in policy_statements(template) if s["Action"] == ["s3:PutObject", "s3:AbortMultipartUpload"])
    assert json.dumps(put["Resource"]).endswith('"/dynamodb/*"]]}')


def test_rotating_tables_get_their_mapping_from_the_rotation_function():
    app, stack, tables = build(retain_periods=7, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(stack, "Archive", source=tables)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Lambda::EventSourceMapping", 0)
    consumer = rotation_config(template)[STREAM_CONSUMER_ENV]
    assert "Fn::Join" in consumer and stack.resolve(archiver.function.function_arn) in consumer["Fn::Join"][1]
    # the mappings the rotation function creates send give-ups to the same S3 failure bucket
    assert stack.resolve(archiver.failure_bucket.bucket_arn) in consumer["Fn::Join"][1]
    statements = policy_statements(template)
    create = next(s for s in statements if "lambda:CreateEventSourceMapping" in s["Action"])
    assert create["Condition"] == {
        "StringEquals": {"lambda:FunctionArn": stack.resolve(archiver.function.function_arn)}
    }
    assert "lambda:DeleteEventSourceMapping" in create["Action"]
    # on stack deletion the custom resource removes the mappings: it reads its own stack's status only
    describe = next(s for s in statements if s["Action"] == "cloudformation:DescribeStacks")
    assert describe["Resource"] == {"Ref": "AWS::StackId"}
    stream_read = next(
        s
        for s in statements
        if s["Action"] == ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"]
    )
    assert json.dumps(stream_read["Resource"]).endswith('table/telemetry_????-??-??/stream/*"]]}')
    assert unacknowledged_findings(app) == []


def test_a_table_and_rotating_tables_are_read_with_the_same_delivery_settings():
    # given two archivers with the same settings, one on a table (CloudFormation maps its stream) and one on
    # rotating tables (the rotation function maps each period table's stream)
    stack = Stack(new_app(), "Test")
    settings = {
        "batch_size": 500, "max_batching_window": Duration.seconds(30), "retry_attempts": 3,
        "max_record_age": Duration.hours(2), "filter_patterns": [TTL_DELETIONS_ONLY],
    }
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    tables = RotatingTimeSeriesTables(
        stack, "Telemetry", table_prefix="telemetry", retain_periods=7,
        stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    )
    StreamArchiver(stack, "LogArchive", source=log, **settings)
    StreamArchiver(stack, "TelemetryArchive", source=tables, **settings)
    template = Template.from_stack(stack)
    # when the rotation function's mapping request is built from the settings it is deployed with
    (mapping,) = template.find_resources("AWS::Lambda::EventSourceMapping").values()
    (rotation,) = template.find_resources(
        "AWS::Lambda::Function", {"Properties": {"Handler": "cdk_ts_runtime.handlers.rotation.handler"}}
    ).values()
    delimiter, parts = rotation["Properties"]["Environment"]["Variables"][STREAM_CONSUMER_ENV]["Fn::Join"]
    deployed = json.loads(delimiter.join(p if isinstance(p, str) else "arn:token" for p in parts))
    request = StreamConsumer(**deployed).mapping_request("arn:stream")
    # then it asks for what CloudFormation's mapping has, at least once and with the settings given
    per_mapping = ("EventSourceArn", "FunctionName", "DestinationConfig", "Enabled")
    settings_of = {k: v for k, v in request.items() if k not in per_mapping}
    assert settings_of == {k: mapping["Properties"][k] for k in settings_of}
    assert settings_of == {
        "StartingPosition": "TRIM_HORIZON", "BatchSize": 500, "MaximumBatchingWindowInSeconds": 30,
        "MaximumRetryAttempts": 3, "MaximumRecordAgeInSeconds": 7200, "BisectBatchOnFunctionError": True,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "FilterCriteria": {"Filters": [{"Pattern": json.dumps(TTL_DELETIONS_ONLY)}]},
    }


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
        ({"batch_size": 0}, "batch_size 0 must be a whole number >= 1 and <= 10000"),
        ({"max_batching_window": Duration.minutes(6)}, "max_batching_window 6 minutes must be at most 300 seconds"),
        ({"max_record_age": Duration.days(8)}, "max_record_age 8 days must be 60 seconds to 7 days"),
        ({"prefix": "no-slash"}, "prefix 'no-slash' must end with '/'"),
        ({"glue_table_name": "Bad-Name"}, "glue_table_name 'Bad-Name' is not a name Glue and Athena accept"),
        ({"failure_destination": "sqs", "failure_bucket": "x"}, "failure_bucket is for"),
        ({"failure_destination": "kafka"}, "'kafka' is not a valid FailureDestination"),
    ],
)
def test_bad_props_fail_at_synth(props, message):
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "L", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    with pytest.raises(ValueError, match=message):
        StreamArchiver(stack, "Archive", source=log, **props)


def test_fixed_table_archiver_passes_cdk_nag(fixed):
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "Archive", source=log, glue_database="archive_db", create_glue_database=True)
    assert unacknowledged_findings(app) == []


def test_the_archive_bucket_may_hold_failure_records_only_beside_a_prefixed_archive():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "L", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    shared = s3.Bucket(stack, "Shared")
    with pytest.raises(ValueError, match="failure_bucket is the archive bucket and prefix is empty"):
        StreamArchiver(stack, "Archive", source=log, bucket=shared, failure_bucket=shared, prefix="")
    archiver = StreamArchiver(stack, "Prefixed", source=log, bucket=shared, failure_bucket=shared)
    assert archiver.failure_bucket is shared


def test_the_docs_show_the_view_text_the_construct_writes():
    shown = (Path(__file__).resolve().parents[2] / "docs" / "snippets" / "stream-archiver" / "deduplicated_view.sql")
    assert deduplicated_view_sql('"<database>"."<table>"') in shown.read_text()


def test_every_bad_prop_is_reported_in_one_error_with_the_construct_path():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "L")  # no stream
    raises_problems(
        lambda: StreamArchiver(
            stack, "Archive", source=log, batch_size=0, prefix="no-slash", glue_table_name="Bad-Name"
        ),
        "Test/Archive",
        "batch_size 0", "prefix 'no-slash'", "glue_table_name 'Bad-Name'", "source Test/L has no stream",
    )
    assert stack.node.try_find_child("Archive") is None


def test_a_table_v2_with_a_stream_is_a_source():
    stack = Stack(new_app(), "Test")
    table = dynamodb.TableV2(
        stack, "V2", partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
        dynamo_stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    )
    archiver = StreamArchiver(stack, "Archive", source=table)
    Template.from_stack(stack).has_resource_properties("AWS::Lambda::EventSourceMapping", {
        "FunctionName": stack.resolve(archiver.function.function_name),
        "EventSourceArn": stack.resolve(table.table_stream_arn),
    })
