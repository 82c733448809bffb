"""ArchiveCompaction through StreamArchiver(compaction=...): function, schedule, failures, IAM, Glue, Iceberg, nag."""

from __future__ import annotations

import json

import pytest
from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Match, Template

from cdk_ts import DeviceLogTable, StreamArchiver
from cdk_ts._assets import staged_asset_dir
from cdk_ts.archive_compaction import CompactionOptions, IcebergOptions
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


def compaction_function(template):
    (function,) = template.find_resources(
        "AWS::Lambda::Function", {"Properties": {"Handler": "cdk_ts_runtime.handlers.compaction.handler"}}
    ).values()
    return function["Properties"]


def compaction_statements(stack, template, archiver):
    role = stack.get_logical_id(archiver.compaction.function.role.node.default_child)
    return [s for s in policy_statements(template, props={"Properties": {"Roles": [{"Ref": role}]}})]


def test_the_function_runs_on_the_layers_python_and_architecture_with_the_settings(fixed):
    _app, stack, archiver, template = fixed
    props = compaction_function(template)
    assert (props["Runtime"], props["Architectures"], props["Layers"]) == ("python3.13", ["arm64"], [LAYER])
    assert (props["MemorySize"], props["Timeout"]) == (3008, 900)
    joined = stack.resolve(props["Environment"]["Variables"]["CDK_TS_COMPACTION_SETTINGS"])["Fn::Join"][1]
    bucket_ref = {"Ref": stack.get_logical_id(archiver.bucket.node.default_child)}
    text = "".join("BUCKET" if part == bucket_ref else part for part in joined)
    settings = CompactionSettings.from_json(json.loads(text))  # what the function will read
    assert settings == CompactionSettings(
        bucket="BUCKET", prefix="dynamodb/", compacted_prefix="parquet/dynamodb/", columns=COLUMNS,
        glue_database="archive_db", glue_table="archive_compacted",
    )


def test_an_hourly_schedule_passes_its_time_and_failures_land_in_an_alarmed_queue(fixed):
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
    assert compaction_function(template)["DeadLetterConfig"] == {"TargetArn": queue}
    template.has_resource_properties("AWS::Lambda::EventInvokeConfig", {"MaximumRetryAttempts": 2})
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 0,
        "Dimensions": [{"Name": "QueueName", "Value": stack.resolve(compaction.dead_letter_queue.queue_name)}],
    })
    assert set(compaction.alarms) == {"dead_letter_queue", "errors"}


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
    # a number out of range is refused where the options are made, naming it
    with pytest.raises(ValueError, match="memory_size"):
        CompactionOptions(pyarrow_layer_arn=LAYER, memory_size=20_000)


def test_only_the_compaction_function_carries_the_compaction_modules(fixed):
    _app, _stack, _archiver, template = fixed
    shared, own = staged_asset_dir(), staged_asset_dir(compaction=True)
    assert not (shared / "cdk_ts_runtime/handlers/compaction.py").exists()
    assert not (shared / "cdk_ts_runtime/_compaction.py").exists()
    assert (own / "cdk_ts_runtime/handlers/compaction.py").exists() and (own / "cdk_ts_runtime/_router.py").exists()
    keys = {f["Properties"]["Handler"]: json.dumps(f["Properties"]["Code"])
            for f in template.find_resources("AWS::Lambda::Function").values() if "Handler" in f["Properties"]}
    assert keys["cdk_ts_runtime.handlers.compaction.handler"] != keys["cdk_ts_runtime.handlers.archiver.handler"]


def test_a_layer_arn_naming_the_stacks_region_still_sets_python_and_architecture():
    _app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    arn = f"arn:aws:lambda:{stack.region}:336392948345:layer:AWSSDKPandas-Python312:9"
    StreamArchiver(stack, "Archive", source=log, compaction=CompactionOptions(pyarrow_layer_arn=arn))
    props = compaction_function(Template.from_stack(stack))
    assert (props["Runtime"], props["Architectures"]) == ("python3.12", ["x86_64"])
