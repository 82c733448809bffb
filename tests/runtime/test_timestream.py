"""TimestreamWriter against moto's Timestream: MULTI records, common attributes, batches of 100, rejections."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
import pytest
from moto.timestreamwrite.models import timestreamwrite_backends

from cdk_ts_runtime._errors import EnvironmentVariableMissingError
from cdk_ts_runtime._timestream import (
    ENV_DATABASE_NAME,
    ENV_TABLE_NAME,
    TimestreamWriter,
    build_query,
    lift_common_attributes,
    measure_value,
)
from tests.support import wire
from tests.support.requests import RequestCounter

ENDPOINT = "https://ingest.timestream.us-east-1.amazonaws.com"


@pytest.fixture
def writer(aws):
    client = boto3.client("timestream-write", region_name="us-east-1", endpoint_url=ENDPOINT)
    client.create_database(DatabaseName="fleet")
    client.create_table(DatabaseName="fleet", TableName="telemetry")
    return TimestreamWriter("fleet", "telemetry", dimensions=["vin", "fleet"], client=client, sleep=lambda _s: None)


#: What ``TimestreamTable.bind`` sets on a function, for the database ``fleet`` and its table ``telemetry``.
BOUND = {ENV_DATABASE_NAME: "fleet", ENV_TABLE_NAME: "telemetry"}


def stored(region="us-east-1"):
    return timestreamwrite_backends["123456789012"][region].databases["fleet"].tables["telemetry"].records


def create_table(region="us-east-1"):
    endpoint = f"https://ingest.timestream.{region}.amazonaws.com"
    client = boto3.client("timestream-write", region_name=region, endpoint_url=endpoint)
    client.create_database(DatabaseName="fleet")
    client.create_table(DatabaseName="fleet", TableName="telemetry")


def vehicle(i, **extra):
    """The guidance's vehicle event: identifiers as dimensions, every reading a measure."""
    return {
        "vin": f"1FT{i:06d}",
        "fleet": "Alpha",
        "time": datetime(2026, 3, 1, tzinfo=UTC) + timedelta(seconds=i),
        "speed": 42.5,
        "odometer": 120000 + i,
        "fuel_percent": Decimal("61.2"),
        "engine_on": True,
        "gear": "D",
        "last_service": "2026-01-15T08:30:00+00:00",
        **extra,
    }


def test_events_become_multi_records_with_inferred_types(writer):
    counter = RequestCounter(writer.client)
    result = writer.write([vehicle(1)])
    assert (result.records_ingested, result.rejected) == (1, [])
    (record,) = stored()
    (params,) = [p for op, p in counter.params if op == "WriteRecords"]
    common = params["CommonAttributes"]
    assert (common["MeasureValueType"], common["MeasureName"], common["TimeUnit"]) == (
        "MULTI",
        "metrics",
        "MILLISECONDS",
    )
    types = {m["Name"]: (m["Type"], m["Value"]) for m in record["MeasureValues"]}
    assert types == {
        "speed": ("DOUBLE", "42.5"),
        "odometer": ("BIGINT", "120001"),
        "fuel_percent": ("DOUBLE", "61.2"),
        "engine_on": ("BOOLEAN", "true"),
        "gear": ("VARCHAR", "D"),
        "last_service": ("TIMESTAMP", str(int(datetime(2026, 1, 15, 8, 30, tzinfo=UTC).timestamp() * 1000))),
    }
    assert record["Time"] == str(int(datetime(2026, 3, 1, 0, 0, 1, tzinfo=UTC).timestamp() * 1000))


def test_batches_of_100_with_the_shared_dimension_lifted(writer):
    counter = RequestCounter(writer.client)
    result = writer.write([vehicle(i) for i in range(250)])
    assert result.records_ingested == 250
    calls = [p for op, p in counter.params if op == "WriteRecords"]
    assert [len(p["Records"]) for p in calls] == [100, 100, 50]
    for params in calls:
        assert params["CommonAttributes"]["Dimensions"] == [{"Name": "fleet", "Value": "Alpha"}]
        assert all(
            r["Dimensions"] == [{"Name": "vin", "Value": r["Dimensions"][0]["Value"]}] for r in params["Records"]
        )
    assert len(stored()) == 250


# Timestream's answers on the wire, parsed by botocore (members from its timestream-write model). A real
# RejectedRecordsException, quoted in dpattmann/prometheus-timestream-adapter#87: status 419, this message,
# and this reason for a record written again with the same version. ``__type`` is the bare code: no public trace
# shows Timestream's namespace, and botocore's JSON parser takes the code after any ``#`` either way.
DUPLICATE_REASON = (
    "A record already exists with the same time, dimensions, measure name, and record version. A higher record "
    "version must be specified in order to update the measure value. Specifying record version is supported by "
    "the latest SDKs."
)


def rejected_body(index: int) -> bytes:
    return json.dumps({
        "__type": "RejectedRecordsException",
        "Message": "One or more records have been rejected. See RejectedRecords for details.",
        "RejectedRecords": [{"RecordIndex": index, "Reason": DUPLICATE_REASON}],
    }).encode()


#: ThrottlingException's documentation in botocore's timestream-write model, as its message.
THROTTLING_BODY = json.dumps({
    "__type": "ThrottlingException",
    "Message": "Too many requests were made by a user and they exceeded the service quotas. The request was throttled.",
}).encode()


def test_rejected_records_are_returned_with_their_reason(writer):
    answered = wire.answer(
        writer.client, "WriteRecords", lambda request: rejected_body(3) if len(request["Records"]) == 50 else None,
        status=419,
    )
    events = [vehicle(i) for i in range(150)]
    result = writer.write(events)
    assert answered == {"answered": 1}
    assert result.records_ingested == 149
    assert result.rejected == [{"event": events[103], "reason": DUPLICATE_REASON}]


def test_events_that_cannot_be_records_are_rejected_before_sending(writer):
    result = writer.write(
        [
            {"vin": "x", "time": datetime(2026, 3, 1, tzinfo=UTC), "speed": 1.0},
            {"vin": "y", "fleet": "A", "speed": 1.0},
            vehicle(1),
        ]
    )
    assert result.records_ingested == 1
    assert [r["reason"] for r in result.rejected] == ["dimension(s) ['fleet'] missing", "time field 'time' missing"]


def test_throttling_is_retried(writer):
    throttles = iter([THROTTLING_BODY])
    answered = wire.answer(writer.client, "WriteRecords", lambda _request: next(throttles, None))
    assert writer.write([vehicle(1)]).records_ingested == 1
    assert answered == {"answered": 1} and len(stored()) == 1


def test_the_writer_made_with_neither_client_nor_endpoint_writes_through_the_sdks_endpoint_discovery(
    timestream_calls,
):
    # botocore's model marks timestream-write as requiring endpoint discovery: the default client asks once
    writer = TimestreamWriter("fleet", "telemetry", dimensions=["vin", "fleet"])
    assert writer.write([vehicle(i) for i in range(150)]).records_ingested == 150
    assert timestream_calls == {"DescribeEndpoints": 1, "WriteRecords": 2}
    assert len(stored()) == 150


def test_common_attributes_keep_per_record_dimensions():
    records = [
        {
            "Dimensions": [{"Name": "vin", "Value": v}, {"Name": "fleet", "Value": "A"}],
            "MeasureName": "m",
            "MeasureValueType": "MULTI",
            "MeasureValues": [],
            "Time": "1",
            "TimeUnit": "MILLISECONDS",
        }
        for v in ("1", "2")
    ]
    slim, common = lift_common_attributes(records)
    assert common["Dimensions"] == [{"Name": "fleet", "Value": "A"}]
    assert [r["Dimensions"] for r in slim] == [[{"Name": "vin", "Value": "1"}], [{"Name": "vin", "Value": "2"}]]


def test_nested_values_are_kept_as_json_text():
    assert measure_value("tags", {"b": 1, "a": [1, 2]}) == {
        "Name": "tags",
        "Value": '{"a": [1, 2], "b": 1}',
        "Type": "VARCHAR",
    }


def test_queries_are_always_bounded_in_time_and_filter_on_the_partition_key():
    query = build_query(
        "fleet",
        "telemetry",
        start=datetime(2026, 3, 1, tzinfo=UTC),
        end=datetime(2026, 3, 2, tzinfo=UTC),
        columns=["vin", "speed"],
        partition_key="vin",
        partition_value="1FT'x",
    )
    assert query == (
        'SELECT "vin", "speed" FROM "fleet"."telemetry" WHERE time BETWEEN '
        "from_iso8601_timestamp('2026-03-01T00:00:00.000000Z') AND "
        "from_iso8601_timestamp('2026-03-02T00:00:00.000000Z') "
        "AND \"vin\" = '1FT''x'"
    )
    with pytest.raises(ValueError, match="timezone-aware"):
        build_query("d", "t", start=datetime(2026, 3, 1), end=datetime(2026, 3, 2))
    with pytest.raises(ValueError, match="after end"):
        build_query("d", "t", start=datetime(2026, 3, 2, tzinfo=UTC), end=datetime(2026, 3, 1, tzinfo=UTC))


# ---- from_env: the names bind sets, and the SDK's endpoint discovery ----------------------------------------


@pytest.fixture
def timestream_calls(aws):
    """The table ``fleet.telemetry``, then every timestream-write call of any client boto3 makes, by operation.

    Counted on boto3's default session, so the clients the writer makes count from their creation on.
    """
    create_table()
    calls: Counter[str] = Counter()

    def count(model, **_kwargs):
        calls[model.name] += 1

    session = boto3._get_default_session()
    session.events.register("provide-client-params.timestream-write", count)
    yield calls
    session.events.unregister("provide-client-params.timestream-write", count)


@pytest.mark.parametrize("env", [{}, {ENV_DATABASE_NAME: "fleet"}, {ENV_TABLE_NAME: "", ENV_DATABASE_NAME: "fleet"}])
def test_from_env_without_the_names_says_which_are_missing_and_what_sets_them(env, timestream_calls):
    with pytest.raises(EnvironmentVariableMissingError) as missing:
        TimestreamWriter.from_env(env, dimensions=["vin"])
    assert missing.value.names == tuple(name for name in (ENV_DATABASE_NAME, ENV_TABLE_NAME) if not env.get(name))
    assert "bind the function with TimestreamTable.bind" in str(missing.value)
    assert isinstance(missing.value, KeyError) and timestream_calls == {}


def test_from_env_discovers_the_endpoint_once_and_the_writes_land(timestream_calls):
    # when the writer is made from the environment bind sets, with neither client nor endpoint_url
    writer = TimestreamWriter.from_env(BOUND, dimensions=["vin", "fleet"])
    made = dict(timestream_calls)
    first = writer.write([vehicle(i) for i in range(150)])
    second = writer.write([vehicle(i) for i in range(150, 160)])
    # then nothing was called until the first write, botocore asked for the endpoint once and kept it,
    # and every record is in the table
    assert made == {}
    assert timestream_calls == {"DescribeEndpoints": 1, "WriteRecords": 3}
    assert (writer.database_name, writer.table_name) == ("fleet", "telemetry")
    assert (first.records_ingested, first.rejected, second.records_ingested) == (150, [], 10)
    assert len(stored()) == 160


def test_the_default_client_writes_in_the_configured_region(monkeypatch, aws):
    # the table is in eu-west-1 only
    create_table("eu-west-1")
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.setenv(name, "eu-west-1")
    writer = TimestreamWriter.from_env(BOUND, dimensions=["vin", "fleet"])
    assert writer.client.meta.region_name == "eu-west-1"
    assert writer.write([vehicle(1)]).records_ingested == 1
    assert len(stored("eu-west-1")) == 1


def test_from_env_with_an_endpoint_url_writes_there_without_asking(timestream_calls):
    writer = TimestreamWriter.from_env(BOUND, dimensions=["vin", "fleet"], endpoint_url=ENDPOINT)
    assert writer.client.meta.endpoint_url == ENDPOINT
    assert writer.write([vehicle(1)]).records_ingested == 1
    assert timestream_calls == {"WriteRecords": 1}
    assert len(stored()) == 1


def test_from_env_uses_the_callers_client_as_given(timestream_calls):
    client = boto3.client("timestream-write", region_name="us-east-1", endpoint_url=ENDPOINT)
    writer = TimestreamWriter.from_env(BOUND, dimensions=["vin"], client=client)
    assert writer.client is client
    writer.client = replacement = boto3.client("timestream-write", region_name="us-east-1", endpoint_url=ENDPOINT)
    assert writer.write([vehicle(1)]).records_ingested == 1
    assert writer.client is replacement and timestream_calls == {"WriteRecords": 1}


#: Arguments the constructor refuses, with the start of its message.
BAD_ARGUMENTS = [
    ({"dimensions": []}, "dimensions must name at least one event attribute"),
    ({"time_field": "vin"}, "time_field 'vin' cannot also be a dimension"),
]


@pytest.mark.parametrize(("arguments", "message"), BAD_ARGUMENTS)
def test_bad_arguments_are_refused_before_any_call_to_aws(arguments, message, timestream_calls):
    with pytest.raises(ValueError, match=message):
        TimestreamWriter.from_env(BOUND, **{"dimensions": ["vin"], **arguments})
    assert timestream_calls == {}


@pytest.mark.parametrize(("arguments", "message"), BAD_ARGUMENTS)
def test_bad_arguments_are_refused_before_the_default_discovery_client_is_made(arguments, message, monkeypatch):
    # with no Region configured, making the default client would fail first (NoRegionError) and hide the
    # argument error; the arguments are checked before the client is made
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ValueError, match=message):
        TimestreamWriter.from_env(BOUND, **{"dimensions": ["vin"], **arguments})
