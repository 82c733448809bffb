"""The fanned-out compaction on moto S3 and SQS: the planner sends one message per due partition to a FIFO queue,
each message is compacted by an invocation of its own, a failing partition leaves the others compacted, planning
twice does no harm, and a partition above the single-function envelope is reported and never sent."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from cdk_ts_runtime._compaction import ArchiveCompactor
from cdk_ts_runtime._compaction_envelope import SingleFunctionEnvelope, estimate_partition
from cdk_ts_runtime._compaction_fanout import CompactionPlanner, PartitionMessage, PlanFailedError
from cdk_ts_runtime._compaction_plan import ArchiveInventory, Partition, PartitionState
from cdk_ts_runtime.handlers import compaction, compaction_partition
from tests.support.compaction import archive, compaction_settings, sample_changes
from tests.support.streams import BUCKET

LATER = datetime(2026, 3, 5, tzinfo=UTC)  # every partition of the fixture closed long ago
SINCE = datetime(2026, 3, 1, tzinfo=UTC)
HOURS = ["table=readings/dt=2026-03-01/hour=22", "table=readings/dt=2026-03-01/hour=23",
         "table=readings/dt=2026-03-02/hour=00"]


@pytest.fixture
def s3(stream_table):
    return boto3.client("s3", region_name="us-east-1")


@pytest.fixture
def sqs(stream_table):
    return boto3.client("sqs", region_name="us-east-1")


@pytest.fixture
def queue_url(sqs):
    return sqs.create_queue(QueueName="partitions.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]


@pytest.fixture
def archived(s3, stream_table):
    archive(s3, sample_changes(*stream_table))


@pytest.fixture
def environment(monkeypatch, archived, queue_url):
    monkeypatch.setenv("CDK_TS_COMPACTION_SETTINGS", json.dumps(compaction_settings().as_json()))
    monkeypatch.setenv("CDK_TS_COMPACTION_QUEUE_URL", queue_url)
    return queue_url


def planner(s3, sqs, queue_url, **kwargs):
    return CompactionPlanner(compaction_settings(), queue_url=queue_url, s3_client=s3, sqs_client=sqs, **kwargs)


def receive_all(sqs, queue_url):
    """Every message waiting, received (and left in flight): as the event source mapping would read them."""
    messages = []
    while True:
        batch = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10,
                                    AttributeNames=["MessageGroupId"]).get("Messages", [])
        if not batch:
            return messages
        messages += batch


def sqs_event(message):
    """The event Lambda's SQS event source mapping gives the function for one message (batch size 1)."""
    return {"Records": [{"messageId": message["MessageId"], "receiptHandle": message["ReceiptHandle"],
                         "body": message["Body"], "eventSource": "aws:sqs"}]}


def states(s3):
    return {s.partition.path: s.state for s in ArchiveInventory(compaction_settings(), s3_client=s3).statuses(
        now=LATER, since=SINCE)}


def test_the_planner_sends_one_message_per_due_partition_and_compacts_nothing(s3, sqs, queue_url, archived):
    report = planner(s3, sqs, queue_url).plan(now=LATER, since=SINCE)

    assert report["queued"] == HOURS and report["oversized"] == [] and report["failed"] == []
    messages = receive_all(sqs, queue_url)
    assert sorted(PartitionMessage.parse(m["Body"]).partition.path for m in messages) == HOURS
    assert sorted(m["Attributes"]["MessageGroupId"] for m in messages) == HOURS  # never two at once per partition
    assert set(states(s3).values()) == {PartitionState.PENDING}  # planning wrote nothing


def test_planning_twice_sends_each_partition_once(s3, sqs, queue_url, archived):
    planner(s3, sqs, queue_url).plan(now=LATER, since=SINCE)
    planner(s3, sqs, queue_url).plan(now=LATER, since=SINCE)  # a retried or overlapping run: same dedup IDs

    assert sorted(PartitionMessage.parse(m["Body"]).partition.path for m in receive_all(sqs, queue_url)) == HOURS


def test_each_message_is_compacted_by_its_own_invocation_and_a_repeat_does_nothing(s3, sqs, environment):
    report = compaction.handler({"time": "2026-03-05T00:00:00Z", "Since": "2026-03-01"}, None)
    assert report["queued"] == HOURS and "compacted" not in report
    messages = receive_all(sqs, environment)

    for message in messages:
        assert compaction_partition.handler(sqs_event(message), None) == {"batchItemFailures": []}
        # each invocation compacted exactly its own partition
        path = PartitionMessage.parse(message["Body"]).partition.path
        assert states(s3)[path] is PartitionState.COMPACTED
    assert set(states(s3).values()) == {PartitionState.COMPACTED}

    before = {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="parquet/")["Contents"]}
    assert compaction_partition.handler(sqs_event(messages[0]), None) == {"batchItemFailures": []}  # redelivered
    after = {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="parquet/")["Contents"]}
    assert after == before


def test_a_partition_that_fails_returns_its_message_and_the_others_are_compacted(s3, sqs, environment):
    s3.put_object(Bucket=BUCKET, Key="dynamodb/table=readings/dt=2026-03-01/hour=23/s-9-9.jsonl.gz", Body=b"not gzip")
    compaction.handler({"time": "2026-03-05T00:00:00Z", "Since": "2026-03-01"}, None)

    answers = {PartitionMessage.parse(m["Body"]).partition.path: compaction_partition.handler(sqs_event(m), None)
               for m in receive_all(sqs, environment)}

    failed = {path for path, answer in answers.items() if answer["batchItemFailures"]}
    assert failed == {HOURS[1]}
    assert states(s3) == {HOURS[0]: PartitionState.COMPACTED, HOURS[1]: PartitionState.PENDING,
                          HOURS[2]: PartitionState.COMPACTED}


def test_on_a_fifo_batch_the_messages_after_a_failed_one_are_returned_too(s3, sqs, environment):
    s3.put_object(Bucket=BUCKET, Key="dynamodb/table=readings/dt=2026-03-01/hour=22/s-9-9.jsonl.gz", Body=b"not gzip")
    compaction.handler({"time": "2026-03-05T00:00:00Z", "Since": "2026-03-01"}, None)
    messages = sorted(receive_all(sqs, environment), key=lambda m: m["Body"])
    event = {"Records": [record for m in messages for record in sqs_event(m)["Records"]]}

    answer = compaction_partition.handler(event, None)

    assert [f["itemIdentifier"] for f in answer["batchItemFailures"]] == [m["MessageId"] for m in messages]


def test_a_partition_above_the_envelope_is_reported_with_its_size_and_never_sent(s3, sqs, queue_url, archived):
    (first,) = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"dynamodb/{HOURS[0]}/")["Contents"]
    s3.copy_object(Bucket=BUCKET, Key=first["Key"].replace(".jsonl.gz", "-again.jsonl.gz"),  # a redelivery
                   CopySource={"Bucket": BUCKET, "Key": first["Key"]})
    statuses = ArchiveInventory(compaction_settings(), s3_client=s3).statuses(now=LATER, since=SINCE)
    sizes = {s.partition.path: estimate_partition(s.partition, s.raw_sizes) for s in statuses}
    listed = {o["Key"]: o["Size"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="dynamodb/")["Contents"]}
    assert sum(e.raw_bytes for e in sizes.values()) == sum(listed.values())  # from the listing, nothing read
    largest = sizes[HOURS[0]]
    assert largest.raw_objects == 2 and largest.raw_bytes == 2 * first["Size"] > max(
        e.raw_bytes for e in sizes.values() if e is not largest)
    points = []

    report = planner(s3, sqs, queue_url, envelope=SingleFunctionEnvelope(largest.raw_bytes - 1),
                     metrics=points.append, function_name="planner").plan(now=LATER, since=SINCE)

    assert report["oversized"] == [{**largest.as_json(), "envelope_raw_bytes": largest.raw_bytes - 1}]
    assert report["queued"] == [p for p in HOURS if p != largest.partition.path]  # the others are not blocked
    sent = [PartitionMessage.parse(m["Body"]).partition.path for m in receive_all(sqs, queue_url)]
    assert largest.partition.path not in sent
    by_name = {p.name: p for p in points}
    assert by_name["PartitionsOverEnvelope"].value == 1
    assert by_name["LargestPartitionOverEnvelopeBytes"].value == largest.raw_bytes
    assert by_name["PartitionsOverEnvelope"].dimensions == {"FunctionName": "planner"}
    assert states(s3)[largest.partition.path] is PartitionState.PENDING
    status = next(s for s in statuses if s.partition == largest.partition).as_json()
    assert status["raw_bytes"] == largest.raw_bytes  # what archive-status prints


def test_a_message_the_planner_did_not_write_is_refused_naming_it():
    with pytest.raises(ValueError, match="partition message '.not json' is not a planner's message"):
        PartitionMessage.parse("{not json")
    message = PartitionMessage(Partition("t", "2026-03-01", "07"), LATER)
    assert PartitionMessage.parse(message.body()) == message


class RefusingOne:
    """The moto SQS client, except that SendMessageBatch reports its first entry failed (a partial batch failure)."""

    def __init__(self, sqs):
        self._sqs = sqs

    def send_message_batch(self, QueueUrl, Entries):  # noqa: N803 - boto3's parameter names
        answer = self._sqs.send_message_batch(QueueUrl=QueueUrl, Entries=Entries[1:])
        answer.setdefault("Failed", []).append({"Id": Entries[0]["Id"], "SenderFault": False,
                                                "Code": "InternalError", "Message": "try again"})
        return answer


def test_a_send_refused_by_sqs_fails_the_plan_after_sending_the_rest(s3, sqs, queue_url, archived):
    with pytest.raises(PlanFailedError, match="1 partition.s. not planned: .*hour=22: InternalError: try again"):
        planner(s3, RefusingOne(sqs), queue_url).plan(now=LATER, since=SINCE)
    assert sorted(PartitionMessage.parse(m["Body"]).partition.path for m in receive_all(sqs, queue_url)) == HOURS[1:]


def test_late_objects_over_expired_raw_objects_fail_the_plan_after_sending_the_rest(s3, sqs, queue_url, stream_table):
    # given the three partitions compacted, then one raw object of 2 March expired and late changes archived
    changes = sample_changes(*stream_table)
    archive(s3, changes[:7])
    ArchiveCompactor(compaction_settings(), s3_client=s3).run(now=LATER, since=SINCE)
    expired = s3.list_objects_v2(Bucket=BUCKET, Prefix="dynamodb/table=readings/dt=2026-03-02/")["Contents"][0]
    s3.delete_object(Bucket=BUCKET, Key=expired["Key"])
    archive(s3, changes[7:])
    # and a later partition never compacted (a copy of an hour's raw object under 3 March, 05:00)
    source = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"dynamodb/{HOURS[0]}/")["Contents"][0]["Key"]
    later = "table=readings/dt=2026-03-03/hour=05"
    s3.copy_object(Bucket=BUCKET, CopySource={"Bucket": BUCKET, "Key": source},
                   Key=source.replace(HOURS[0], later))

    # when the planner runs, it names the partition it cannot compact and fails, after sending the due one
    with pytest.raises(PlanFailedError, match="hour=00.*have expired") as failed:
        planner(s3, sqs, queue_url).plan(now=LATER, since=SINCE)

    report = failed.value.report
    assert report["states"] == {"compacted": 2, "raw-expired": 1, "pending": 1}
    assert [f["partition"] for f in report["failed"]] == [HOURS[2]]
    assert report["queued"] == [later]
    assert [PartitionMessage.parse(m["Body"]).partition.path for m in receive_all(sqs, queue_url)] == [later]
    assert states(s3)[HOURS[2]] is PartitionState.RAW_EXPIRED  # and the expired one was left as it was


def test_the_envelope_follows_the_function_size_and_the_sort():
    in_memory = SingleFunctionEnvelope.for_function(memory_mib=3008, timeout_seconds=900, ephemeral_mib=10240,
                                                    out_of_core=False)
    bigger = SingleFunctionEnvelope.for_function(memory_mib=10240, timeout_seconds=900, ephemeral_mib=10240,
                                                 out_of_core=False)
    out_of_core = SingleFunctionEnvelope.for_function(memory_mib=3008, timeout_seconds=900, ephemeral_mib=10240,
                                                      out_of_core=True)
    assert in_memory.reason.startswith("memory") and in_memory.max_raw_bytes < bigger.max_raw_bytes
    assert out_of_core.max_raw_bytes > in_memory.max_raw_bytes
    with pytest.raises(ValueError, match="max_raw_bytes 0 must be a positive number of bytes"):
        SingleFunctionEnvelope(0)


def test_since_before_the_raw_retention_is_refused_naming_the_value(monkeypatch, environment):
    monkeypatch.setenv("CDK_TS_COMPACTION_SETTINGS", json.dumps(compaction_settings(
        raw_retention=timedelta(days=30)).as_json()))
    with pytest.raises(ValueError, match=r"since 2026-01-31 is before 2026-02-03 \(the raw layer keeps objects 30 "
                                         r"days, as of 2026-03-05\).*give a day from 2026-02-03 on"):
        compaction.handler({"time": "2026-03-05T00:00:00Z", "Since": "2026-01-31"}, None)
    report = compaction.handler({"time": "2026-03-05T00:00:00Z", "Since": "2026-02-03"}, None)  # the earliest
    assert report["queued"] == HOURS
