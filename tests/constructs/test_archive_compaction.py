"""ArchiveCompaction through StreamArchiver(compaction=...): function, schedule, failures, IAM, Glue, Iceberg, nag."""

from __future__ import annotations

import json
import zipfile
from datetime import timedelta

import pytest
from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Match, Template

from cdk_ts import CompactionOptions, DeviceLogTable, IcebergOptions, StreamArchiver
from cdk_ts._assets import zipped_asset
from cdk_ts_runtime._compaction_plan import ColumnSpec, CompactionSettings
from tests.support.iam import actions_of, policy_statements
from tests.support.nag import new_stack, unacknowledged_findings
from tests.support.problems import raises_problems

LAYER = "arn:aws:lambda:us-east-1:336392948345:layer:AWSSDKPandas-Python313-Arm64:4"
COLUMNS = (ColumnSpec("device_id", "string", attribute="pk"), ColumnSpec("temperature_c", "decimal(6,2)"))


def build(**compaction):
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(
        stack, "Archive", source=log, glue_database="archive_db", create_glue_database=True,
        compaction=CompactionOptions(pyarrow_layer_arn=LAYER, columns=COLUMNS, **compaction),
        raw_expiration=Duration.days(30),
    )
    return app, stack, archiver


@pytest.fixture(scope="module")
def fixed():
    app, stack, archiver = build()
    archiver.compaction.add_default_alarms()
    return app, stack, archiver, Template.from_stack(stack)


def compaction_function(template, module="compaction_partition"):
    """The worker (``compaction_partition``, one partition a message) or the planner (``compaction``)."""
    (function,) = template.find_resources(
        "AWS::Lambda::Function", {"Properties": {"Handler": f"cdk_ts_runtime.handlers.{module}.handler"}}
    ).values()
    return function["Properties"]


def compaction_statements(stack, template, archiver):
    role = stack.get_logical_id(archiver.compaction.function.role.node.default_child)
    return [s for s in policy_statements(template, props={"Properties": {"Roles": [{"Ref": role}]}})]


def test_the_function_runs_on_the_layers_python_and_architecture_with_the_settings(fixed):
    _app, stack, archiver, template = fixed
    props = compaction_function(template)
    assert (props["Runtime"], props["Architectures"], props["Layers"]) == ("python3.13", ["arm64"], [LAYER])
    assert (props["MemorySize"], props["Timeout"], props["EphemeralStorage"]) == (3008, 900, {"Size": 10240})
    joined = stack.resolve(props["Environment"]["Variables"]["CDK_TS_COMPACTION_SETTINGS"])["Fn::Join"][1]
    bucket_ref = {"Ref": stack.get_logical_id(archiver.bucket.node.default_child)}
    text = "".join("BUCKET" if part == bucket_ref else part for part in joined)
    settings = CompactionSettings.from_json(json.loads(text))  # what the function will read
    assert settings == CompactionSettings(
        bucket="BUCKET", prefix="dynamodb/", compacted_prefix="parquet/dynamodb/", columns=COLUMNS,
        glue_database="archive_db", glue_table="archive_compacted", raw_retention=timedelta(days=30),
    )


def test_an_hourly_schedule_runs_the_planner_and_its_failures_land_in_an_alarmed_queue(fixed):
    _app, stack, archiver, template = fixed
    compaction = archiver.compaction
    queue = stack.resolve(compaction.dead_letter_queue.queue_arn)
    template.has_resource_properties("AWS::Events::Rule", {
        "ScheduleExpression": "cron(20 * * * ? *)",
        "Targets": [Match.object_like({
            "InputTransformer": {"InputPathsMap": {"time": "$.time"}, "InputTemplate": '{"time":<time>}'},
            "DeadLetterConfig": {"Arn": queue},
            "RetryPolicy": {"MaximumRetryAttempts": 8, "MaximumEventAgeInSeconds": 7200},
        })],
    })
    (target,) = template.find_resources("AWS::Events::Rule")[
        stack.get_logical_id(compaction.rule.node.default_child)]["Properties"]["Targets"]
    assert target["Arn"] == stack.resolve(compaction.planner_function.function_arn)
    assert compaction_function(template, "compaction")["DeadLetterConfig"] == {"TargetArn": queue}
    template.has_resource_properties("AWS::Lambda::EventInvokeConfig", {"MaximumRetryAttempts": 2})
    for dead_letters in (compaction.dead_letter_queue, compaction.partition_dead_letter_queue):
        template.has_resource_properties("AWS::CloudWatch::Alarm", {
            "MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 0,
            "Dimensions": [{"Name": "QueueName", "Value": stack.resolve(dead_letters.queue_name)}],
        })
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "Namespace": "cdk-ts", "MetricName": "PartitionsOverEnvelope", "Threshold": 0,
        "Dimensions": [{"Name": "FunctionName", "Value": stack.resolve(compaction.planner_function.function_name)}],
    })
    assert set(compaction.alarms) == {"dead_letter_queue", "errors", "failed_partitions", "partitions_over_envelope"}


def test_each_partition_is_a_message_of_a_fifo_queue_compacted_one_at_a_time_with_bounded_concurrency(fixed):
    _app, stack, archiver, template = fixed
    compaction = archiver.compaction
    queues = template.find_resources("AWS::SQS::Queue")
    queue = queues[stack.get_logical_id(compaction.partition_queue.node.default_child)]["Properties"]
    dead = queues[stack.get_logical_id(compaction.partition_dead_letter_queue.node.default_child)]["Properties"]
    assert (queue["FifoQueue"], dead["FifoQueue"]) == (True, True)  # a FIFO queue's DLQ must be FIFO
    for name in (queue["QueueName"], dead["QueueName"]):  # SQS: FIFO names end in .fifo, 80 characters at most
        assert name.endswith(".fifo") and len(name) <= 80 and name.startswith("Test"), name
    assert queue["VisibilityTimeout"] == 6 * 900  # six times the function's timeout
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": stack.resolve(compaction.partition_dead_letter_queue.queue_arn), "maxReceiveCount": 3}
    assert queue["SqsManagedSseEnabled"] and dead["SqsManagedSseEnabled"]
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {
        "EventSourceArn": stack.resolve(compaction.partition_queue.queue_arn),
        "FunctionName": stack.resolve(compaction.function.function_name),
        "BatchSize": 1, "ScalingConfig": {"MaximumConcurrency": 5},
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
    })
    for resource in (compaction.partition_queue, compaction.partition_dead_letter_queue):
        template.has_resource_properties("AWS::SQS::QueuePolicy", {
            "Queues": [stack.resolve(resource.queue_url)],
            "PolicyDocument": {"Statement": Match.array_with([Match.object_like({
                "Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})])},
        })
    planner = compaction_function(template, "compaction")["Environment"]["Variables"]
    assert stack.resolve(planner["CDK_TS_COMPACTION_QUEUE_URL"]) == stack.resolve(compaction.partition_queue.queue_url)
    envelope = json.loads(planner["CDK_TS_COMPACTION_ENVELOPE"])
    assert envelope == compaction.envelope.as_json() and envelope["max_raw_bytes"] > 0
    # no DuckDB layer: the function sorts in memory, so its memory sets the envelope
    assert compaction.envelope.reason.startswith("memory")
    assert "CDK_TS_COMPACTION_QUEUE_URL" not in compaction_function(template)["Environment"]["Variables"]


def test_the_planner_lists_reads_manifests_and_sends_messages_only(fixed):
    _app, stack, archiver, template = fixed
    role = stack.get_logical_id(archiver.compaction.planner_function.role.node.default_child)
    statements = policy_statements(template, props={"Properties": {"Roles": [{"Ref": role}]}})
    actions = {a for s in statements for a in actions_of(s)}
    assert actions - {"logs:CreateLogStream", "logs:PutLogEvents"} == {
        "s3:GetObject", "s3:ListBucket", "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}
    reads = next(s for s in statements if actions_of(s) == ["s3:GetObject"])
    bucket = stack.resolve(archiver.bucket.bucket_arn)
    assert reads["Resource"] == {"Fn::Join": ["", [bucket, "/parquet/dynamodb/_manifests/*"]]}


def test_the_role_reads_raw_objects_and_writes_only_under_the_compacted_prefix(fixed):
    _app, stack, archiver, template = fixed
    statements = compaction_statements(stack, template, archiver)
    by_resource = {}
    for statement in statements:
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        for resource in resources:
            by_resource.setdefault(json.dumps(resource), set()).update(actions_of(statement))
    bucket = stack.resolve(archiver.bucket.bucket_arn)
    raw = json.dumps({"Fn::Join": ["", [bucket, "/dynamodb/*"]]})
    compacted = json.dumps({"Fn::Join": ["", [bucket, "/parquet/dynamodb/*"]]})
    assert by_resource[raw] == {"s3:GetObject"}
    assert by_resource[compacted] == {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
    listing = next(s for s in statements if "s3:ListBucket" in actions_of(s))
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["dynamodb/*", "parquet/dynamodb/*"]}}
    glue = next(s for s in statements if "glue:UpdatePartition" in actions_of(s))
    assert set(actions_of(glue)) == {"glue:GetTable", "glue:GetPartition", "glue:CreatePartition",
                                     "glue:UpdatePartition"}
    assert any("table/archive_db/archive_compacted" in json.dumps(r) for r in glue["Resource"])
    assert not any(a.endswith("*") for s in statements for a in actions_of(s) if a.startswith(("s3:", "glue:")))


def test_the_parquet_table_is_typed_and_partitioned_like_the_compaction_and_the_view_unions_both_layers(fixed):
    _app, _stack, archiver, template = fixed
    tables = {t["Properties"]["TableInput"]["Name"]: t["Properties"]["TableInput"]
              for t in template.find_resources("AWS::Glue::Table").values()}
    parquet = tables["archive_compacted"]
    assert [k["Name"] for k in parquet["PartitionKeys"]] == ["table", "dt", "hour"]
    assert "PartitionProjection" not in json.dumps(parquet) and "projection.enabled" not in parquet["Parameters"]
    descriptor = parquet["StorageDescriptor"]
    assert descriptor["SerdeInfo"]["SerializationLibrary"].endswith("ParquetHiveSerDe")
    types = {c["Name"]: c["Type"] for c in descriptor["Columns"]}
    assert (types["sequencenumber"], types["approximatecreationdatetime"], types["temperature_c"]) == (
        "string", "timestamp", "decimal(6,2)")
    assert tables["archive_all"]["TableType"] == "VIRTUAL_VIEW"
    assert archiver.compaction.catalog.view_name == "archive_all"


def test_raw_objects_expire_under_the_archive_prefix_only(fixed):
    _app, stack, archiver, template = fixed
    bucket = template.to_json()["Resources"][stack.get_logical_id(archiver.bucket.node.default_child)]
    rules = bucket["Properties"]["LifecycleConfiguration"]["Rules"]
    assert {"ExpirationInDays": 30, "Prefix": "dynamodb/", "Status": "Enabled"} in rules


def test_the_app_is_cdk_nag_clean():
    app, _stack, archiver = build()
    archiver.compaction.add_default_alarms()
    assert unacknowledged_findings(app) == []


def test_the_iceberg_option_creates_the_table_bucket_namespace_and_partitioned_table_and_grants_them():
    app, stack, archiver = build(iceberg=IcebergOptions(table_bucket_name="archive-tables"), granularity="day")
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::S3Tables::TableBucket", {
        "TableBucketName": "archive-tables", "EncryptionConfiguration": {"SSEAlgorithm": "AES256"}})
    template.has_resource_properties("AWS::S3Tables::Namespace", {"Namespace": "archive"})
    (table,) = template.find_resources("AWS::S3Tables::Table").values()
    metadata = table["Properties"]["IcebergMetadata"]
    fields = {f["Name"]: f for f in metadata["IcebergSchema"]["SchemaFieldList"]}
    assert (fields["approximatecreationdatetime"]["Type"], fields["temperature_c"]["Type"]) == (
        "timestamptz", "decimal(6,2)")
    assert [(p["Name"], p["Transform"], p["SourceId"]) for p in metadata["IcebergPartitionSpec"]["Fields"]] == [
        ("table", "identity", fields["table"]["Id"]), ("dt", "identity", fields["dt"]["Id"])]
    env = compaction_function(template)["Environment"]["Variables"]
    assert "CDK_TS_COMPACTION_ICEBERG" in env
    statements = compaction_statements(stack, template, archiver)
    assert any("s3tables:UpdateTableMetadataLocation" in actions_of(s) for s in statements)
    names = [t["Properties"]["TableInput"]["Name"] for t in template.find_resources("AWS::Glue::Table").values()]
    assert "archive_compacted" not in names  # the Iceberg table replaces the Parquet layer's Glue table
    assert unacknowledged_findings(app) == []


def test_bad_options_are_refused_together_naming_each():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    with pytest.raises(ValueError, match="Test/Archive: raw_expiration 2 days must exceed the compaction's lookback"):
        StreamArchiver(stack, "Archive", source=log, raw_expiration=Duration.days(2),
                       compaction=CompactionOptions(pyarrow_layer_arn=LAYER))
    raises_problems(
        lambda: StreamArchiver(
            stack, "Archive2", source=log,
            compaction=CompactionOptions(pyarrow_layer_arn="arn:aws:lambda:us-east-1:1:layer:pyarrow:1",
                                         columns=[ColumnSpec("v", "float")]),
        ),
        "Test/Archive2/Compaction", "is not an AWS SDK for pandas layer", "type 'float' must be",
    )
    # Lambda's longest timeout is 15 minutes; the message shows the duration as it was given
    with pytest.raises(ValueError, match="Test/Archive3/Compaction: timeout 16 minutes must be at most 15 minutes"):
        StreamArchiver(stack, "Archive3", source=log,
                       compaction=CompactionOptions(pyarrow_layer_arn=LAYER, timeout=Duration.minutes(16)))
    # a number out of range is refused where the options are made, naming it
    with pytest.raises(ValueError, match="memory_size"):
        CompactionOptions(pyarrow_layer_arn=LAYER, memory_size=20_000)
    # MaximumConcurrency is 2-1,000 (ScalingConfig); /tmp 512-10,240 MB
    with pytest.raises(ValueError, match="max_concurrency"):
        CompactionOptions(pyarrow_layer_arn=LAYER, max_concurrency=1)
    with pytest.raises(ValueError, match="ephemeral_storage_mib"):
        CompactionOptions(pyarrow_layer_arn=LAYER, ephemeral_storage_mib=20_000)


def _names_in(archive) -> set[str]:
    with zipfile.ZipFile(archive) as bundle:
        return set(bundle.namelist())


def test_only_the_compaction_function_carries_the_compaction_modules(fixed):
    _app, _stack, _archiver, template = fixed
    shared, own = (_names_in(zipped_asset(compaction=compaction)[0]) for compaction in (False, True))
    assert "cdk_ts_runtime/handlers/compaction.py" not in shared
    assert "cdk_ts_runtime/_compaction.py" not in shared
    assert "cdk_ts_runtime/handlers/compaction.py" in own and "cdk_ts_runtime/_router.py" in own
    keys = {f["Properties"]["Handler"]: json.dumps(f["Properties"]["Code"])
            for f in template.find_resources("AWS::Lambda::Function").values() if "Handler" in f["Properties"]}
    assert keys["cdk_ts_runtime.handlers.compaction.handler"] != keys["cdk_ts_runtime.handlers.archiver.handler"]
    assert keys["cdk_ts_runtime.handlers.compaction_partition.handler"] == keys[
        "cdk_ts_runtime.handlers.compaction.handler"]


def test_a_layer_arn_naming_the_stacks_region_still_sets_python_and_architecture():
    _app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    arn = f"arn:aws:lambda:{stack.region}:336392948345:layer:AWSSDKPandas-Python312:9"
    StreamArchiver(stack, "Archive", source=log, compaction=CompactionOptions(pyarrow_layer_arn=arn))
    props = compaction_function(Template.from_stack(stack))
    assert (props["Runtime"], props["Architectures"]) == ("python3.12", ["x86_64"])
