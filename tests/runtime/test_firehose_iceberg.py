"""IcebergTableSink's Firehose transformation: the documented record contracts, and a real Iceberg table's rows.

Sources of the contracts:
- the answer per record, ``recordId``/``result``/``data``: Firehose developer guide, "Required parameters for
  data transformation" (data-transformation-status-model.html);
- ``metadata.otfMetadata`` with ``destinationDatabaseName``, ``destinationTableName`` and ``operation``
  (``insert``/``update``/``delete``): "Route incoming records to different Iceberg tables", Lambda section
  (apache-iceberg-format-input-record-different.html);
- timestamps in microseconds: "Understand supported data types" (apache-iceberg-destination-supp.html);
- a DynamoDB change as Kinesis carries it: Powertools for AWS Lambda's ``DynamoDBStreamToKinesisRecord``
  schema and the DynamoDB developer guide, "Using Kinesis Data Streams to capture changes to DynamoDB".
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from decimal import Decimal

import boto3
import duckdb
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from cdk_ts.archive.iceberg_table_sink import sink_fields
from cdk_ts_runtime._compaction import ArchiveCompactor, restore_image
from cdk_ts_runtime._compaction_iceberg import IcebergSink
from cdk_ts_runtime._compaction_plan import ColumnSpec
from cdk_ts_runtime._firehose_iceberg import (
    ENV_ROUTE,
    FirehoseIcebergTransform,
    IcebergRoute,
    SinkMode,
    created_at_micros,
    partition_columns,
    unique_keys,
)
from cdk_ts_runtime.handlers import firehose_iceberg as handler_module
from tests.support.compaction import archive, compaction_settings, sample_changes
from tests.support.firehose import apply_answers, create_table, firehose_event, kinesis_change

COLUMNS = (ColumnSpec("temperature", "decimal(10,2)"), ColumnSpec("humidity", "double"))

#: A change as DynamoDB writes it to Kinesis Data Streams, field for field as the Powertools schema
#: ``DynamoDBStreamToKinesisRecord`` and the DynamoDB developer guide describe it (millisecond precision).
DOCUMENTED_CHANGE = {
    "awsRegion": "eu-west-1",
    "eventID": "4b25bd0da9a181a155114127e4837252",
    "eventName": "MODIFY",
    "userIdentity": None,
    "recordFormat": "application/json",
    "tableName": "readings",
    "dynamodb": {
        "ApproximateCreationDateTime": 1772405400123,
        "Keys": {"sk": {"N": "1000"}, "pk": {"S": "d-0"}},
        "NewImage": {"pk": {"S": "d-0"}, "sk": {"N": "1000"}, "temperature": {"N": "19.25"}, "humidity": {"N": "41.5"}},
        "OldImage": {"pk": {"S": "d-0"}, "sk": {"N": "1000"}, "temperature": {"N": "20.5"}, "humidity": {"N": "41.5"}},
        "SizeBytes": 110,
    },
    "eventSource": "aws:dynamodb",
}


#: The Lambda output the Firehose developer guide shows for Iceberg routing ("Route incoming records to different
#: Iceberg tables", Lambda section; its data shortened here): the shape every answer must have.
DOCUMENTED_ANSWER = {
    "recordId": "49655962066601463032522589543535113056108699331451682818000000",
    "result": "Ok",
    "data": "1IiwiI6ICJmYWxsIiwgImdgU21IiwiI6ICJmYWxsIiwg==",
    "metadata": {"otfMetadata": {
        "destinationTableName": "Device1234", "destinationDatabaseName": "IoTevents", "operation": "insert"}},
}


def shape(value):
    """The keys of ``value`` at every level (what a contract fixes), the leaves' types aside."""
    return {k: shape(v) for k, v in value.items()} if isinstance(value, dict) else None


def answer_rows(answers):
    return [json.loads(base64.b64decode(a["data"])) for a in answers["records"] if a["result"] == "Ok"]


def test_each_answer_has_the_documented_fields_and_routes_to_the_sink_table():
    route = IcebergRoute("archive", "changes", SinkMode.CHANGES, COLUMNS)
    event = firehose_event([DOCUMENTED_CHANGE])

    (answer,) = FirehoseIcebergTransform(route).transform(event)["records"]

    assert shape(answer) == shape(DOCUMENTED_ANSWER)
    assert answer["recordId"] == event["records"][0]["recordId"]
    assert answer["result"] == "Ok"
    assert answer["metadata"] == {"otfMetadata": {
        "destinationDatabaseName": "archive", "destinationTableName": "changes", "operation": "insert"}}
    row = json.loads(base64.b64decode(answer["data"]))
    # Firehose takes first-level fields as columns: one per field of the table it routes to
    assert list(row) == [name for name, _type, _required in sink_fields(route.mode, route.columns)]
    assert row["approximatecreationdatetime"] == 1772405400123000  # microseconds
    assert (row["table"], row["dt"], row["hour"]) == ("readings", "2026-03-01", "22")
    assert row["sequencenumber"] == event["records"][0]["kinesisRecordMetadata"]["sequenceNumber"]
    assert json.loads(row["keys"]) == {"pk": {"S": "d-0"}, "sk": {"N": "1000"}}
    assert list(json.loads(row["keys"])) == ["pk", "sk"]  # one text per item whatever order DynamoDB sends


def test_a_decimal_travels_as_an_exact_json_number_and_one_the_column_cannot_hold_is_null():
    route = IcebergRoute("archive", "changes", columns=COLUMNS)
    fits = json.loads(json.dumps(DOCUMENTED_CHANGE))
    rounds = json.loads(json.dumps(DOCUMENTED_CHANGE))
    rounds["dynamodb"]["NewImage"]["temperature"] = {"N": "20.555"}

    answers = FirehoseIcebergTransform(route).transform(firehose_event([fits, rounds]))

    texts = [base64.b64decode(a["data"]).decode() for a in answers["records"]]
    assert '"temperature":19.25,' in texts[0]
    assert '"temperature":null,' in texts[1]  # never 20.56: the compacted layer's rule, column_value's
    assert json.loads(texts[1])["newimage"] == json.dumps(rounds["dynamodb"]["NewImage"], separators=(",", ":"))


def test_every_record_is_answered_once_in_order_and_an_unreadable_one_fails_alone():
    route = IcebergRoute("archive", "changes")
    event = firehose_event([DOCUMENTED_CHANGE, DOCUMENTED_CHANGE, DOCUMENTED_CHANGE])
    event["records"][1]["data"] = base64.b64encode(b'{"eventSource": "aws:s3"}').decode()

    answers = FirehoseIcebergTransform(route).transform(event)["records"]

    assert [a["recordId"] for a in answers] == [r["recordId"] for r in event["records"]]
    assert [a["result"] for a in answers] == ["Ok", "ProcessingFailed", "Ok"]
    assert answers[1]["data"] == event["records"][1]["data"]  # given back as is, for the error bucket


@pytest.mark.parametrize(("event_name", "expected"), [("INSERT", "insert"), ("MODIFY", "update"), ("REMOVE", "delete")])
def test_latest_images_take_the_operation_of_their_event_and_every_change_is_an_insert(event_name, expected):
    change = {**DOCUMENTED_CHANGE, "eventName": event_name}
    latest = FirehoseIcebergTransform(IcebergRoute("archive", "items", SinkMode.LATEST))
    changes = FirehoseIcebergTransform(IcebergRoute("archive", "changes", SinkMode.CHANGES))

    (answer,) = latest.transform(firehose_event([change]))["records"]
    (logged,) = changes.transform(firehose_event([change]))["records"]

    assert answer["metadata"]["otfMetadata"]["operation"] == expected
    assert logged["metadata"]["otfMetadata"]["operation"] == "insert"
    assert unique_keys(SinkMode.LATEST) == ["table", "keys"] and unique_keys(SinkMode.CHANGES) == ["eventid"]


@pytest.mark.parametrize("value", [1772405400.123456, 1772405400123, 1772405400123456, "1772405400123"])
def test_creation_times_in_seconds_milliseconds_or_microseconds_all_become_microseconds(value):
    micros = created_at_micros(value)

    assert datetime.fromtimestamp(micros / 1e6, UTC).replace(microsecond=0) == datetime(2026, 3, 1, 22, 50, tzinfo=UTC)
    assert micros // 1000 == 1772405400123


def test_the_handler_reads_its_route_from_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_ROUTE, IcebergRoute("telemetry", "items", SinkMode.LATEST).to_json())

    (answer,) = handler_module.handler(firehose_event([DOCUMENTED_CHANGE]), None)["records"]

    assert answer["metadata"]["otfMetadata"] == {
        "destinationDatabaseName": "telemetry", "destinationTableName": "items", "operation": "update"}


def test_a_route_refuses_a_name_firehose_cannot_use_naming_it():
    with pytest.raises(ValueError, match="table 'my-table' must be 1-255 of"):
        IcebergRoute("archive", "my-table")
    with pytest.raises(ValueError, match="mode 'newest' is not one of"):
        IcebergRoute("archive", "changes", "newest")


# ---- the answers applied to a real Iceberg table (pyiceberg's SQL catalog) ----------------------------------

@pytest.fixture
def catalog(tmp_path):
    return SqlCatalog("local", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")


def sink_table(catalog, route):
    return create_table(catalog, f"{route.database}.{route.table}", sink_fields(route.mode, route.columns),
                        partition_columns(route.mode))


def test_latest_images_applied_to_iceberg_are_the_items_the_dynamodb_table_holds(stream_table, catalog):
    ddb, stream = stream_table
    records = sample_changes(ddb, stream)  # six puts, an update, a delete (moto's stream)
    route = IcebergRoute("archive", "items", SinkMode.LATEST, COLUMNS)
    table = sink_table(catalog, route)

    apply_answers(table, FirehoseIcebergTransform(route).transform(
        firehose_event(kinesis_change(r) for r in records)), unique_keys(route.mode))

    rows = duckdb.from_arrow(table.scan().to_arrow()).query(
        "sink", "SELECT keys, newimage, temperature FROM sink ORDER BY keys").fetchall()
    items = ddb.scan(TableName="readings")["Items"]
    assert {k: json.loads(image) for k, image, _t in rows} == {
        json.dumps({"pk": i["pk"], "sk": i["sk"]}, separators=(",", ":")): i for i in items}
    updated = json.dumps({"pk": {"S": "d-0"}, "sk": {"N": "1000"}}, separators=(",", ":"))
    assert {k: t for k, _image, t in rows}[updated] == pytest.approx(19.25)  # the update, exact in decimal(10,2)
    assert len(rows) == 5  # six puts, one deleted


def test_every_change_through_the_sink_reads_as_the_compaction_wrote_the_same_changes(stream_table, catalog):
    ddb, stream = stream_table
    records = sample_changes(ddb, stream)
    s3 = boto3.client("s3", region_name="us-east-1")
    archive(s3, records)
    settings = compaction_settings()  # hourly, the same declared columns as the sink's route below
    ArchiveCompactor(settings, s3_client=s3, sink=IcebergSink(catalog, "archive.compacted", settings)).run(
        now=datetime(2026, 3, 9, tzinfo=UTC), since=datetime(2026, 3, 1, tzinfo=UTC))
    route = IcebergRoute("archive", "changes", SinkMode.CHANGES, settings.columns)
    sink = sink_table(catalog, route)

    apply_answers(sink, FirehoseIcebergTransform(route).transform(
        firehose_event(kinesis_change(r) for r in records)), unique_keys(route.mode))

    compacted = {r["eventid"]: r for r in catalog.load_table("archive.compacted").scan().to_arrow().to_pylist()}
    streamed = {r["eventid"]: r for r in sink.scan().to_arrow().to_pylist()}
    assert streamed.keys() == compacted.keys() == {r["eventID"] for r in records}
    same = ["eventname", "approximatecreationdatetime", "useridentity", "table", "dt", "hour",
            *(c.name for c in settings.columns)]
    for event_id, row in streamed.items():
        other = compacted[event_id]
        assert {k: row[k] for k in same} == {k: other[k] for k in same}, event_id
        assert json.loads(row["keys"]) == json.loads(other["keys"])
        assert restore_image(row, settings.columns) == restore_image(other, settings.columns)
    assert Decimal("19.25") in {row["temperature"] for row in streamed.values()}  # the update, typed on both sides


def test_a_change_delivered_twice_is_one_row_per_eventid_when_read_as_the_raw_layer_is(stream_table, catalog):
    ddb, stream = stream_table
    records = sample_changes(ddb, stream)
    route = IcebergRoute("archive", "changes", SinkMode.CHANGES, COLUMNS)
    table = sink_table(catalog, route)
    changes = [kinesis_change(r) for r in records + records[2:5]]  # DynamoDB may write a change twice

    apply_answers(table, FirehoseIcebergTransform(route).transform(firehose_event(changes)), unique_keys(route.mode))

    arrow_table = table.scan().to_arrow()
    assert arrow_table.num_rows == len(records) + 3
    ((distinct,),) = duckdb.sql("SELECT count(*) FROM (SELECT DISTINCT ON (eventid) * FROM arrow_table)").fetchall()
    assert distinct == len(records)

