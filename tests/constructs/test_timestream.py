"""TimestreamTable: partition key, retention, magnetic-store writes, KMS, grants, validation, cdk-nag."""

from __future__ import annotations

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from cdk_ts import TimestreamTable
from tests.support.iam import lambda_role, policy_statements
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


def test_old_grant_names_warn_and_still_grant():
    stack = Stack(new_app(), "Test")
    table = TimestreamTable(stack, "Fleet")
    role = lambda_role(stack, "Writer")
    with pytest.warns(DeprecationWarning, match="use grant_write_data"):
        assert isinstance(table.grant_write(role), iam.Grant)
    with pytest.warns(DeprecationWarning, match="use grant_read_data"):
        assert isinstance(table.grant_query(role), iam.Grant)


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
