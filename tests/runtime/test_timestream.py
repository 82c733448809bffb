"""TimestreamWriter against moto's Timestream: MULTI records, common attributes, batches of 100, rejections."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
import pytest
from botocore.exceptions import ClientError
from moto.timestreamwrite.models import timestreamwrite_backends

from cdk_ts_runtime._timestream import TimestreamWriter, build_query, lift_common_attributes, measure_value
from tests.support.requests import RequestCounter, inject_failure

ENDPOINT = "https://ingest.timestream.us-east-1.amazonaws.com"


@pytest.fixture
def writer(aws):
    client = boto3.client("timestream-write", region_name="us-east-1", endpoint_url=ENDPOINT)
    client.create_database(DatabaseName="fleet")
    client.create_table(DatabaseName="fleet", TableName="telemetry")
    return TimestreamWriter("fleet", "telemetry", dimensions=["vin", "fleet"], client=client, sleep=lambda _s: None)


def stored():
    return timestreamwrite_backends["123456789012"]["us-east-1"].databases["fleet"].tables["telemetry"].records


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


def test_rejected_records_are_returned_with_their_reason(writer):
    def reject_fourth(params):
        if len(params["Records"]) == 50:
            return ClientError(
                {
                    "Error": {"Code": "RejectedRecordsException", "Message": "rejected"},
                    "RejectedRecords": [{"RecordIndex": 3, "Reason": "Duplicate record with different values"}],
                },
                "WriteRecords",
            )
        return None

    inject_failure(writer.client, "WriteRecords", reject_fourth)
    events = [vehicle(i) for i in range(150)]
    result = writer.write(events)
    assert result.records_ingested == 149
    assert result.rejected == [{"event": events[103], "reason": "Duplicate record with different values"}]


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
    failures = iter([ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "WriteRecords")])
    inject_failure(writer.client, "WriteRecords", lambda _p: next(failures, None))
    assert writer.write([vehicle(1)]).records_ingested == 1


def test_the_writer_needs_an_explicit_endpoint():
    with pytest.raises(ValueError, match="endpoint_url"):
        TimestreamWriter("db", "t", dimensions=["vin"])


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
