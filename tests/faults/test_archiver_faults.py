"""The archiver never reports "done" for a record it did not write: unreadable records, bad numbers, bad times."""

from __future__ import annotations

import copy

import boto3
import pytest

from cdk_ts_runtime._archive_lines import UnreadableRecordError, dynamodb_number
from cdk_ts_runtime._archiver import StreamRecordArchiver
from tests.support.streams import BUCKET, archived_lines, lambda_event, stream_records


@pytest.fixture
def records(stream_table):
    dynamodb, stream = stream_table
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
def test_an_unusable_first_sequence_number_then_an_unreadable_record_never_reports_done(records, sequence):
    # A partial batch failure names the first failed record by its sequence number as itemIdentifier
    # (https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html); with none usable
    # on the first record and an unreadable second one there is nothing to name, so the archiver raises.
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


def deep_attribute(levels):
    value = {"S": "bottom"}
    for _ in range(levels - 1):
        value = {"M": {"a": value}}
    return value


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ({"BOOL": "false"}, "BOOL value 'false' is not a JSON boolean"),
        ({"BOOL": 0}, "BOOL value 0 is not a JSON boolean"),
        ({"BOOL": None}, "BOOL value None is not a JSON boolean"),
        ({"NULL": False}, "NULL value False is not true"),
        ({"L": "abc"}, "L value 'abc' is not a list"),
        ({"S": "x", "N": "1"}, "is not an AttributeValue"),
        ("plain", "is not an AttributeValue"),
        (deep_attribute(33), "nested deeper than DynamoDB's 32 levels"),
        (deep_attribute(5000), "nested deeper than DynamoDB's 32 levels"),  # far past Python's recursion limit
        ({"B": "QQ"}, "binary value 'QQ' is not base64"),
        ({"BS": [b"\x01", "not base64!"]}, "binary value 'not base64!' is not base64"),
        ({"S": "a\ud800b"}, "holds U+D800 at 1, a lone surrogate"),
        ({"M": {"\udfff": {"N": "1"}}}, "attribute name '\\udfff' holds U+DFFF at 0, a lone surrogate"),
    ],
    ids=["bool-text", "bool-int", "bool-null", "null-false", "list-text", "two-types", "not-a-map", "33", "5000",
         "b-unpadded", "bs-text", "s-surrogate", "name-surrogate"],
)
def test_values_dynamodb_streams_never_sends_are_refused_naming_the_record(records, attribute, message, caplog):
    broken = copy.deepcopy(records)
    keep_sequence = broken[3]["dynamodb"]["SequenceNumber"]
    broken[3]["dynamodb"]["NewImage"]["v"] = attribute
    response, s3 = archive(broken)
    assert response == {"batchItemFailures": [{"itemIdentifier": keep_sequence}]}
    assert written(s3) == sorted(r["eventID"] for r in records[:3])
    [logged] = [r for r in caplog.records if r.name == "cdk_ts_runtime._archiver" and r.levelname == "ERROR"]
    assert logged.sequenceNumber == keep_sequence
    log = logged.error
    assert message in log and message in logged.getMessage()
    assert repr(broken[3]["eventID"]) in log  # the record is named
    assert "RecursionError" not in log and "TypeError" not in log


def test_32_levels_of_nesting_are_archived(records):
    deep = copy.deepcopy(records)
    deep[3]["dynamodb"]["NewImage"]["v"] = deep_attribute(32)
    response, s3 = archive(deep)
    assert response == {"batchItemFailures": []}
    assert written(s3) == sorted(r["eventID"] for r in records)


def test_a_real_boolean_stays_a_boolean(records):
    from cdk_ts_runtime._archive_lines import typed_value

    assert typed_value({"BOOL": False}) == {"BOOL": False}
    assert typed_value({"NULL": True}) == {"NULL": True}


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({}, "the event has no Records"),
        ({"Records": None}, "Records is None, not a list"),
        ({"Records": "abc"}, "Records is 'abc', not a list"),
        ([], "not a DynamoDB Streams event"),
    ],
    ids=["missing", "null", "text", "not-an-object"],
)
def test_an_event_without_records_is_refused_not_archived_as_nothing(monkeypatch, event, message):
    from cdk_ts_runtime.handlers import archiver as handler

    monkeypatch.setenv("CDK_TS_ARCHIVE_BUCKET", BUCKET)
    with pytest.raises(ValueError, match=message):
        handler.handler(event, None)


def test_a_batch_entry_that_is_not_a_record_is_refused_without_a_type_error(records):
    broken = copy.deepcopy(records)
    broken.insert(0, "not a record")
    with pytest.raises(UnreadableRecordError, match="is not a stream record"):
        archive(broken)


def archived_keys(s3):
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


# What Lambda's JSON can carry that DynamoDB Streams never sends: (where in record 3, the JSON text put there).
NEVER_SENT = [
    ({"NewImage": {"v": {"B": "@"}}}, '"not base64!"'),
    ({"NewImage": {"v": {"B": "@"}}}, '"QUJD\\n"'),  # a line break after the base64
    ({"NewImage": {"v": {"B": "@"}}}, '"QR=="'),  # spare bits set: decodes, but DynamoDB writes QQ==
    ({"NewImage": {"v": {"BS": ["QQ==", "@"]}}}, '"QQ"'),
    ({"NewImage": {"v": {"S": "@"}}}, '"\\ud800"'),
    ({"NewImage": {"v": {"S": "@"}}}, '"ok\\udfff"'),
    ({"NewImage": {"v": {"SS": ["fine", "@"]}}}, '"\\ud83d"'),  # half of a surrogate pair
    ({"NewImage": {"v": {"L": [{"M": {"w": {"S": "@"}}}]}}}, '"\\udc00"'),
    ({"NewImage": {"@": {"S": "name"}}}, '"\\ud800"'),
    ({"OldImage": {"v": {"B": "@"}}}, '"***"'),
    ({"Keys": {"pk": {"S": "@"}}}, '"d\\ud800"'),
]


@pytest.mark.parametrize(("where", "fragment"), NEVER_SENT, ids=[f"{i}-{f}" for i, (_w, f) in enumerate(NEVER_SENT)])
def test_values_only_json_can_carry_are_reported_for_retry_and_never_archived(records, where, fragment, monkeypatch):
    from cdk_ts_runtime.handlers import archiver as handler

    # given a batch as Lambda delivers it (JSON text, parsed) whose fourth record holds such a value
    broken = copy.deepcopy(records)
    for part, attributes in where.items():
        broken[3]["dynamodb"].setdefault(part, {}).update(attributes)
    event = lambda_event(broken, **{"@": fragment})
    monkeypatch.setenv("CDK_TS_ARCHIVE_BUCKET", BUCKET)

    response = handler.handler(event, None)

    # then the record is reported by its sequence number, the three before it are written, nothing after
    bad = records[3]["dynamodb"]["SequenceNumber"]
    assert response == {"batchItemFailures": [{"itemIdentifier": bad}]}
    s3 = boto3.client("s3", region_name="us-east-1")
    assert written(s3) == sorted(r["eventID"] for r in records[:3])
    later = {r["dynamodb"]["SequenceNumber"] for r in records[3:]}
    assert not [key for key in archived_keys(s3) if any(sequence in key for sequence in later)]
