"""The stream archiver on real stream records (moto table -> GetRecords) written to moto S3."""

from __future__ import annotations

import base64
import json

import boto3

from cdk_ts_runtime._archive_lines import group_records
from cdk_ts_runtime._archiver import StreamRecordArchiver
from cdk_ts_runtime.handlers import archiver
from tests.support.conformance import NO_RETRIES
from tests.support.streams import BUCKET, archived_lines, lambda_event, spread_over_hours, stream_records
from tests.support.wire import S3_SLOW_DOWN, answer_error


def every_type_item():
    return {
        "pk": {"S": "device-1"},
        "sk": {"N": "1767225600000"},
        "exact": {"N": "12345678901234567890.123456789"},
        "negative": {"N": "-0.10"},
        "raw": {"B": b"\x00\xffbinary"},
        "flag": {"BOOL": True},
        "nothing": {"NULL": True},
        "tags": {"SS": ["a", "b"]},
        "scores": {"NS": ["1", "2.5"]},
        "blobs": {"BS": [b"\x01", b"\x02"]},
        "nested": {"M": {"inner": {"L": [{"S": "x"}, {"N": "3"}, {"M": {"deep": {"BOOL": False}}}]}}},
    }


def test_every_dynamodb_type_round_trips_through_the_archive(stream_table):
    dynamodb, stream = stream_table
    dynamodb.put_item(TableName="readings", Item=every_type_item())
    s3 = boto3.client("s3", region_name="us-east-1")

    assert StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3).archive(stream_records(stream)) == {
        "batchItemFailures": []
    }

    (line,) = archived_lines(s3)
    # every field is a string (or null): images are DynamoDB JSON text, so any JSON reader takes any item
    assert all(v is None or isinstance(v, str) for v in line.values())
    image = json.loads(line["newImage"])
    assert image["exact"] == {"N": "12345678901234567890.123456789"}
    assert image["negative"] == {"N": "-0.10"}
    assert base64.b64decode(image["raw"]["B"]) == b"\x00\xffbinary"
    assert (image["flag"], image["nothing"]) == ({"BOOL": True}, {"NULL": True})
    assert sorted(image["tags"]["SS"]) == ["a", "b"]
    assert sorted(image["scores"]["NS"]) == ["1", "2.5"]
    assert sorted(base64.b64decode(b) for b in image["blobs"]["BS"]) == [b"\x01", b"\x02"]
    assert image["nested"] == {"M": {"inner": {"L": [{"S": "x"}, {"N": "3"}, {"M": {"deep": {"BOOL": False}}}]}}}
    assert json.loads(line["keys"]) == {"pk": {"S": "device-1"}, "sk": {"N": "1767225600000"}}
    assert (line["eventName"], line["table"], line["oldImage"], line["userIdentity"]) == (
        "INSERT", "readings", None, None
    )


def test_exact_number_text_is_kept_in_the_json(stream_table):
    dynamodb, stream = stream_table
    dynamodb.put_item(
        TableName="readings",
        Item={"pk": {"S": "d"}, "sk": {"N": "1"}, "v": {"N": "0.1000000000000000055511151231257827"}},
    )
    s3 = boto3.client("s3", region_name="us-east-1")
    StreamRecordArchiver(BUCKET, s3_client=s3).archive(stream_records(stream))
    (line,) = archived_lines(s3)
    assert json.loads(line["newImage"])["v"] == {"N": "0.1000000000000000055511151231257827"}


def test_records_are_grouped_by_table_and_hour_into_deterministic_keys(stream_table):
    dynamodb, stream = stream_table
    for i in range(6):
        dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": str(i)}})
    records = spread_over_hours(stream_records(stream), [0, 0, 1, 1, 1, 2])
    s3 = boto3.client("s3", region_name="us-east-1")

    StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3).archive(records)

    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"])
    seq = [r["dynamodb"]["SequenceNumber"] for r in records]
    label = stream.rsplit("/", 1)[1].replace("-", "").replace(":", "").replace(".", "")
    assert keys == [
        f"dynamodb/table=readings/dt=2026-03-01/hour=22/{label}-{seq[0]}-{seq[1]}.jsonl.gz",
        f"dynamodb/table=readings/dt=2026-03-01/hour=23/{label}-{seq[2]}-{seq[4]}.jsonl.gz",
        f"dynamodb/table=readings/dt=2026-03-02/hour=00/{label}-{seq[5]}-{seq[5]}.jsonl.gz",
    ]
    assert [len(g.records) for g in group_records(records)] == [2, 3, 1]


def test_a_failed_write_reports_its_groups_first_record_and_writes_nothing_after_it(stream_table):
    dynamodb, stream = stream_table
    for i in range(6):
        dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": str(i)}})
    dynamodb.delete_item(TableName="readings", Key={"pk": {"S": "d"}, "sk": {"N": "0"}})
    records = spread_over_hours(stream_records(stream), [0, 0, 1, 1, 1, 2, 2])
    s3 = boto3.client("s3", region_name="us-east-1", config=NO_RETRIES)  # SlowDown is retried as a throttle
    failing = {"on": True}
    answered = answer_error(s3, "PutObject", S3_SLOW_DOWN, when=lambda p: failing["on"] and "/hour=23/" in p["Key"])
    archive = StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3)

    response = archive.archive(records)

    assert response == {"batchItemFailures": [{"itemIdentifier": records[2]["dynamodb"]["SequenceNumber"]}]}
    assert answered == {"answered": 1}
    assert {line["eventID"] for line in archived_lines(s3)} == {r["eventID"] for r in records[:2]}

    # Lambda retries from the reported record; with S3 healthy again everything is archived exactly once.
    failing["on"] = False
    assert archive.archive(records[2:]) == {"batchItemFailures": []}
    archive.archive(records)  # a whole-batch retry overwrites the same objects
    event_ids = [line["eventID"] for line in archived_lines(s3)]
    assert sorted(event_ids) == sorted(r["eventID"] for r in records)
    assert [line["eventName"] for line in archived_lines(s3)].count("REMOVE") == 1


def test_an_unreadable_record_fails_the_batch_instead_of_being_dropped(stream_table):
    dynamodb, stream = stream_table
    dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": "1"}})
    records = stream_records(stream)
    records[0]["eventSourceARN"] = "not-a-stream"
    s3 = boto3.client("s3", region_name="us-east-1")
    response = StreamRecordArchiver(BUCKET, s3_client=s3).archive(records)
    assert response == {"batchItemFailures": [{"itemIdentifier": records[0]["dynamodb"]["SequenceNumber"]}]}


def test_handler_reads_bucket_and_prefix_when_invoked(stream_table, monkeypatch):
    dynamodb, stream = stream_table
    dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": "1"}})
    lambda_style = stream_records(stream)
    for record in lambda_style:  # Lambda delivers epoch seconds and base64 text, not datetimes and bytes
        record["dynamodb"]["ApproximateCreationDateTime"] = record["dynamodb"][
            "ApproximateCreationDateTime"
        ].timestamp()
    monkeypatch.setenv("CDK_TS_ARCHIVE_BUCKET", BUCKET)
    monkeypatch.setenv("CDK_TS_ARCHIVE_PREFIX", "cdc/")
    assert archiver.handler({"Records": lambda_style}, None) == {"batchItemFailures": []}
    (obj,) = boto3.client("s3", region_name="us-east-1").list_objects_v2(Bucket=BUCKET)["Contents"]
    assert obj["Key"].startswith("cdc/table=readings/dt=")


def test_base64_binary_and_non_ascii_text_from_lambda_json_are_archived_as_sent(stream_table):
    # the values the archiver checks, in the form Lambda's JSON gives them: base64 text, escaped non-ASCII
    dynamodb, stream = stream_table
    dynamodb.put_item(TableName="readings", Item={
        "pk": {"S": "d"}, "sk": {"N": "1"}, "raw": {"B": b"\x00\xff"}, "blobs": {"BS": [b"", b"\x01"]},
        "name": {"S": "caf\u00e9 \U0001f600"}, "tags": {"SS": ["\u00fc"]}, "\u00e9t\u00e9": {"S": "summer"},
    })
    event = lambda_event(stream_records(stream))  # JSON escapes non-ASCII: the emoji travels as \\ud83d\\ude00
    s3 = boto3.client("s3", region_name="us-east-1")

    assert StreamRecordArchiver(BUCKET, s3_client=s3).archive(event["Records"]) == {"batchItemFailures": []}

    (line,) = archived_lines(s3)
    image = json.loads(line["newImage"])
    assert base64.b64decode(image["raw"]["B"]) == b"\x00\xff"
    assert sorted(base64.b64decode(b) for b in image["blobs"]["BS"]) == [b"", b"\x01"]
    assert image["name"] == {"S": "caf\u00e9 \U0001f600"}  # a surrogate pair escape is one character
    assert image["tags"] == {"SS": ["\u00fc"]} and image["\u00e9t\u00e9"] == {"S": "summer"}
