"""Every client the runtime creates carries the retry settings of its path; a client passed in is used as given."""

from __future__ import annotations

import boto3
import pytest

from cdk_ts_runtime import DeviceLogRepository, PeriodRouter, ShardedTable, TimestreamWriter


@pytest.fixture(autouse=True)
def region(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "unit")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "unit")


def attempts(client) -> int:
    retries = client.meta.config.retries
    assert retries["mode"] == "standard"
    return retries["total_max_attempts"]


def requests_sent(client) -> int:
    # given a client pointed at a port nothing listens on, count the requests one call sends
    sent = []
    client.meta.events.register("before-send.*.*", lambda **_kw: sent.append(1))
    with pytest.raises(Exception):  # noqa: B017, PT011 - any connection error; the count is the point
        client.list_tables()
    return len(sent)


def test_the_sharded_write_path_sees_the_first_throttle_and_reads_keep_the_sdks_retries():
    table = ShardedTable("t", "m", partition_key="pk", sort_key="sk")
    assert attempts(table.dynamodb) == 1  # the writer moves the write or grows the key itself
    assert attempts(table.read_dynamodb) == 3
    # METRICS, the CloudWatch setting shared with the rotation: 2 requests (short timeouts, then the tier as is)
    assert attempts(table.cloudwatch) == 2


def test_one_write_path_attempt_is_one_request_on_the_wire():
    table = ShardedTable("t", "m", partition_key="pk", sort_key="sk")
    client = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:9", config=table.dynamodb.meta.config)
    assert requests_sent(client) == 1


def test_router_and_device_log_reads_writes_and_batches_keep_three_sdk_attempts():
    router = PeriodRouter("readings")
    assert attempts(router.dynamodb) == 3
    assert attempts(router.batch_dynamodb) == 3  # the router's own loop retries UnprocessedItems
    assert attempts(DeviceLogRepository("log").dynamodb) == 3


def test_the_timestream_writer_is_the_only_retry_loop_of_its_writes():
    writer = TimestreamWriter("db", "t", dimensions=["vin"], endpoint_url="https://ingest.example")
    assert attempts(writer.client) == 1


def test_clients_passed_in_are_used_as_given():
    given = boto3.client("dynamodb")
    table = ShardedTable("t", "m", partition_key="pk", sort_key="sk", dynamodb_client=given)
    router = PeriodRouter("readings", dynamodb_client=given)
    assert table.dynamodb is given and table.read_dynamodb is given
    assert router.dynamodb is given and router.batch_dynamodb is given
    reader = boto3.client("dynamodb")
    split = ShardedTable(
        "t", "m", partition_key="pk", sort_key="sk", dynamodb_client=given, dynamodb_read_client=reader
    )
    assert (split.dynamodb, split.read_dynamodb) == (given, reader)
