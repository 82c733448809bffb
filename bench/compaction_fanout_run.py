"""72 due partitions planned, then compacted one per invocation, on moto's S3 and SQS: see compaction_scale."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from bench.archive_scan import BATCH, PREFIX
from bench.archiver import telemetry_record
from cdk_ts_runtime._archive_lines import group_records

BUCKET = "bench-archive"
START = 1772323200  # 2026-03-01 00:00 UTC


@contextmanager
def moto_environment(settings_json: str, queue_url_holder: dict) -> Iterator[tuple]:
    """moto's S3 and SQS, a bucket and a FIFO queue, and the function's environment variables set."""
    import boto3
    from moto import mock_aws

    saved = dict(os.environ)
    os.environ.update({"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "bench",
                       "AWS_SECRET_ACCESS_KEY": "bench"})
    try:
        with mock_aws():
            s3 = boto3.client("s3")
            sqs = boto3.client("sqs")
            s3.create_bucket(Bucket=BUCKET)
            url = sqs.create_queue(QueueName="partitions.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
            queue_url_holder["url"] = url
            os.environ.update({"CDK_TS_COMPACTION_SETTINGS": settings_json, "CDK_TS_COMPACTION_QUEUE_URL": url})
            yield s3, sqs, url
    finally:
        os.environ.clear()
        os.environ.update(saved)


def archive_hours(s3, hours: int, changes_each: int) -> None:
    """``changes_each`` telemetry records in each of ``hours`` consecutive hours, as the archiver writes them."""
    rng = random.Random(7)
    for hour in range(hours):
        # unique event IDs over all hours; per_second above the total keeps every record at its hour's start
        records = [telemetry_record(hour * changes_each + i, rng, per_second=hours * changes_each,
                                    start=START + hour * 3600) for i in range(changes_each)]
        for first in range(0, len(records), BATCH):
            for group in group_records(records[first:first + BATCH]):
                s3.put_object(Bucket=BUCKET, Key=group.key(PREFIX), Body=group.body())


def plan_and_drain(partitions: int, changes_each: int) -> dict:
    """Archive ``partitions`` hours, plan once, then one invocation per message; who compacted what."""
    from cdk_ts_runtime._compaction_plan import ArchiveInventory, CompactionSettings
    from cdk_ts_runtime.handlers import compaction, compaction_partition

    settings = CompactionSettings(bucket=BUCKET, prefix=PREFIX, lookback=timedelta(days=4))
    holder: dict = {}
    with moto_environment(json.dumps(settings.as_json()), holder) as (s3, sqs, url):
        archive_hours(s3, partitions, changes_each)
        now = datetime.fromtimestamp(START, UTC) + timedelta(hours=partitions + 2)
        started = time.perf_counter()
        plan = compaction.handler({"time": now.isoformat()}, None)
        plan_seconds = time.perf_counter() - started
        inventory = ArchiveInventory(settings, s3_client=s3)
        per_invocation, invocations = [], 0
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1).get("Messages", []):
            (message,) = messages
            before = {s.partition: s.manifest for s in inventory.statuses(now=now)}
            event = {"Records": [{"messageId": message["MessageId"], "body": message["Body"]}]}
            assert compaction_partition.handler(event, None) == {"batchItemFailures": []}
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            after = {s.partition: s.manifest for s in inventory.statuses(now=now)}
            per_invocation.append(sum(1 for p, m in after.items() if m is not None and before.get(p) is None))
            invocations += 1
        compacted = sum(1 for s in inventory.statuses(now=now) if s.state.value == "compacted")
    return {"partitions": partitions, "queued": len(plan["queued"]), "plan_seconds": plan_seconds,
            "invocations": invocations, "max_partitions_per_invocation": max(per_invocation, default=0),
            "compacted": compacted}
