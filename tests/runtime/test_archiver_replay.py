"""Replay from the S3 on-failure destination: the whole outage timeline, the handler operation and the CLI."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest

from cdk_ts_runtime._archiver import StreamRecordArchiver, failure_record_records, main
from cdk_ts_runtime.handlers import archiver as archiver_handler
from tests.support.conformance import NO_RETRIES
from tests.support.streams import BUCKET, archived_lines, lambda_style, spread_over_hours, stream_records
from tests.support.wire import S3_ACCESS_DENIED, S3_SLOW_DOWN, answer_error

FAILURES = "archive-failures"


def failure_record(records, *, function_arn="arn:aws:lambda:us-east-1:123456789012:function:archiver", attempts=11):
    """The invocation record Lambda writes to an S3 on-failure destination for a DynamoDB stream mapping.

    The shape AWS documents (https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html):
    requestContext, responseContext, version, timestamp, DDBStreamBatchInfo and, for S3 only, the whole
    invocation event as ``payload``.
    """
    first, last = records[0], records[-1]
    return {
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": function_arn,
            "condition": "RetryAttemptsExhausted",
            "approximateInvokeCount": attempts,
        },
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
        "version": "1.0",
        "timestamp": "2026-03-02T00:13:49.717Z",
        "DDBStreamBatchInfo": {
            "shardId": "shardId-00000001573689847184-864758bb",
            "startSequenceNumber": first["dynamodb"]["SequenceNumber"],
            "endSequenceNumber": last["dynamodb"]["SequenceNumber"],
            "approximateArrivalOfFirstRecord": "2026-03-01T22:30:00Z",
            "approximateArrivalOfLastRecord": "2026-03-02T00:30:00Z",
            "batchSize": len(records),
            "streamArn": first["eventSourceARN"],
        },
        "payload": json.dumps({"Records": records}),
    }


def failure_key(mapping_uuid="6e9b2a4c-0000-4000-8000-000000000001"):
    """The documented key: aws/lambda/<ESM-UUID>/<shardID>/YYYY/MM/DD/YYYY-MM-DDTHH.MM.SS-<Random UUID>."""
    shard = "shardId-00000001573689847184-864758bb"
    return f"aws/lambda/{mapping_uuid}/{shard}/2026/03/02/2026-03-02T00.13.49-{uuid.uuid4()}"


class Mapping:
    """Lambda's stream event source mapping, reduced to what matters here.

    ReportBatchItemFailures: the next attempt starts at the reported record; after ``retry_attempts``
    retries the remaining batch is written to the S3 on-failure destination as a failure record.
    """

    def __init__(self, archiver, s3, retry_attempts=3):
        self.archiver, self.s3, self.retry_attempts = archiver, s3, retry_attempts
        self.failure_keys = []

    def deliver(self, batch):
        for _attempt in range(self.retry_attempts + 1):
            failures = self.archiver.archive(batch)["batchItemFailures"]
            if not failures:
                return True
            first = failures[0]["itemIdentifier"]
            batch = batch[[r["dynamodb"]["SequenceNumber"] for r in batch].index(first):]
        key = failure_key()
        self.s3.put_object(Bucket=FAILURES, Key=key, Body=json.dumps(failure_record(batch)).encode())
        self.failure_keys.append(key)
        return False


def odd_items():
    return [
        {"pk": {"S": "case"}, "sk": {"N": "1"}, "Url": {"S": "https://a.example/"}, "url": {"S": "lower"}},
        {"pk": {"S": "mixed"}, "sk": {"N": "2"}, "list": {"L": [{"S": "x"}, {"N": "1"}, {"BOOL": True}]}},
        {"pk": {"S": "big"}, "sk": {"N": "3"}, "n": {"N": "12345678901234567890123456789012345678"}},
    ]


@pytest.fixture
def s3(stream_table):
    client = boto3.client("s3", region_name="us-east-1", config=NO_RETRIES)  # SlowDown is retried as a throttle
    client.create_bucket(Bucket=FAILURES)
    return client


def keys_under(s3, bucket, prefix):
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]


def test_an_outage_longer_than_the_retries_loses_nothing_once_replayed(stream_table, s3):
    # given records spread over three hours, archived by a mapping that gives up after 3 retries
    dynamodb, stream = stream_table
    for item in odd_items():
        dynamodb.put_item(TableName="readings", Item=item)
    for sk in range(10, 15):
        dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": str(sk)}})
    records = lambda_style(spread_over_hours(stream_records(stream), [0, 0, 0, 1, 1, 1, 2, 2]))
    outage = {"on": False}
    answered = answer_error(s3, "PutObject", S3_ACCESS_DENIED, when=lambda p: outage["on"] and p["Bucket"] == BUCKET)
    archiver = StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3)
    mapping = Mapping(archiver, s3)

    # when the first batch is archived, then S3 writes fail from the second hour on (a partial success)
    assert mapping.deliver(records[:2])
    written_before = set(keys_under(s3, BUCKET, "dynamodb/"))
    outage["on"] = True
    assert not mapping.deliver(records[2:5])
    assert not mapping.deliver(records[5:])
    # ... the failure records hold the whole batch (payload), not just the sequence range
    assert len(keys_under(s3, FAILURES, "aws/lambda/")) == 2
    assert answered == {"answered": 8}  # two batches, each tried 1 + 3 times, refused at its first write
    # and the outage ends and the replay runs (twice: a second run finds nothing left to do)
    outage["on"] = False
    report = archiver.replay(FAILURES)
    again = archiver.replay(FAILURES)

    # then every record is in the archive exactly once, the partial success was overwritten, not duplicated
    lines = archived_lines(s3)
    assert sorted(line["eventID"] for line in lines) == sorted(r["eventID"] for r in records)
    assert written_before <= set(keys_under(s3, BUCKET, "dynamodb/"))
    assert report["records"] == 6 and report["failed"] == []
    assert sorted(r["failure"] for r in report["replayed"]) == sorted(mapping.failure_keys)
    assert again == {"replayed": [], "failed": [], "records": 0}
    # and nothing in the failure prefix is left unmarked: each failure record moved under done/
    assert keys_under(s3, FAILURES, "aws/lambda/") == []
    assert sorted(keys_under(s3, FAILURES, "done/")) == sorted("done/" + k for k in mapping.failure_keys)
    # and the odd items read back exactly
    images = {json.loads(line["keys"])["pk"]["S"]: json.loads(line["newImage"]) for line in lines}
    assert (images["case"]["Url"], images["case"]["url"]) == ({"S": "https://a.example/"}, {"S": "lower"})
    assert images["big"]["n"] == {"N": "12345678901234567890123456789012345678"}


def test_a_failure_record_is_marked_done_only_after_all_its_records_are_written(stream_table, s3):
    dynamodb, stream = stream_table
    for sk in range(4):
        dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": str(sk)}})
    records = lambda_style(spread_over_hours(stream_records(stream), [0, 0, 1, 1]))
    key = failure_key()
    s3.put_object(Bucket=FAILURES, Key=key, Body=json.dumps(failure_record(records)).encode())
    broken = failure_key("broken")
    s3.put_object(Bucket=FAILURES, Key=broken, Body=b'{"DDBStreamBatchInfo": {}}')  # an SQS-style record: no payload
    failing = {"on": True}
    answered = answer_error(s3, "PutObject", S3_SLOW_DOWN, when=lambda p: failing["on"] and "/hour=23/" in p["Key"])
    archiver = StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3)

    report = archiver.replay(FAILURES)
    assert answered == {"answered": 1}
    assert [f["failure"] for f in report["failed"]] == sorted([key, broken])
    assert "only an S3 on-failure destination keeps the records" in json.dumps(report["failed"])
    assert sorted(keys_under(s3, FAILURES, "aws/lambda/")) == sorted([key, broken])  # both still to do

    failing["on"] = False
    report = archiver.replay(FAILURES)
    assert [r["failure"] for r in report["replayed"]] == [key]
    assert keys_under(s3, FAILURES, "aws/lambda/") == [broken]
    assert sorted(line["eventID"] for line in archived_lines(s3)) == sorted(r["eventID"] for r in records)


def test_the_payload_is_read_as_json_text_or_as_an_object(stream_table):
    dynamodb, stream = stream_table
    dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": "1"}})
    records = lambda_style(stream_records(stream))
    document = failure_record(records)
    assert failure_record_records(document) == records
    assert failure_record_records({**document, "payload": {"Records": records}}) == records
    with pytest.raises(ValueError, match="no DDBStreamBatchInfo"):
        failure_record_records({"Records": records})


def test_the_handler_replays_from_the_configured_failure_bucket(stream_table, s3, monkeypatch):
    dynamodb, stream = stream_table
    dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": "1"}})
    records = lambda_style(stream_records(stream))
    key = failure_key()
    s3.put_object(Bucket=FAILURES, Key=key, Body=json.dumps(failure_record(records)).encode())
    monkeypatch.setenv("CDK_TS_ARCHIVE_BUCKET", BUCKET)
    monkeypatch.setenv("CDK_TS_ARCHIVE_PREFIX", "cdc/")
    monkeypatch.setenv("CDK_TS_ARCHIVE_FAILURE_BUCKET", FAILURES)

    report = archiver_handler.handler({"Operation": "replay"}, None)

    assert report["records"] == 1 and report["replayed"][0]["objects"][0].startswith("cdc/table=readings/dt=")
    with pytest.raises(ValueError, match="unknown Operation 'replays'"):
        archiver_handler.handler({"Operation": "replays"}, None)


def test_the_command_line_replays_and_prints_the_report(stream_table, s3, capsys):
    dynamodb, stream = stream_table
    dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": "1"}})
    key = failure_key()
    s3.put_object(Bucket=FAILURES, Key=key, Body=json.dumps(failure_record(lambda_style(stream_records(stream)))))

    code = main(["replay", "--bucket", FAILURES, "--archive-bucket", BUCKET, "--archive-prefix", "x/", "--json"],
                s3_client=s3)

    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["replayed"][0]["failure"] == key and report["replayed"][0]["done"] == "done/" + key
    assert keys_under(s3, BUCKET, "x/table=readings/")


def test_a_done_prefix_inside_the_failure_prefix_is_refused():
    with pytest.raises(ValueError, match="outside 'aws/lambda/'"):
        StreamRecordArchiver(BUCKET, s3_client=object()).replay(FAILURES, done_prefix="aws/lambda/done/")


def test_period_table_mappings_send_give_ups_to_the_failure_bucket(stream_table, s3):
    # given the consumer settings the construct hands the rotation function (S3 failure destination)
    from cdk_ts_runtime._stream_consumer import StreamConsumer
    from tests.support.streams import consumer_function

    _dynamodb, stream = stream_table
    consumer = StreamConsumer(function_name=consumer_function(), on_failure_destination_arn=f"arn:aws:s3:::{FAILURES}")
    lambda_client = boto3.client("lambda", region_name="us-east-1")
    # when it maps a new table's stream
    assert consumer.attach(lambda_client, stream)
    # then the mapping's failure destination is the bucket, where Lambda keeps the whole batch
    (mapping,) = lambda_client.list_event_source_mappings(EventSourceArn=stream)["EventSourceMappings"]
    assert mapping["DestinationConfig"] == {"OnFailure": {"Destination": f"arn:aws:s3:::{FAILURES}"}}


def test_a_failure_record_holding_a_value_streams_never_sends_stays_in_place_and_nothing_of_it_is_archived(
    stream_table, s3
):
    dynamodb, stream = stream_table
    for sk in range(3):
        dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": str(sk)}})
    records = lambda_style(stream_records(stream))
    records[1]["dynamodb"]["NewImage"]["v"] = {"S": "@"}
    document = {**failure_record(records), "payload": {"Records": records}}
    key = failure_key()
    s3.put_object(Bucket=FAILURES, Key=key, Body=json.dumps(document).replace('"@"', '"\\ud800"').encode())

    report = StreamRecordArchiver(BUCKET, s3_client=s3).replay(FAILURES)

    assert report["replayed"] == [] and report["records"] == 0
    assert [f["failure"] for f in report["failed"]] == [key]
    assert "lone surrogate" in report["failed"][0]["error"]
    assert keys_under(s3, FAILURES, "aws/lambda/") == [key]
    assert archived_lines(s3) == []
