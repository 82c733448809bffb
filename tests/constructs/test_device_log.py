"""DeviceLogTable: the model's keys and GSIs, secure defaults, existing tables, grants, validation, cdk-nag."""

from __future__ import annotations

import pytest
from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from cdk_ts import DeviceLogTable
from cdk_ts._defaults import runtime_function
from cdk_ts_runtime._device_log import ENV_TABLE_NAME
from tests.support.iam import actions_of, lambda_role, policy_statements
from tests.support.nag import new_app, new_stack, unacknowledged_findings
from tests.support.problems import raises_problems


@pytest.fixture(scope="module")
def default_table():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "DeviceLog", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    function = runtime_function(stack, "Api", handler="app.handler", description="api", environment={})
    log.bind(function, read=True)
    return stack, log, Template.from_stack(stack)


def test_key_schema_and_both_gsis_exist_from_creation(default_table):
    _stack, _log, template = default_table
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "KeySchema": [
                {"AttributeName": "DeviceID", "KeyType": "HASH"},
                {"AttributeName": "State#Date", "KeyType": "RANGE"},
            ],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "GSI1",
                    "KeySchema": [
                        {"AttributeName": "Operator", "KeyType": "HASH"},
                        {"AttributeName": "Date", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                },
                {
                    "IndexName": "GSI2",
                    "KeySchema": [
                        {"AttributeName": "EscalatedTo", "KeyType": "HASH"},
                        {"AttributeName": "State#Date", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                },
            ],
        },
    )


def test_defaults_are_on_demand_pitr_encrypted_and_retained(default_table):
    _stack, _log, template = default_table
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "BillingMode": "PAY_PER_REQUEST",
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                    "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
                }
            ),
        },
    )


def test_bind_sets_the_table_name_and_grants_the_indexes(default_table):
    stack, log, template = default_table
    template.has_resource_properties(
        "AWS::Lambda::Function", {"Environment": {"Variables": {ENV_TABLE_NAME: stack.resolve(log.table.table_name)}}}
    )
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": Match.array_with(["dynamodb:Query"]),
                                "Resource": Match.array_with(
                                    [{"Fn::Join": ["", [stack.resolve(log.table.table_arn), "/index/*"]]}]
                                ),
                            }
                        )
                    ]
                )
            }
        },
    )


def test_provisioned_capacity_applies_to_table_and_gsis():
    stack = Stack(new_app(), "Test")
    DeviceLogTable(stack, "Log", billing_mode=dynamodb.BillingMode.PROVISIONED, read_capacity=5, write_capacity=7)
    table = next(iter(Template.from_stack(stack).find_resources("AWS::DynamoDB::Table").values()))["Properties"]
    assert table["ProvisionedThroughput"] == {"ReadCapacityUnits": 5, "WriteCapacityUnits": 7}
    assert [g["ProvisionedThroughput"] for g in table["GlobalSecondaryIndexes"]] == [
        {"ReadCapacityUnits": 5, "WriteCapacityUnits": 7}
    ] * 2


def test_existing_table_mode_creates_nothing_and_grants_on_it():
    stack = Stack(new_app(), "Test")
    existing = dynamodb.Table.from_table_attributes(
        stack, "Existing", table_name="device-log", global_indexes=["GSI1", "GSI2"]
    )
    log = DeviceLogTable(stack, "Log", existing_table=existing)
    role = lambda_role(stack, "Reader")
    assert isinstance(log.grant_read_data(role), iam.Grant)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::DynamoDB::Table", 0)
    statement = template.find_resources("AWS::IAM::Policy")
    (policy,) = statement.values()
    resources = policy["Properties"]["PolicyDocument"]["Statement"][0]["Resource"]
    assert any("index/*" in str(r) for r in resources)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"billing_mode": dynamodb.BillingMode.PROVISIONED, "read_capacity": 0, "write_capacity": 1},
            "read_capacity 0 must be >= 1",
        ),
        ({"read_capacity": 5}, "read_capacity 5 needs billing_mode"),
        ({"gsi1_projection": dynamodb.ProjectionType.INCLUDE}, "gsi1_projection INCLUDE needs gsi_non_key_attributes"),
    ],
)
def test_bad_props_fail_at_synth(props, message):
    with pytest.raises(ValueError, match=message):
        DeviceLogTable(Stack(new_app(), "Test"), "Log", **props)


def test_existing_table_rejects_props_it_cannot_apply():
    stack = Stack(new_app(), "Test")
    existing = dynamodb.Table.from_table_name(stack, "Existing", "device-log")
    with pytest.raises(ValueError, match="stream cannot be applied to existing_table"):
        DeviceLogTable(stack, "Log", existing_table=existing, stream=dynamodb.StreamViewType.NEW_IMAGE)


def test_existing_table_rejects_capacity_options_too():
    stack = Stack(new_app(), "Test")
    existing = dynamodb.Table.from_table_name(stack, "Existing", "device-log")
    with pytest.raises(ValueError, match="max_read_request_units, table_class cannot be applied to existing_table"):
        DeviceLogTable(
            stack, "Log", existing_table=existing, max_read_request_units=100,
            table_class=dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS,
        )


def test_an_unknown_keyword_joins_the_other_problems():
    raises_problems(
        lambda: DeviceLogTable(Stack(new_app(), "Test"), "Log", warm_read_units_per_second=0, colour="blue"),
        "Test/Log",
        "unknown keyword argument 'colour'; the keywords are billing_mode, ", "warm_read_units_per_second 0 must be",
    )


def test_passes_cdk_nag_when_the_user_acknowledges_the_grant_findings():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", removal_policy=RemovalPolicy.RETAIN)
    log.bind(
        runtime_function(stack, "Api", handler="app.handler", description="api", environment={}),
        read=True,
        acknowledge_nag_findings=True,
    )
    assert unacknowledged_findings(app) == []


def test_bind_leaves_the_users_role_unacknowledged_by_default():
    app, stack = new_stack()
    log = DeviceLogTable(stack, "Log", removal_policy=RemovalPolicy.RETAIN)
    log.bind(runtime_function(stack, "Api", handler="app.handler", description="api", environment={}), read=True)
    findings = unacknowledged_findings(app)
    assert any(f.startswith("AwsSolutions-IAM5[Resource::") and "Test/ApiRole/" in f for f in findings), findings


def test_bind_writes_only_by_default_and_returns_the_grant():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log")
    grant = log.bind(runtime_function(stack, "Api", handler="app.handler", description="api", environment={}))
    assert isinstance(grant, iam.Grant)
    actions = [a for statement in policy_statements(Template.from_stack(stack)) for a in actions_of(statement)]
    assert "dynamodb:PutItem" in actions and "dynamodb:Query" not in actions


def test_bind_that_grants_nothing_names_the_construct():
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log")
    function = runtime_function(stack, "Api", handler="app.handler", description="api", environment={})
    with pytest.raises(ValueError, match=r"^Test/Log\.bind\(Test/Api\): read=False and write=False"):
        log.bind(function, read=False, write=False)


def test_every_bad_prop_is_reported_in_one_error_with_the_construct_path():
    stack = Stack(new_app(), "Test")
    raises_problems(
        lambda: DeviceLogTable(
            stack, "Log", read_capacity=5, write_capacity=5, gsi1_projection=dynamodb.ProjectionType.INCLUDE,
        ),
        "Test/Log",
        "read_capacity 5 needs", "write_capacity 5 needs", "gsi1_projection INCLUDE needs",
    )


@pytest.mark.parametrize("table_class", [dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS, "STANDARD_INFREQUENT_ACCESS"])
def test_on_demand_caps_warm_throughput_and_table_class(table_class):
    stack = Stack(new_app(), "Test")
    DeviceLogTable(
        stack, "Log", max_read_request_units=500, max_write_request_units=200,
        warm_read_units_per_second=15000, warm_write_units_per_second=5000,
        table_class=table_class,
    )
    table = next(iter(Template.from_stack(stack).find_resources("AWS::DynamoDB::Table").values()))["Properties"]
    caps = {"MaxReadRequestUnits": 500, "MaxWriteRequestUnits": 200}
    assert table["OnDemandThroughput"] == caps
    assert [g["OnDemandThroughput"] for g in table["GlobalSecondaryIndexes"]] == [caps] * 2
    assert table["WarmThroughput"] == {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 5000}
    assert table["TableClass"] == "STANDARD_INFREQUENT_ACCESS"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"max_write_request_units": 0}, "max_write_request_units 0 must be a whole number >= 1"),
        ({"warm_read_units_per_second": -1}, "warm_read_units_per_second -1 must be"),
        (
            {"billing_mode": dynamodb.BillingMode.PROVISIONED, "read_capacity": 1, "write_capacity": 1,
             "max_read_request_units": 10},
            "max_read_request_units 10 is an on-demand cap",
        ),
    ],
)
def test_bad_capacity_options_name_the_value(props, message):
    with pytest.raises(ValueError, match=message):
        DeviceLogTable(Stack(new_app(), "Test"), "Log", **props)


def test_stream_read_acknowledges_list_streams_only_when_asked():
    for opt_in in (False, True):
        app, stack = new_stack()
        log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        role = lambda_role(stack, "Consumer")
        log.grant_stream_read(role, acknowledge_nag_findings=opt_in)
        findings = [f for f in unacknowledged_findings(app) if "Consumer" in f and "Resource::*" in f]
        assert bool(findings) is not opt_in, findings
