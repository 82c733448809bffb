# test_handler.py
from __future__ import annotations

from datetime import UTC, datetime

import boto3
import handler
import pytest
from botocore.exceptions import ClientError

from cdk_ts.testing import LocalDynamoDB

START = datetime(2026, 3, 10, tzinfo=UTC)


def create_table(name: str) -> None:
    boto3.client("dynamodb").create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "device", "KeyType": "HASH"}, {"AttributeName": "at", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "device", "AttributeType": "S"},
                              {"AttributeName": "at", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
    )


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TABLE", "readings")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # botocore retries nothing: each throttle reaches the test
    return "readings"


# one partition per key value, 10 write units a second each: a hot device is throttled after ten writes
@pytest.mark.local_dynamodb(write_units_per_second=10, partition_per_key_value=True, start_time=START)
def test_a_hot_device_is_throttled_with_its_reason(local_dynamodb: LocalDynamoDB, table: str) -> None:
    create_table(table)
    local_dynamodb.advance(60)  # ACTIVE
    for at in range(10):
        handler.record({"device": "hot", "at": at}, None)
    with pytest.raises(ClientError) as throttled:
        handler.record({"device": "hot", "at": 10}, None)
    handler.record({"device": "cool", "at": 10}, None)  # another key is not hot

    error = throttled.value.response
    assert error["Error"]["Code"] == "ThrottlingException"  # on-demand table: reasons in throttlingReasons
    assert [r["reason"] for r in error["throttlingReasons"]] == ["TableWriteKeyRangeThroughputExceeded"]
    assert local_dynamodb.throttles(table=table, reason="TableWriteKeyRangeThroughputExceeded") == 1
    assert local_dynamodb.throttles(table=table, key={"S": "hot"}) == 1
    local_dynamodb.advance(1)  # a second later the key has its units again
    handler.record({"device": "hot", "at": 11}, None)


@pytest.mark.local_dynamodb(update_seconds=60, start_time=START)
def test_a_second_update_while_updating_is_refused(local_dynamodb: LocalDynamoDB, table: str) -> None:
    create_table(table)
    local_dynamodb.advance(60)
    handler.more_capacity({"units": 5}, None)
    with pytest.raises(ClientError) as in_use:
        handler.more_capacity({"units": 10}, None)

    assert in_use.value.response["Error"]["Code"] == "ResourceInUseException"
    assert local_dynamodb.refusals(table=table, code="ResourceInUseException") == 1
    local_dynamodb.advance(60)  # UPDATING is over
    handler.more_capacity({"units": 10}, None)


@pytest.mark.local_dynamodb(control_plane_limit=2, start_time=START)
def test_tables_past_the_limit_in_transition_are_refused(local_dynamodb: LocalDynamoDB) -> None:
    create_table("readings-a")
    create_table("readings-b")  # both CREATING
    with pytest.raises(ClientError) as limited:
        create_table("readings-c")

    assert limited.value.response["Error"]["Code"] == "LimitExceededException"
    local_dynamodb.advance(60)  # both ACTIVE: room again
    create_table("readings-c")
