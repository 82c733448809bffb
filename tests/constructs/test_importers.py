"""Using tables another stack deploys (importers) and functions another stack deploys (bind on an IFunction)."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from cdk_ts import (
    DeviceLogTable,
    DeviceLogTableBase,
    ImportedStreamArchiver,
    MonitoringDashboard,
    RotatingTimeSeriesTables,
    ShardMetadataTable,
    ShardMetadataTableBase,
    StreamArchiver,
    StreamArchiverBase,
    TimestreamTable,
    TimestreamTableBase,
)
from cdk_ts._defaults import runtime_function
from cdk_ts.rotation import RotatingTimeSeriesTablesBase
from cdk_ts.rotation.imported import _ImportedPeriodTables
from cdk_ts_runtime import TableLayout
from tests.support.iam import actions_of, lambda_role, policy_statements
from tests.support.nag import new_app, unacknowledged_findings

_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:ingest"
_ROLE_ARN = "arn:aws:iam::123456789012:role/ingest"
_KEYS = {
    "partition_key": dynamodb.Attribute(name="device", type=dynamodb.AttributeType.STRING),
    "sort_key": dynamodb.Attribute(name="at", type=dynamodb.AttributeType.NUMBER),
}


def _policy_resources(stack: Stack) -> list:
    """Every Resource of every statement of the stack's IAM policies, resolved, in template order."""
    return [
        (sorted(actions_of(statement)), statement["Resource"])
        for statement in policy_statements(Template.from_stack(stack))
        if any(a.startswith("dynamodb:") for a in actions_of(statement))
    ]


@pytest.fixture(scope="module")
def two_stacks():
    # given one stack that owns a weekly rotation and another that imports it and binds its own function
    app = new_app()
    owner = Stack(app, "Owner")
    tables = RotatingTimeSeriesTables(owner, "Readings", table_prefix="readings", period="weekly", **_KEYS)
    owner_fn = runtime_function(owner, "Writer", handler="app.handler", description="writer", environment={})
    tables.bind(owner_fn, read=True)
    user = Stack(app, "User")
    imported = RotatingTimeSeriesTables.from_table_prefix(
        user, "Readings", table_prefix="readings", period="weekly", **_KEYS
    )
    user_fn = runtime_function(user, "Writer", handler="app.handler", description="writer", environment={})
    imported.bind(user_fn, read=True)
    return owner, tables, owner_fn, user, imported, user_fn


def test_importer_returns_an_imported_subclass_of_the_base_and_creates_no_resource(two_stacks):
    _owner, _tables, _owner_fn, user, imported, _user_fn = two_stacks
    assert type(imported) is _ImportedPeriodTables
    assert isinstance(imported, RotatingTimeSeriesTablesBase)
    assert not isinstance(imported, RotatingTimeSeriesTables)  # no function, schedules or alarms of its own
    template = Template.from_stack(user)
    template.resource_count_is("AWS::DynamoDB::Table", 0)
    template.resource_count_is("AWS::Events::Rule", 0)
    assert [f for f in template.find_resources("AWS::Lambda::Function")] == [user.get_logical_id(
        user.node.find_child("Writer").node.default_child
    )]


def test_imported_grants_use_the_owners_question_mark_patterns(two_stacks):
    # then the user stack's data grant names the same ?-pattern ARNs as the owning stack's
    owner, tables, _owner_fn, user, imported, _user_fn = two_stacks
    assert imported.table_name_pattern == tables.table_name_pattern == "readings_????-W??"
    owner_grants = _policy_resources(owner)
    user_grants = _policy_resources(user)
    data_grant = next(g for g in owner_grants if "dynamodb:PutItem" in g[0] and "dynamodb:Query" in g[0])
    assert data_grant in user_grants
    assert user_grants == [data_grant]


def test_imported_bind_sets_the_same_environment_as_the_owner(two_stacks):
    owner, tables, owner_fn, user, imported, user_fn = two_stacks
    assert imported.binding_environment == tables.binding_environment
    function = Template.from_stack(user).find_resources("AWS::Lambda::Function")
    env = next(iter(function.values()))["Properties"]["Environment"]["Variables"]
    assert {k: env[k] for k in tables.binding_environment} == tables.binding_environment


def test_imported_rotation_metrics_name_the_prefix(two_stacks):
    _owner, tables, _owner_fn, user, imported, _user_fn = two_stacks
    assert user.resolve(imported.metric_next_table_missing().dimensions) == {"TablePrefix": "readings"}
    assert imported.metric_throttled_requests().expression == tables.metric_throttled_requests().expression


def test_an_imported_rotation_can_be_monitored():
    stack = Stack(new_app(), "User")
    imported = RotatingTimeSeriesTables.from_table_prefix(stack, "Readings", table_prefix="readings")
    dashboard = MonitoringDashboard(stack, "Dashboard")
    dashboard.monitor(imported)
    body = stack.resolve(dashboard.dashboard.node.default_child.dashboard_body)
    assert "Throttled requests, readings_* period tables" in str(body)


def test_the_importer_returns_an_imported_period_tables_of_the_checked_layout():
    # given the layout from_table_prefix checked, _ImportedPeriodTables names the same tables
    stack = Stack(new_app(), "User")
    through_importer = RotatingTimeSeriesTables.from_table_prefix(stack, "A", table_prefix="readings", **_KEYS)
    direct = _ImportedPeriodTables(stack, "B", through_importer.layout)
    assert type(through_importer) is _ImportedPeriodTables
    assert through_importer.layout.table_prefix == "readings"
    assert direct.table_arns == through_importer.table_arns


def test_importing_a_rotation_twice_is_no_overlap_with_its_owner():
    # an import names the owner's tables on purpose: only rotations that create tables may not overlap
    stack = Stack(new_app(), "Both")
    RotatingTimeSeriesTables(stack, "Owner", table_prefix="readings")
    RotatingTimeSeriesTables.from_table_prefix(stack, "Imported", table_prefix="readings")
    with pytest.raises(ValueError, match=r"overlap those of Both/Owner"):
        RotatingTimeSeriesTables(stack, "Second", table_prefix="readings")


def test_importer_refuses_a_misspelt_keyword_with_the_closest_one():
    stack = Stack(new_app(), "User")
    with pytest.raises(ValueError, match=r"User/Readings.*encryption_keys.*encryption_key"):
        RotatingTimeSeriesTables.from_table_prefix(stack, "Readings", table_prefix="readings", encryption_keys=None)


def test_importer_refuses_an_invalid_prefix_naming_the_path():
    stack = Stack(new_app(), "User")
    with pytest.raises(ValueError, match=r"User/Bad.*table_prefix"):
        RotatingTimeSeriesTables.from_table_prefix(stack, "Bad", table_prefix="no spaces")


def test_importer_keeps_the_layout_it_was_given():
    stack = Stack(new_app(), "User")
    imported = RotatingTimeSeriesTables.from_table_prefix(stack, "Readings", table_prefix="readings", **_KEYS)
    assert imported.layout == TableLayout(
        table_prefix="readings", period="daily", partition_key="device", partition_key_type="S",
        sort_key="at", sort_key_type="N", time_unit="ms",
    )


# ---- bind on functions this app does not define ---------------------------------------------------


def _rotation_and_stack():
    stack = Stack(new_app(), "User")
    return stack, RotatingTimeSeriesTables(stack, "Readings", table_prefix="readings")


def test_bind_on_a_function_imported_by_arn_lists_what_to_do_by_hand():
    # given a function imported by ARN alone: no role, no environment, no layers
    stack, tables = _rotation_and_stack()
    function = lambda_.Function.from_function_arn(stack, "Ingest", _ARN)
    # then bind names the construct and the function, and lists every variable, never an AttributeError
    with pytest.raises(TypeError) as raised:
        tables.bind(function)
    message = str(raised.value)
    assert message.startswith("User/Readings.bind(User/Ingest)")
    assert "imported without a role" in message
    for name, value in tables.binding_environment.items():
        assert f"  {name}={value}\n" in message + "\n"


def test_bind_on_an_imported_function_with_a_role_grants_then_refuses_the_environment():
    stack, tables = _rotation_and_stack()
    role = iam.Role.from_role_arn(stack, "IngestRole", _ROLE_ARN)
    function = lambda_.Function.from_function_attributes(stack, "Ingest", function_arn=_ARN, role=role)
    with pytest.raises(TypeError, match="CDK_TS_TABLE_PREFIX=readings") as raised:
        tables.bind(function)
    assert "imported without a role" not in str(raised.value)
    # the grant was made on the imported role before bind refused
    assert _policy_resources(stack)[-1][1] == stack.resolve(tables.table_arns)


def test_bind_with_environment_false_grants_and_changes_nothing_else():
    stack, tables = _rotation_and_stack()
    role = iam.Role.from_role_arn(stack, "IngestRole", _ROLE_ARN)
    function = lambda_.Function.from_function_attributes(stack, "Ingest", function_arn=_ARN, role=role)
    grant = tables.bind(function, environment=False, add_runtime_layer=False)
    assert grant.success
    Template.from_stack(stack).resource_count_is("AWS::Lambda::LayerVersion", 0)


def test_bind_with_environment_false_still_refuses_the_layer_on_an_imported_function():
    stack, tables = _rotation_and_stack()
    role = iam.Role.from_role_arn(stack, "IngestRole", _ROLE_ARN)
    function = lambda_.Function.from_function_attributes(stack, "Ingest", function_arn=_ARN, role=role)
    with pytest.raises(TypeError, match="add_runtime_layer=False") as raised:
        tables.bind(function, environment=False)
    assert "CDK_TS_TABLE_PREFIX" not in str(raised.value)


# ---- DeviceLogTable and ShardMetadataTable from another stack -------------------------------------


def test_device_log_and_shard_metadata_imported_grant_the_same_actions_on_the_same_tables():
    # given a stack owning a device log and its shard metadata, and another stack importing both by name
    app = new_app()
    owner = Stack(app, "Owner", env={"account": "123456789012", "region": "eu-west-1"})
    log = DeviceLogTable(owner, "DeviceLog")
    shards = ShardMetadataTable(owner, "Shards", main_table=log)
    owner_fn = runtime_function(owner, "Writer", handler="app.handler", description="writer", environment={})
    shards.bind(owner_fn, read=True)
    user = Stack(app, "User", env={"account": "123456789012", "region": "eu-west-1"})
    imported_log = DeviceLogTable.from_table_name(user, "DeviceLog", table_name="device-log")
    imported_shards = ShardMetadataTable.from_table_name(
        user, "Shards", table_name="device-log-shards", main_table=imported_log,
        partition_key=shards.partition_key, sort_key_name=shards.sort_key_name,
    )
    user_fn = runtime_function(user, "Writer", handler="app.handler", description="writer", environment={})
    imported_shards.bind(user_fn, read=True)
    # then the same actions are granted, on the imported names and the GSIs of the device log
    owner_actions = [actions for actions, _resources in _policy_resources(owner)]
    user_grants = _policy_resources(user)
    assert [actions for actions, _resources in user_grants] == owner_actions
    resources = str(user_grants)
    assert "table/device-log/index/*" in resources and "table/device-log-shards" in resources
    env = next(iter(Template.from_stack(user).find_resources("AWS::Lambda::Function").values()))
    variables = env["Properties"]["Environment"]["Variables"]
    assert variables["CDK_TS_SHARDED_TABLE_NAME"] == "device-log"
    assert variables["CDK_TS_SHARD_METADATA_TABLE_NAME"] == "device-log-shards"


def test_shard_metadata_importer_refuses_a_number_partition_key_naming_the_path():
    stack = Stack(new_app(), "User")
    main = dynamodb.Table.from_table_name(stack, "Main", "main")
    with pytest.raises(ValueError, match=r"User/Shards.*must be a String"):
        ShardMetadataTable.from_table_name(
            stack, "Shards", table_name="shards", main_table=main,
            partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.NUMBER), sort_key_name="sk",
        )


def test_shard_metadata_importer_refuses_what_its_owner_refuses_and_creates_nothing():
    stack = Stack(new_app(), "User")
    key = dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING)
    with pytest.raises(TypeError, match=r"User/Shards: main_table 'not-a-table' is not a DynamoDB table"):
        ShardMetadataTable.from_table_name(
            stack, "Shards", table_name="shards", main_table="not-a-table", partition_key=key, sort_key_name="sk",
        )
    main = dynamodb.Table.from_table_name(stack, "Main", "main")
    with pytest.raises(ValueError, match=r"User/Shards.*sort_key_name '' names no attribute"):
        ShardMetadataTable.from_table_name(
            stack, "Shards", table_name="shards", main_table=main, partition_key=key, sort_key_name="",
        )
    assert stack.node.try_find_child("Shards") is None


def test_importer_refuses_a_misspelt_layout_keyword_with_the_closest_name():
    stack = Stack(new_app(), "User")
    expected = r"^User/Readings: unknown keyword argument 'time_units'; did you mean 'time_unit'"
    with pytest.raises(ValueError, match=expected):
        RotatingTimeSeriesTables.from_table_prefix(stack, "Readings", table_prefix="readings", time_units="s")
    assert stack.node.try_find_child("Readings") is None


@pytest.mark.parametrize(
    ("make", "parameter"),
    [
        (lambda s: RotatingTimeSeriesTables.from_table_prefix(s, "I", table_prefix="r", partition_key="device_id"),
         "partition_key"),
        (lambda s: RotatingTimeSeriesTables.from_table_prefix(s, "I", table_prefix="r", sort_key="at"), "sort_key"),
        (lambda s: RotatingTimeSeriesTables(s, "R", table_prefix="r", partition_key="device_id"), "partition_key"),
        (lambda s: ShardMetadataTable.from_table_name(
            s, "I", table_name="m", main_table=dynamodb.Table.from_table_name(s, "T", "t"), partition_key="device_id",
            sort_key_name="at"), "partition_key"),
        (lambda s: ShardMetadataTable(
            s, "M", main_table=dynamodb.Table.from_table_name(s, "T", "t"), partition_key="device_id",
            sort_key_name="at"), "partition_key"),
    ],
    ids=["rotation-importer-pk", "rotation-importer-sk", "rotation-pk", "shard-importer", "shard-metadata"],
)
def test_a_plain_string_where_an_attribute_is_expected_is_refused_naming_the_parameter_and_the_type(make, parameter):
    with pytest.raises(ValueError, match=rf"{parameter} '\w+' is a str, not a dynamodb.Attribute .* pass "
                                         rf"{parameter}=dynamodb.Attribute\(name='\w+', type="):
        make(Stack(new_app(), "S"))


def test_the_device_log_importer_names_a_key_it_does_not_take():
    # the device log's keys are fixed (DeviceID, State#Date): its importer takes no key at all
    with pytest.raises(TypeError, match="unexpected keyword argument 'partition_key'"):
        DeviceLogTable.from_table_name(Stack(new_app(), "S"), "I", table_name="log", partition_key="device_id")


# ---- one importer shape: Xxx.from_... returns an imported XxxBase, created nothing -----------------

_ENV = {"account": "123456789012", "region": "eu-west-1"}


def _resources_of(stack: Stack, prefix: str) -> list:
    """The resolved resources of the policy statements of ``stack`` granting an action starting with ``prefix``,
    each distinct value once, in template order (CDK grants a table's reads in two statements on one resource)."""
    found: list = []
    for statement in policy_statements(Template.from_stack(stack)):
        if any(a.startswith(prefix) for a in actions_of(statement)) and statement["Resource"] not in found:
            found.append(statement["Resource"])
    return found


def _dynamodb_table_arn(stack: Stack, name: str, suffix: str = "") -> object:
    """The ARN a grant on the table ``name`` of ``stack``'s account and Region names, resolved."""
    return stack.resolve(stack.format_arn(service="dynamodb", resource="table", resource_name=name + suffix))


def test_device_log_importer_returns_a_base_that_grants_on_the_named_table_and_its_indexes():
    # given an app that knows the device log only by its name
    user = Stack(new_app(), "User", env=_ENV)
    imported = DeviceLogTable.from_table_name(user, "DeviceLog", table_name="device-log")
    consumer = runtime_function(user, "Api", handler="app.handler", description="api", environment={})
    imported.bind(consumer, read=True)
    # then it is the base, not a second DeviceLogTable wrapping a sibling, and it creates no table
    assert isinstance(imported, DeviceLogTableBase) and not isinstance(imported, DeviceLogTable)
    assert user.node.try_find_child("DeviceLogTable") is None
    Template.from_stack(user).resource_count_is("AWS::DynamoDB::Table", 0)
    # and the grant names the table and its GSIs, nothing else
    assert _resources_of(user, "dynamodb:") == [
        [_dynamodb_table_arn(user, "device-log"), _dynamodb_table_arn(user, "device-log", "/index/*")]
    ]
    # the attributes the old importer's DeviceLogTable offered are still there
    assert (imported.stream_view_type, imported.encryption_key, imported.throttled_keys_rule) == (None, None, None)
    assert user.resolve(imported.table.table_name) == "device-log"


def test_device_log_importer_with_a_stream_arn_grants_the_stream_read():
    user = Stack(new_app(), "User", env=_ENV)
    stream_arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/device-log/stream/2026-01-01T00:00:00.000"
    imported = DeviceLogTable.from_table_name(user, "DeviceLog", table_name="device-log", table_stream_arn=stream_arn)
    imported.grant_stream_read(lambda_role(user, "Archiver"))
    assert stream_arn in _resources_of(user, "dynamodb:GetRecords")


def test_shard_metadata_table_takes_a_name_another_app_imports_it_by():
    # given an app that names its device log and its shard metadata table
    owner = Stack(new_app(), "Owner", env=_ENV)
    log = DeviceLogTable(owner, "DeviceLog", table_name="device-log")
    shards = ShardMetadataTable(owner, "Shards", main_table=log, table_name="device-log-shards")
    owner_template = Template.from_stack(owner)
    owner_template.has_resource_properties(
        "AWS::DynamoDB::Table", {"TableName": "device-log-shards", "KeySchema": [
            {"AttributeName": "DeviceID", "KeyType": "HASH"}]},
    )
    # when another app, which cannot read the owner's outputs, imports both by the names it was told
    user = Stack(new_app(), "User", env=_ENV)
    imported = ShardMetadataTable.from_table_name(
        user, "Shards", table_name="device-log-shards",
        main_table=DeviceLogTable.from_table_name(user, "DeviceLog", table_name="device-log"),
        partition_key=shards.partition_key, sort_key_name=shards.sort_key_name, strategy=shards.strategy,
    )
    consumer = runtime_function(user, "Writer", handler="app.handler", description="writer", environment={})
    imported.bind(consumer, read=True)
    # then it is the imported base, its table a child of it (no patched attribute), and the grants name both tables
    assert isinstance(imported, ShardMetadataTableBase) and not isinstance(imported, ShardMetadataTable)
    assert imported.table.node.scope is imported
    assert _resources_of(user, "dynamodb:") == [
        [_dynamodb_table_arn(user, "device-log"), _dynamodb_table_arn(user, "device-log", "/index/*")],
        [_dynamodb_table_arn(user, "device-log-shards")],
    ]
    env = next(iter(Template.from_stack(user).find_resources("AWS::Lambda::Function").values()))
    assert env["Properties"]["Environment"]["Variables"]["CDK_TS_SHARD_METADATA_TABLE_NAME"] == "device-log-shards"


@pytest.mark.parametrize("name", ["ab", "x" * 256, "no spaces", "device/log"])
def test_a_table_name_dynamodb_would_refuse_is_refused_naming_the_path_and_the_rule(name):
    stack = Stack(new_app(), "S")
    main = DeviceLogTable(stack, "Log")
    rule = r"is not a DynamoDB table name: use 3-255 characters of \[A-Za-z0-9_.-\]"
    with pytest.raises(ValueError, match=rf"^S/Shards: table_name .* {rule}"):
        ShardMetadataTable(stack, "Shards", main_table=main, table_name=name)
    with pytest.raises(ValueError, match=rf"^S/Imported: table_name .* {rule}"):
        ShardMetadataTable.from_table_name(
            stack, "Imported", table_name=name, main_table=main, partition_key=dynamodb.Attribute(
                name="DeviceID", type=dynamodb.AttributeType.STRING), sort_key_name="State#Date",
        )
    with pytest.raises(ValueError, match=rf"^S/ImportedLog: table_name .* {rule}"):
        DeviceLogTable.from_table_name(stack, "ImportedLog", table_name=name)
    assert stack.node.try_find_child("Shards") is None and stack.node.try_find_child("Imported") is None


def test_timestream_importer_returns_a_base_that_grants_on_the_named_table_and_its_key():
    # given an app that knows the Timestream table by its database's name and its own, and the database's key
    user = Stack(new_app(), "User", env=_ENV)
    key_arn = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555"
    imported = TimestreamTable.from_table_name(
        user, "Fleet", database_name="fleet", table_name="telemetry",
        encryption_key=kms.Key.from_key_arn(user, "Key", key_arn),
    )
    imported.grant_write_data(lambda_role(user, "Writer"))
    # then it is the base and creates nothing
    assert isinstance(imported, TimestreamTableBase) and not isinstance(imported, TimestreamTable)
    template = Template.from_stack(user)
    template.resource_count_is("AWS::Timestream::Table", 0)
    template.resource_count_is("AWS::Timestream::Database", 0)
    # and the write grant names the table's ARN in this account and Region, and the key
    table_arn = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                   ":timestream:eu-west-1:123456789012:database/fleet/table/telemetry"]]}
    assert _resources_of(user, "timestream:WriteRecords") == [table_arn]
    assert _resources_of(user, "kms:") == [key_arn]
    assert (imported.database_name, imported.table_name) == ("fleet", "telemetry")


def test_timestream_importer_grants_what_the_owning_construct_grants():
    app = new_app()
    owner = Stack(app, "Owner", env=_ENV)
    TimestreamTable(owner, "Fleet", database_name="fleet", table_name="telemetry").grant_read_data(
        lambda_role(owner, "Reader")
    )
    user = Stack(app, "User", env=_ENV)
    TimestreamTable.from_table_name(user, "Fleet", database_name="fleet", table_name="telemetry").grant_read_data(
        lambda_role(user, "Reader")
    )
    actions = [sorted(actions_of(s)) for stack in (owner, user) for s in policy_statements(Template.from_stack(stack))]
    assert actions[: len(actions) // 2] == actions[len(actions) // 2 :]


def test_timestream_importer_refuses_a_name_timestream_would_refuse():
    with pytest.raises(ValueError, match=r"^S/Fleet: table_name 'a b' must be 3-256 characters"):
        TimestreamTable.from_table_name(Stack(new_app(), "S"), "Fleet", database_name="fleet", table_name="a b")


def test_timestream_importer_metric_can_drive_an_alarm_on_the_named_table():
    stack = Stack(new_app(), "User")
    imported = TimestreamTable.from_table_name(stack, "Fleet", database_name="fleet", table_name="telemetry")
    cloudwatch.Alarm(
        stack, "Rejected", metric=imported.metric_magnetic_store_rejected_records(), threshold=1, evaluation_periods=1
    )
    alarm = next(iter(Template.from_stack(stack).find_resources("AWS::CloudWatch::Alarm").values()))
    (query,) = alarm["Properties"]["Metrics"]
    assert query["Expression"] == (
        'SELECT SUM(MagneticStoreRejectedRecordCount) FROM SCHEMA("AWS/Timestream", DatabaseName, Operation, '
        "TableName) WHERE DatabaseName = 'fleet' AND TableName = 'telemetry'"
    )
    assert query["Period"] == 300


# ---- StreamArchiver from another stack or account -------------------------------------------------

_ANALYTICS = {"account": "222222222222", "region": "eu-west-1"}


def _archive_import(stack: Stack, **overrides):
    attributes = {
        "archive_bucket_name": "acme-archive", "failure_bucket_name": "acme-failures",
        "glue_database_name": "archive_db", "glue_table_name": "telemetry_archiver", **overrides,
    }
    return StreamArchiver.from_archive_bucket_name(stack, "Archive", **attributes)


def _statements_on(stack: Stack, service: str) -> list[tuple[list[str], object, object]]:
    """``(sorted actions, resolved resources, condition)`` of every statement with an action of ``service``."""
    return [
        (sorted(actions_of(s)), s["Resource"], s.get("Condition"))
        for s in policy_statements(Template.from_stack(stack))
        if any(a.startswith(f"{service}:") for a in actions_of(s))
    ]


def _s3_arn(path: str) -> dict:
    return {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":s3:::{path}"]]}


def test_the_archive_importer_returns_a_base_and_creates_no_resource():
    stack = Stack(new_app(), "Analytics", env=_ANALYTICS)
    imported = _archive_import(stack)
    assert type(imported) is ImportedStreamArchiver and isinstance(imported, StreamArchiverBase)
    assert not isinstance(imported, StreamArchiver)
    assert Template.from_stack(stack).to_json().get("Resources", {}) == {}


def test_a_reader_granted_through_the_importer_may_read_and_list_the_archive_prefix_and_query_its_catalog():
    # given an analytics account's stack reading an archive another account writes
    stack = Stack(new_app(), "Analytics", env=_ANALYTICS)
    imported = _archive_import(stack, prefix="cdc/", account="111111111111")
    reader = runtime_function(stack, "Reader", handler="app.handler", description="reader", environment={})
    imported.grant_read_data(reader)
    imported.grant_catalog_read(reader)
    # then it may get the objects under the prefix, list only that prefix, and read the table and its view
    assert _statements_on(stack, "s3") == [
        (["s3:GetObject"], _s3_arn("acme-archive/cdc/*"), None),
        (["s3:ListBucket"], _s3_arn("acme-archive"), {"StringLike": {"s3:prefix": ["cdc/*"]}}),
    ]
    (glue_actions, glue_resources, _condition), = _statements_on(stack, "glue")
    assert glue_actions == ["glue:GetDatabase", "glue:GetPartitions", "glue:GetTable"]
    # in the owner's account, whose catalog the analytics account queries
    owner = ":glue:eu-west-1:111111111111:"
    assert [stack.resolve(r)["Fn::Join"][1][-1] for r in glue_resources] == [
        f"{owner}catalog", f"{owner}database/archive_db", f"{owner}table/archive_db/telemetry_archiver",
        f"{owner}table/archive_db/telemetry_archiver_deduplicated",
    ]
    # and nothing on the failure bucket: reading is not replaying
    assert "acme-failures" not in str(_statements_on(stack, "s3"))


def test_a_replay_function_bound_to_an_imported_archive_gets_its_environment_and_both_buckets():
    # given a replay function in another stack, bound for writing (what StreamRecordArchiver.replay does)
    stack = Stack(new_app(), "Ops", env=_ANALYTICS)
    imported = _archive_import(stack)
    replay = runtime_function(stack, "Replay", handler="app.handler", description="replay", environment={})
    imported.bind(replay, add_runtime_layer=False)
    # then StreamRecordArchiver.from_env finds the archive and the replay finds the failure bucket
    (function,) = Template.from_stack(stack).find_resources("AWS::Lambda::Function").values()
    variables = function["Properties"]["Environment"]["Variables"]
    names = ("CDK_TS_ARCHIVE_BUCKET", "CDK_TS_ARCHIVE_PREFIX", "CDK_TS_ARCHIVE_FAILURE_BUCKET")
    assert {k: variables[k] for k in names} == {
        "CDK_TS_ARCHIVE_BUCKET": "acme-archive", "CDK_TS_ARCHIVE_PREFIX": "dynamodb/",
        "CDK_TS_ARCHIVE_FAILURE_BUCKET": "acme-failures",
    }
    statements = _statements_on(stack, "s3")
    # it writes archive objects under the prefix only, and reads, lists, writes and deletes failure records
    assert statements[0] == (["s3:AbortMultipartUpload", "s3:PutObject"], _s3_arn("acme-archive/dynamodb/*"), None)
    failure_actions, failure_resources, _condition = statements[1]
    assert {"s3:GetObject*", "s3:List*", "s3:PutObject", "s3:DeleteObject*"} <= set(failure_actions)
    assert failure_resources == [_s3_arn("acme-failures"), _s3_arn("acme-failures/*")]
    assert len(statements) == 2


def test_the_owning_archiver_grants_a_reader_its_own_bucket_and_prefix():
    stack = Stack(new_app(), "Owner")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    archiver = StreamArchiver(stack, "Archive", source=log, prefix="cdc/")
    reader = runtime_function(stack, "Reader", handler="app.handler", description="reader", environment={})
    archiver.grant_read_data(reader)
    reader_role = {"Properties": {"Roles": [stack.resolve(reader.role.role_name)]}}
    statements = policy_statements(Template.from_stack(stack), props=reader_role)
    assert [(actions_of(s), s["Resource"]) for s in statements if actions_of(s)[0].startswith("s3:")] == [
        (["s3:GetObject"], stack.resolve(archiver.bucket.arn_for_objects("cdc/*"))),
        (["s3:ListBucket"], stack.resolve(archiver.bucket.bucket_arn)),
    ]


def test_imported_archive_metrics_name_the_owners_function_and_feed_a_dashboard():
    stack = Stack(new_app(), "Ops")
    imported = _archive_import(stack, function_name="archiver-fn", failure_metrics_filter_id="cdk-ts-failures-x")
    assert stack.resolve(imported.metric_iterator_age().dimensions) == {"FunctionName": "archiver-fn"}
    assert stack.resolve(imported.metric("ArchivedRecords").dimensions) == {"FunctionName": "archiver-fn"}
    assert stack.resolve(imported.metric_dead_letters().dimensions) == {
        "BucketName": "acme-failures", "FilterId": "cdk-ts-failures-x"
    }
    dashboard = MonitoringDashboard(stack, "Dashboard")
    dashboard.monitor(imported)
    assert "Archive: iterator age (ms)" in str(stack.resolve(dashboard.dashboard.node.default_child.dashboard_body))


def test_imported_archive_metrics_without_the_function_name_say_which_parameter_to_pass():
    stack = Stack(new_app(), "Ops")
    imported = _archive_import(stack)
    with pytest.raises(ValueError, match=r"^Ops/Archive: .*import it with function_name="):
        imported.metric_errors()


def test_the_archive_importer_refuses_bad_attributes_all_at_once_naming_the_path():
    stack = Stack(new_app(), "Ops")
    with pytest.raises(ValueError) as raised:
        StreamArchiver.from_archive_bucket_name(
            stack, "Archive", archive_bucket_name="acme-archive", prefix="cdc", glue_database_name="archive_db",
            failure_metrics_filter_id="cdk-ts-failures-x",
        )
    message = str(raised.value)
    assert message.startswith("Ops/Archive")
    for problem in ("prefix 'cdc' must end with '/'", "glue_table_name go together", "pass failure_bucket_name"):
        assert problem in message


def test_catalog_read_of_an_archive_without_a_catalog_is_refused_naming_the_importer_parameters():
    stack = Stack(new_app(), "Ops")
    imported = StreamArchiver.from_archive_bucket_name(stack, "Archive", archive_bucket_name="acme-archive")
    reader = runtime_function(stack, "Reader", handler="app.handler", description="reader", environment={})
    with pytest.raises(ValueError, match="Ops/Archive has no Glue catalog.*glue_database_name= and glue_table_name="):
        imported.grant_catalog_read(reader)


def test_the_archive_importer_refuses_a_misspelt_keyword_with_the_closest_name():
    stack = Stack(new_app(), "Ops")
    with pytest.raises(ValueError, match=r"^Ops/Archive: unknown keyword argument 'failure_bucket'; did you mean "
                                         r"'failure_bucket_name'"):
        StreamArchiver.from_archive_bucket_name(
            stack, "Archive", archive_bucket_name="acme-archive", failure_bucket="acme-failures"
        )
    assert stack.node.try_find_child("Archive") is None


def test_a_replay_bound_to_an_imported_archive_with_acknowledged_findings_passes_cdk_nag():
    # given a replay function whose grants' wildcard findings are acknowledged by bind, as the owner's are
    app = new_app()
    stack = Stack(app, "Ops", env=_ANALYTICS)
    replay = runtime_function(stack, "Replay", handler="app.handler", description="replay", environment={})
    _archive_import(stack).bind(replay, read=True, acknowledge_nag_findings=True)
    # then cdk-nag finds nothing left to review
    assert unacknowledged_findings(app) == []


def test_an_imported_archiver_made_directly_is_the_one_the_importer_returns():
    stack = Stack(new_app(), "Ops")
    direct = ImportedStreamArchiver(stack, "Direct", archive_bucket_name="acme-archive", prefix="cdc/")
    via = StreamArchiver.from_archive_bucket_name(stack, "Via", archive_bucket_name="acme-archive", prefix="cdc/")
    assert type(direct) is type(via)
    assert direct.binding_environment == via.binding_environment == {
        "CDK_TS_ARCHIVE_BUCKET": "acme-archive", "CDK_TS_ARCHIVE_PREFIX": "cdc/"
    }
