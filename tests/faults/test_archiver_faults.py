"""The archiver never reports "done" for a record it did not write: unreadable records, bad numbers, bad times."""

from __future__ import annotations

import copy

import boto3
import pytest

from cdk_ts_runtime.archive_lines import UnreadableRecordError, dynamodb_number
from cdk_ts_runtime.archiver import StreamRecordArchiver
from tests.runtime.test_archiver import BUCKET, archived_lines, stream_records, table  # noqa: F401 - fixture


@pytest.fixture
def records(table):  # noqa: F811 - the fixture imported above
    dynamodb, stream = table
    for sk in range(6):
        dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": str(sk)}})
    return stream_records(stream)


def archive(records):
    s3 = boto3.client("s3", region_name="us-east-1")
    return StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3).archive(records), s3


def written(s3):
    return sorted(line["eventID"] for line in archived_lines(s3))


@pytest.mark.parametrize(
    "damage",
    [
        lambda r: r["dynamodb"].pop("ApproximateCreationDateTime"),
        lambda r: r.__setitem__("eventSourceARN", ""),
        lambda r: r["dynamodb"].__setitem__("ApproximateCreationDateTime", 1e20),  # year out of range
        lambda r: r["dynamodb"]["NewImage"].__setitem__("sk", {"N": "1.2.3"}),
        lambda r: r["dynamodb"]["NewImage"].__setitem__("sk", {"N": "NaN"}),
        lambda r: r["dynamodb"]["NewImage"].__setitem__("sk", {"N": "1" * 39}),
        lambda r: r["dynamodb"]["NewImage"].__setitem__("sk", {"NS": ["1", "x"]}),
        lambda r: r["dynamodb"]["NewImage"].__setitem__("sk", {"Q": "?"}),
    ],
)
def test_records_before_an_unreadable_one_are_written_and_it_is_reported(records, damage):
    broken = copy.deepcopy(records)
    keep_sequence = broken[3]["dynamodb"]["SequenceNumber"]
    damage(broken[3])
    response, s3 = archive(broken)
    assert written(s3) == sorted(r["eventID"] for r in records[:3])
    assert response == {"batchItemFailures": [{"itemIdentifier": keep_sequence}]}


def test_a_record_without_dynamodb_and_so_without_a_sequence_number_fails_the_whole_batch(records):
    broken = copy.deepcopy(records)
    del broken[3]["dynamodb"]
    with pytest.raises(UnreadableRecordError, match="no sequence number"):
        archive(broken)


@pytest.mark.parametrize("sequence", ["", "   ", None, 42])
def test_the_reproduction_empty_first_sequence_then_unreadable_never_reports_done(records, sequence):
    broken = copy.deepcopy(records)
    broken[0]["dynamodb"]["SequenceNumber"] = sequence
    broken[1]["dynamodb"].pop("NewImage")
    broken[1]["eventSourceARN"] = "garbage"
    with pytest.raises(UnreadableRecordError):
        archive(broken)


def test_a_later_record_without_a_sequence_fails_the_batch_after_writing_what_came_before(records):
    broken = copy.deepcopy(records)
    broken[4]["dynamodb"]["SequenceNumber"] = ""
    with pytest.raises(UnreadableRecordError):
        _response, _s3 = archive(broken)
    assert written(boto3.client("s3", region_name="us-east-1")) == sorted(r["eventID"] for r in records[:4])


def test_an_empty_failure_list_means_every_record_was_written(records):
    response, s3 = archive(records)
    assert response == {"batchItemFailures": []}
    assert written(s3) == sorted(r["eventID"] for r in records)


@pytest.mark.parametrize("text", ["0", "-0.10", "12345678901234567890123456789012345678", "1E+125", "1.5e-130"])
def test_dynamodb_numbers_pass_the_check(text):
    assert dynamodb_number(text) == text


@pytest.mark.parametrize("text", ["", "01", ".5", "5.", "+1", "1e", "Infinity", "0x10", "1 ", "1" * 39, 7])
def test_anything_else_is_not_written_as_a_json_number(text):
    with pytest.raises(ValueError):
        dynamodb_number(text)
