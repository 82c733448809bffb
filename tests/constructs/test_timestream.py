"""TimestreamTable: partition key, retention, magnetic-store writes, KMS, grants, bind, validation, cdk-nag."""

from __future__ import annotations

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from cdk_ts import TimestreamTable
from cdk_ts._defaults import runtime_function
from cdk_ts_runtime._timestream import ENV_DATABASE_NAME, ENV_TABLE_NAME
from tests.support.iam import actions_of, lambda_role, policy_statements
from tests.support.nag import new_app, new_stack, unacknowledged_findings
from tests.support.problems import raises_problems


@pytest.fixture(scope="module")
def fleet():
    app, stack = new_stack()
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    table = TimestreamTable(
        stack,
        "Fleet",
        database_name="fleet",
        table_name="telemetry",
        encryption_key=key,
        partition_key_dimension="vin",
        memory_retention=Duration.hours(12),
        magnetic_retention=Duration.days(730),
    )
    writer = lambda_role(stack, "Writer")
    reader = lambda_role(stack, "Reader")
    table.grant_write_data(writer)
    table.grant_read_data(reader)
    return stack, table, key, Template.from_stack(stack)


def test_table_is_partitioned_on_the_dimension_with_retention_and_late_writes(fleet):
    stack, table, key, template = fleet
    template.has_resource_properties(
        "AWS::Timestream::Table",
        {
            "Schema": {
                "CompositePartitionKey": [{"Type": "DIMENSION", "Name": "vin", "EnforcementInRecord": "REQUIRED"}]
            },
            "RetentionProperties": {
                "MemoryStoreRetentionPeriodInHours": "12",
                "MagneticStoreRetentionPeriodInDays": "730",
            },
            "MagneticStoreWriteProperties": {
                "EnableMagneticStoreWrites": True,
                "MagneticStoreRejectedDataLocation": {
                    "S3Configuration": Match.object_like(
                        {
                            "EncryptionOption": "SSE_KMS",
                            "BucketName": stack.resolve(table.rejected_records_bucket.bucket_name),
                        }
                    )
                },
            },
        },
    )
    template.has_resource_properties(
        "AWS::Timestream::Database", {"DatabaseName": "fleet", "KmsKeyId": stack.resolve(key.key_arn)}
    )


def test_grants_are_scoped_to_the_table(fleet):
    stack, table, _key, template = fleet
    statements = policy_statements(template)
    write = next(s for s in statements if "timestream:WriteRecords" in s["Action"])
    select = next(s for s in statements if "timestream:Select" in s["Action"])
    assert write["Resource"] == select["Resource"] == stack.resolve(table.table_arn)
    assert all(s["Resource"] == "*" for s in statements if s["Action"] == "timestream:DescribeEndpoints")


def test_default_partitioning_is_by_measure_name():
    stack = Stack(new_app(), "Test")
    TimestreamTable(stack, "T", enable_magnetic_store_writes=False)
    Template.from_stack(stack).has_resource_properties(
        "AWS::Timestream::Table",
        {
            "Schema": {"CompositePartitionKey": [{"Type": "MEASURE"}]},
            "MagneticStoreWriteProperties": {"EnableMagneticStoreWrites": False},
        },
    )


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"memory_retention": Duration.hours(8767)}, "memory_retention 8767 hours must be whole hours in 1-8766"),
        ({"memory_retention": Duration.minutes(30)}, "memory_retention 0.5 hours"),
        ({"magnetic_retention": Duration.days(73001)}, "magnetic_retention 73001 days must be whole days in 1-73000"),
        ({"database_name": "a b"}, "database_name 'a b' must be 3-256 characters"),
    ],
)
def test_bad_props_fail_at_synth(props, message):
    with pytest.raises(ValueError, match=message):
        TimestreamTable(Stack(new_app(), "Test"), "T", **props)


def test_passes_cdk_nag():
    app, stack = new_stack()
    table = TimestreamTable(stack, "Fleet", partition_key_dimension="vin")
    table.grant_write_data(
        lambda_role(stack, "Writer"),
        acknowledge_nag_findings=True,
    )
    assert unacknowledged_findings(app) == []


def test_grants_leave_the_users_role_unacknowledged_by_default():
    app, stack = new_stack()
    table = TimestreamTable(stack, "Fleet", partition_key_dimension="vin")
    table.grant_read_data(lambda_role(stack, "Reader"))
    findings = unacknowledged_findings(app)
    assert any(f.startswith("AwsSolutions-IAM5[Resource::*]") and "Test/Reader/" in f for f in findings), findings


def test_every_bad_prop_is_reported_in_one_error_with_the_construct_path():
    stack = Stack(new_app(), "Test")
    raises_problems(
        lambda: TimestreamTable(stack, "T", memory_retention=Duration.minutes(90), database_name="x"), "Test/T",
        "memory_retention 1.5 hours", "database_name 'x'",
    )


def test_read_write_is_one_grant_of_both_actions_and_one_endpoint_lookup():
    stack = Stack(new_app(), "Test")
    table = TimestreamTable(stack, "Fleet", database_name="fleet", table_name="telemetry")
    role = lambda_role(stack, "Both")
    grant = table.grant_read_write_data(role)
    template = Template.from_stack(stack)
    assert len(template.find_resources("AWS::IAM::Policy")) == 1
    statements = policy_statements(template)
    on_table = [s for s in statements if s["Resource"] == stack.resolve(table.table_arn)]
    assert len(on_table) == 1
    assert set(on_table[0]["Action"]) == {"timestream:Select", "timestream:WriteRecords", "timestream:DescribeTable"}
    assert [s["Action"] for s in statements if s["Resource"] == "*"] == ["timestream:DescribeEndpoints"]
    assert grant.success


def test_rejected_records_metric_names_the_generated_database_and_table():
    # a generated name is a deploy-time value: the query names the resources, not a guess at their names
    stack = Stack(new_app(), "Test")
    generated = TimestreamTable(stack, "Generated")
    expression = stack.resolve(generated.metric_magnetic_store_rejected_records().expression)
    parts = expression["Fn::Join"][1]
    assert stack.resolve(generated.database.ref) in parts
    assert stack.resolve(generated.table.attr_name) in parts
    assert "SELECT SUM(MagneticStoreRejectedRecordCount)" in parts[0]


# ---- bind ------------------------------------------------------------------------------------------------------


def _function(stack, construct_id="Ingest"):
    return runtime_function(stack, construct_id, handler="app.handler", description="ingest", environment={})


def _data_actions(stack) -> set[str]:
    """The Timestream actions granted on something other than ``*`` (the table)."""
    return {
        action for s in policy_statements(Template.from_stack(stack)) if s["Resource"] != "*"
        for action in actions_of(s) if action.startswith("timestream:")
    }


def test_bind_sets_the_names_from_env_reads_adds_the_layer_and_grants_writes_only_by_default():
    stack = Stack(new_app(), "Test")
    fleet = TimestreamTable(stack, "Fleet", database_name="fleet", table_name="telemetry")
    grant = fleet.bind(_function(stack))
    template = Template.from_stack(stack)
    # the names are the created resources' (Ref and Fn::GetAtt), so a generated name works the same way
    template.has_resource_properties("AWS::Lambda::Function", {
        "Environment": {"Variables": {
            ENV_DATABASE_NAME: stack.resolve(fleet.database.ref),
            ENV_TABLE_NAME: stack.resolve(fleet.table.attr_name),
        }},
        "Layers": Match.any_value(),
    })
    assert isinstance(grant, iam.Grant) and grant.success
    assert _data_actions(stack) == {"timestream:WriteRecords", "timestream:DescribeTable"}
    assert [s["Action"] for s in policy_statements(template) if s["Resource"] == "*"] == [
        "timestream:DescribeEndpoints"
    ]


@pytest.mark.parametrize(
    ("access", "actions"),
    [
        ({"read": True}, {"timestream:Select", "timestream:WriteRecords", "timestream:DescribeTable"}),
        ({"read": True, "write": False}, {"timestream:Select", "timestream:DescribeTable"}),
    ],
)
def test_bind_picks_the_grant_from_read_and_write(access, actions):
    stack = Stack(new_app(), "Test")
    TimestreamTable(stack, "Fleet").bind(_function(stack), **access)
    assert _data_actions(stack) == actions


def test_bind_that_grants_nothing_names_the_construct():
    stack = Stack(new_app(), "Test")
    fleet = TimestreamTable(stack, "Fleet")
    with pytest.raises(ValueError, match=r"^Test/Fleet\.bind\(Test/Ingest\): read=False and write=False"):
        fleet.bind(_function(stack), read=False, write=False)


def test_bind_with_a_customer_key_grants_the_key_too():
    stack = Stack(new_app(), "Test")
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    TimestreamTable(stack, "Fleet", encryption_key=key).bind(_function(stack))
    on_key = [s for s in policy_statements(Template.from_stack(stack)) if s["Resource"] == stack.resolve(key.key_arn)]
    assert on_key and {"kms:Encrypt", "kms:Decrypt"} <= {a for s in on_key for a in actions_of(s)}


def test_bind_passes_cdk_nag_when_the_user_acknowledges_the_endpoint_lookup():
    app, stack = new_stack()
    TimestreamTable(stack, "Fleet", partition_key_dimension="vin").bind(
        _function(stack), read=True, acknowledge_nag_findings=True
    )
    assert unacknowledged_findings(app) == []


def test_bind_leaves_the_endpoint_lookup_finding_on_the_users_role_by_default():
    app, stack = new_stack()
    TimestreamTable(stack, "Fleet", partition_key_dimension="vin").bind(_function(stack))
    # (the report of a failed synth also lists warnings that alone do not fail it, such as the service's
    # maintenance mode: only cdk-nag's own findings count here)
    findings = [f for f in unacknowledged_findings(app) if f.startswith("AwsSolutions-")]
    assert [f.split(": ")[0] for f in findings] == [
        "AwsSolutions-IAM5[Resource::*] at Test/IngestRole/DefaultPolicy/Resource"
    ]


def test_an_imported_table_binds_the_same_names_and_grants_as_the_owner():
    # given one stack that owns the table and another that knows it by name, each binding a function
    app = new_app()
    owner = Stack(app, "Owner", env={"account": "123456789012", "region": "eu-west-1"})
    TimestreamTable(owner, "Fleet", database_name="fleet", table_name="telemetry").bind(_function(owner), read=True)
    user = Stack(app, "User", env={"account": "123456789012", "region": "eu-west-1"})
    imported = TimestreamTable.from_table_name(user, "Fleet", database_name="fleet", table_name="telemetry")
    grant = imported.bind(_function(user), read=True)
    # then the user's function gets the names as written, and the same actions on the table's ARN
    assert grant.success
    (function,) = Template.from_stack(user).find_resources("AWS::Lambda::Function").values()
    variables = function["Properties"]["Environment"]["Variables"]
    assert {k: variables[k] for k in (ENV_DATABASE_NAME, ENV_TABLE_NAME)} == {
        ENV_DATABASE_NAME: "fleet", ENV_TABLE_NAME: "telemetry"
    }
    assert _data_actions(user) == _data_actions(owner)
    on_table = [s for s in policy_statements(Template.from_stack(user)) if "timestream:Select" in actions_of(s)]
    assert [s["Resource"] for s in on_table] == [user.resolve(imported.table_arn)]
