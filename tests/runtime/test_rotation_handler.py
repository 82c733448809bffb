"""The rotation handler as Lambda runs it: env read at call time, scheduled time, custom resource replies, streams."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import boto3
import pytest

from cdk_ts_runtime.handlers import custom_resource, rotation
from cdk_ts_runtime.periods import label, next_start
from cdk_ts_runtime.rotation_config import ENV_ROTATION_CONFIG, RotationConfig
from cdk_ts_runtime.stream_consumer import STREAM_CONSUMER_ENV, StreamConsumer
from cdk_ts_runtime.table_layout import TableLayout
from tests.support.streams import consumer_function

CLOCK: list[datetime] = []


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    """The handler's clock: real time unless a test runs a scheduled event, which sets it to the event's time."""
    CLOCK[:] = [datetime.now(UTC)]
    monkeypatch.setattr(rotation, "now", lambda: CLOCK[0])


def scheduled(event):
    """Invoke the handler as EventBridge would, on time: the clock reads the event's scheduled time."""
    CLOCK[0] = datetime.fromisoformat(event["time"])
    return rotation.handler(event, None)


@pytest.fixture
def rotation_env(monkeypatch, aws):
    def configure(prefix="telemetry", **config):
        for name, value in TableLayout(prefix).to_env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv(ENV_ROTATION_CONFIG, RotationConfig(**config).to_json())

    configure()
    return configure


def tables():
    return sorted(boto3.client("dynamodb").list_tables()["TableNames"])


def test_scheduled_event_uses_the_events_time_even_when_it_runs_late(rotation_env):
    result = scheduled({"Operation": "create_new", "time": "2026-03-01T23:45:00Z"})
    assert tables() == ["telemetry_2026-03-02"]
    assert result["time"] == "2026-03-01T23:45:00+00:00"


def test_configuration_is_read_when_invoked_not_when_imported(rotation_env):
    scheduled({"Operation": "create_new", "time": "2026-03-01T23:45:00Z"})
    rotation_env(prefix="metrics")
    scheduled({"Operation": "create_new", "time": "2026-03-01T23:45:00Z"})
    assert tables() == ["metrics_2026-03-02", "telemetry_2026-03-02"]


def test_without_a_time_the_clock_is_used(rotation_env):
    before = datetime.now(UTC)
    rotation.handler({"Operation": "create_new"}, None)
    after = datetime.now(UTC)
    expected = {f"telemetry_{label('daily', next_start('daily', t))}" for t in (before, after)}
    assert set(tables()) <= expected and len(tables()) == 1


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"Operation": "rotate", "time": "2026-03-01T23:45:00Z"}, "unknown Operation 'rotate'"),
        ({"time": "2026-03-01T23:45:00Z"}, "unknown Operation ''"),
        ({"Operation": "create_new", "time": "yesterday"}, "event time 'yesterday' is not ISO-8601"),
    ],
)
def test_bad_events_are_clear_errors(rotation_env, event, message):
    with pytest.raises(ValueError, match=message):
        rotation.handler(event, None)


def custom_resource_event(url, request_type):
    return {
        "RequestType": request_type,
        "ResponseURL": url,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/S/1",
        "RequestId": "r-1",
        "LogicalResourceId": "DeployTimeReconcile",
        "ResourceType": "Custom::CdkTsRotation",
        "ResourceProperties": {},
    }


def test_deploy_time_run_creates_the_current_table_and_reports_success(rotation_env, cloudformation):
    rotation.handler(custom_resource_event(cloudformation.url, "Create"), None)
    today = f"telemetry_{label('daily', datetime.now(UTC))}"
    assert today in tables()
    (reply,) = cloudformation.replies
    assert (reply["Status"], reply["RequestId"], reply["LogicalResourceId"]) == (
        "SUCCESS",
        "r-1",
        "DeployTimeReconcile",
    )


def test_stack_deletion_keeps_the_tables(rotation_env, cloudformation):
    rotation.handler(custom_resource_event(cloudformation.url, "Create"), None)
    existing = tables()
    event = {**custom_resource_event(cloudformation.url, "Delete"), "PhysicalResourceId": "rotation-telemetry"}
    rotation.handler(event, None)
    assert tables() == existing
    assert [r["Status"] for r in cloudformation.replies] == ["SUCCESS", "SUCCESS"]
    assert cloudformation.replies[1]["PhysicalResourceId"] == "rotation-telemetry"


def test_a_failed_deploy_time_run_reports_failure_instead_of_hanging_the_stack(
    rotation_env, cloudformation, monkeypatch
):
    monkeypatch.setenv(ENV_ROTATION_CONFIG, json.dumps({"retain_periods": 1}))
    with pytest.raises(ValueError, match="retain_periods 1 must be >= 2"):
        rotation.handler(custom_resource_event(cloudformation.url, "Update"), None)
    (reply,) = cloudformation.replies
    assert reply["Status"] == "FAILED"
    assert "retain_periods 1 must be >= 2" in reply["Reason"]


def test_new_tables_feed_the_stream_consumer_and_expired_ones_stop_first(rotation_env, monkeypatch):
    arn = consumer_function()
    rotation_env(stream_view_type="NEW_AND_OLD_IMAGES", retain_periods=2)
    monkeypatch.setenv(STREAM_CONSUMER_ENV, json.dumps({"function_name": arn, "batch_size": 500}))
    lambda_client = boto3.client("lambda")
    dynamodb = boto3.client("dynamodb")

    scheduled({"Operation": "create_new", "time": "2026-03-01T23:45:00Z"})
    stream = dynamodb.describe_table(TableName="telemetry_2026-03-02")["Table"]["LatestStreamArn"]
    (mapping,) = lambda_client.list_event_source_mappings(EventSourceArn=stream)["EventSourceMappings"]
    assert (mapping["FunctionArn"], mapping["BatchSize"]) == (arn, 500)

    scheduled({"Operation": "create_new", "time": "2026-03-01T23:45:00Z"})
    assert len(lambda_client.list_event_source_mappings(EventSourceArn=stream)["EventSourceMappings"]) == 1

    scheduled({"Operation": "resize_old", "time": "2026-03-04T00:15:00Z"})
    assert "telemetry_2026-03-02" not in tables()
    assert lambda_client.list_event_source_mappings(EventSourceArn=stream)["EventSourceMappings"] == []


def test_stream_consumer_settings_become_the_mapping_request():
    consumer = StreamConsumer(
        function_name="arn:aws:lambda:us-east-1:1:function:f",
        on_failure_destination_arn="arn:aws:sqs:us-east-1:1:dlq",
        filter_patterns=['{"eventName": ["REMOVE"]}'],
    )
    request = consumer.mapping_request("arn:stream")
    assert request["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert request["DestinationConfig"] == {"OnFailure": {"Destination": "arn:aws:sqs:us-east-1:1:dlq"}}
    assert request["FilterCriteria"] == {"Filters": [{"Pattern": '{"eventName": ["REMOVE"]}'}]}
    assert request["StartingPosition"] == "TRIM_HORIZON"


def test_a_deploy_time_run_that_finds_a_scheduled_run_acting_still_answers_success(
    rotation_env, cloudformation, monkeypatch
):
    from cdk_ts_runtime.rotation.lock import LOCK_KEY, LOCK_TABLE_ENV, RunLock

    dynamodb = boto3.client("dynamodb")
    dynamodb.create_table(
        TableName="rotation-lock", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": LOCK_KEY, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": LOCK_KEY, "AttributeType": "S"}],
    )
    monkeypatch.setenv(LOCK_TABLE_ENV, "rotation-lock")
    monkeypatch.setattr(custom_resource, "LOCK_WAIT_SECONDS", 0)
    scheduled_run = RunLock(dynamodb=dynamodb, table_name="rotation-lock", lock_id="telemetry", clock=rotation.now)
    from datetime import timedelta

    scheduled_run.acquire("resize_old", timedelta(minutes=6))

    rotation.handler(custom_resource_event(cloudformation.url, "Create"), None)

    (reply,) = cloudformation.replies
    assert reply["Status"] == "SUCCESS"
    assert tables() == ["rotation-lock"]  # the scheduled run converges the tables; this one changed nothing


def test_the_deploy_time_run_through_dynamodbs_rules_answers_success_with_the_table_ready(
    cloudformation, monkeypatch, moto_server, unique_name
):
    # the handler's own clients (CONTROL_PLANE retries) through the harness: CREATING for a second, as
    # DynamoDB reports a new table, then PITR once ACTIVE (backups ready at once here: PITR refused right after
    # ACTIVE, and deferred to the next run, is tests/faults/test_rotation_rules.py's)
    from cdk_ts.testing import start_rules_proxy

    proxy = start_rules_proxy(moto_server, create_seconds=1, update_seconds=1, backups_unavailable_seconds=0)
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", proxy.endpoint_url)
        for name, value in TableLayout(unique_name).to_env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv(ENV_ROTATION_CONFIG, RotationConfig(metric_namespace=None).to_json())

        rotation.handler(custom_resource_event(cloudformation.url, "Create"), None)

        (reply,) = cloudformation.replies
        assert reply["Status"] == "SUCCESS"
        client = proxy.client()
        today = f"{unique_name}_{label('daily', datetime.now(UTC))}"
        assert client.describe_table(TableName=today)["Table"]["TableStatus"] == "ACTIVE"
        backups = client.describe_continuous_backups(TableName=today)["ContinuousBackupsDescription"]
        assert backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    finally:
        proxy.stop()


def _consumer_mappings(lambda_client, function_arn):
    return lambda_client.list_event_source_mappings(FunctionName=function_arn)["EventSourceMappings"]


def _delete_request(cloudformation, status):
    event = {**custom_resource_event(cloudformation.url, "Delete"), "PhysicalResourceId": "rotation-telemetry"}
    return custom_resource.handle(
        event, None, lambda: rotation.build_rotator(os.environ), stack_status=lambda _stack_id: status
    )


@pytest.fixture
def mapped_rotation(rotation_env, monkeypatch):
    """A rotation whose tables of two days feed the consumer, beside mappings that are not the rotation's."""
    arn = consumer_function()
    rotation_env(stream_view_type="NEW_AND_OLD_IMAGES")
    monkeypatch.setenv(STREAM_CONSUMER_ENV, json.dumps({"function_name": arn}))
    scheduled({"Operation": "create_new", "time": "2026-03-01T23:45:00Z"})
    scheduled({"Operation": "create_new", "time": "2026-03-02T23:45:00Z"})
    # the consumer also reads a table that is not a period table (mapped by CloudFormation, say)
    other = _table_feeding(arn, "telemetry_config", key_type="S")
    assert len(_consumer_mappings(boto3.client("lambda"), arn)) == 3
    return arn, other


def _table_feeding(function_arn: str, name: str, *, key_type: str, **create_options) -> str:
    """A table (key ``pk``) whose NEW_IMAGE stream is mapped to ``function_arn``, made outside the rotation.

    Returns the stream's ARN.
    """
    stream = boto3.client("dynamodb").create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": key_type}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        **create_options,
    )["TableDescription"]["LatestStreamArn"]
    boto3.client("lambda").create_event_source_mapping(
        EventSourceArn=stream, FunctionName=function_arn, StartingPosition="LATEST"
    )
    return stream


def test_stack_deletion_removes_the_rotations_stream_mappings_and_keeps_the_tables(mapped_rotation, cloudformation):
    # given the stack is being deleted
    arn, other = mapped_rotation
    existing = tables()
    _delete_request(cloudformation, "DELETE_IN_PROGRESS")
    # then the two period tables' mappings are gone, the other table's mapping and every table stay
    (left,) = _consumer_mappings(boto3.client("lambda"), arn)
    assert left["EventSourceArn"] == other
    assert tables() == existing
    (reply,) = cloudformation.replies
    assert reply["Status"] == "SUCCESS"
    assert "removed 2 event source mapping(s)" in reply["Reason"]


def test_a_delete_while_the_stack_is_updated_keeps_the_mappings(mapped_rotation, cloudformation):
    # given the custom resource is replaced or removed by an update (run_at_deploy turned off)
    arn, _other = mapped_rotation
    _delete_request(cloudformation, "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")
    assert len(_consumer_mappings(boto3.client("lambda"), arn)) == 3
    (reply,) = cloudformation.replies
    assert (reply["Status"], "not being deleted" in reply["Reason"]) == ("SUCCESS", True)


def test_a_failure_to_remove_mappings_is_reported_and_never_blocks_deletion(mapped_rotation, cloudformation):
    def unreachable(_stack_id):
        raise ConnectionError("cloudformation endpoint unreachable")

    event = {**custom_resource_event(cloudformation.url, "Delete"), "PhysicalResourceId": "rotation-telemetry"}
    custom_resource.handle(event, None, lambda: rotation.build_rotator(os.environ), stack_status=unreachable)
    (reply,) = cloudformation.replies
    assert reply["Status"] == "SUCCESS"
    assert "could not be removed (ConnectionError: cloudformation endpoint unreachable)" in reply["Reason"]


def test_stack_deletion_leaves_the_mapping_of_a_lookalike_table_that_has_only_the_name(mapped_rotation, cloudformation):
    # given a table named like a period table of this rotation, without its tags, whose stream feeds the consumer
    arn, other = mapped_rotation
    lookalike = _table_feeding(
        arn, "telemetry_2026-03-05", key_type="N", Tags=[{"Key": "cdk-ts:prefix", "Value": "someone-elses"}]
    )

    _delete_request(cloudformation, "DELETE_IN_PROGRESS")

    # then only the two tagged period tables' mappings are removed
    mapped = _consumer_mappings(boto3.client("lambda"), arn)
    assert sorted(m["EventSourceArn"] for m in mapped) == sorted([other, lookalike])
    (reply,) = cloudformation.replies
    assert reply["Status"] == "SUCCESS"
    assert "removed 2 event source mapping(s)" in reply["Reason"]
    assert "kept the mappings of 1 table(s) named like period tables but without this rotation's tags: " \
        "telemetry_2026-03-05" in reply["Reason"]
