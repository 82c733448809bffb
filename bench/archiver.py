"""Archiver throughput, compression and PUTs per 1,000 records with the default batch settings.

Run: .venv/bin/python -m bench.archiver [--records 50000]
In-process with moto S3, so the figures measure the archiver's own work (conversion, JSON, gzip).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import time

import boto3
from moto import mock_aws

from cdk_ts_runtime._archiver import StreamRecordArchiver

BATCH_SIZE = 1000  # StreamArchiver's default batch_size
STREAM = "arn:aws:dynamodb:us-east-1:123456789012:table/telemetry_2026-03-01/stream/2026-03-01T00:00:00.000"


def telemetry_record(i: int, rng: random.Random, *, per_second: int = 50, start: int = 1772323200) -> dict:
    """A realistic stream record: one multi-measure reading of one of 500 devices.

    ``per_second`` readings a second from ``start`` (2026-03-01 00:00 UTC): at the default 50, the first
    180,000 fall in one hour; ``bench.archive_scan`` spreads a million over a day.
    """
    device = f"device-{i % 500:04d}"
    at = start + i // per_second
    image = {
        "pk": {"S": device},
        "sk": {"N": str(at * 1000 + i % 1000)},
        "site": {"S": f"plant-{i % 7}"},
        "line": {"S": f"line-{i % 23}"},
        "firmware": {"S": "4.2.17"},
        "temperature_c": {"N": f"{20 + rng.random() * 5:.2f}"},
        "humidity_pct": {"N": f"{40 + rng.random() * 10:.1f}"},
        "pressure_hpa": {"N": f"{1000 + rng.random() * 30:.1f}"},
        "vibration_mm_s": {"N": f"{rng.random() * 3:.3f}"},
        "rpm": {"N": str(1450 + rng.randrange(100))},
        "status": {"S": "OK" if rng.random() > 0.02 else "WARNING1"},
        "expires_at": {"N": str(at + 30 * 86400)},
    }
    return {
        "eventID": f"{i:032x}",
        "eventName": "INSERT",
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "eventSourceARN": STREAM,
        "dynamodb": {
            "ApproximateCreationDateTime": at,
            "Keys": {"pk": image["pk"], "sk": image["sk"]},
            "NewImage": image,
            "SequenceNumber": f"{100000000000000000000 + i}",
            "SizeBytes": 300,
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=50_000)
    args = parser.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    rng = random.Random(7)
    records = [telemetry_record(i, rng) for i in range(args.records)]
    batches = [records[i : i + BATCH_SIZE] for i in range(0, len(records), BATCH_SIZE)]
    event_bytes = sum(len(json.dumps({"Records": b})) for b in batches)
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket="archive")
        puts = {"n": 0}

        def count_put(**_kwargs):
            puts["n"] += 1

        s3.meta.events.register("provide-client-params.s3.PutObject", count_put)
        archiver = StreamRecordArchiver("archive", "dynamodb/", s3_client=s3)
        started = time.perf_counter()
        for batch in batches:
            assert archiver.archive(batch) == {"batchItemFailures": []}
        elapsed = time.perf_counter() - started
        objects = s3.list_objects_v2(Bucket="archive").get("Contents", [])
        gzip_bytes = sum(o["Size"] for o in objects)
        jsonl_bytes = sum(
            len(gzip.decompress(s3.get_object(Bucket="archive", Key=o["Key"])["Body"].read())) for o in objects
        )
    print("| records | s | records/s | event JSON | JSON Lines | gzip out | event/gzip | JSONL/gzip | PUTs/1,000 |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {args.records} | {elapsed:.2f} | {args.records / elapsed:,.0f} | {event_bytes:,} B | {jsonl_bytes:,} B | "
        f"{gzip_bytes:,} B | {event_bytes / gzip_bytes:.1f}x | {jsonl_bytes / gzip_bytes:.1f}x | "
        f"{puts['n'] * 1000 / args.records:.2f} |"
    )


if __name__ == "__main__":
    main()
