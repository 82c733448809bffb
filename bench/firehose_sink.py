"""What IcebergTableSink's path bills per million changes of the sample telemetry, and what its function costs.

For ``--records`` changes of ``bench.archiver``'s telemetry (the columns of ``bench.archive_scan``), as DynamoDB
writes them to Kinesis Data Streams: the record bytes (Kinesis on-demand bills each record rounded up to 1 KiB,
"Amazon Kinesis Data Streams pricing"), the bytes the transformation returns (Firehose bills the ingested bytes,
plus the bytes a Lambda transformation adds, "Amazon Data Firehose pricing"), and the transformation's speed and
peak memory in this process (CPU seconds: Lambda's duration follows CPU, which it allots by memory), in batches
of 1,000. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import random
import resource
import time
from collections.abc import Mapping
from typing import Any

from bench.archive_scan import COLUMNS
from bench.archiver import telemetry_record
from cdk_ts_runtime._firehose_iceberg import FirehoseIcebergTransform, IcebergRoute, SinkMode

BATCH = 1000


def kinesis_change(record: Mapping[str, Any]) -> dict[str, Any]:
    """A Lambda-style DynamoDB Streams record as DynamoDB writes the same change to Kinesis Data Streams.

    Kinesis carries ``tableName``, ``recordFormat`` and the creation time in milliseconds (or microseconds),
    and no DynamoDB sequence number (Powertools' ``DynamoDBStreamToKinesisRecord``; the DynamoDB developer
    guide, "Using Kinesis Data Streams to capture changes to DynamoDB").
    """
    detail = record["dynamodb"]
    return {
        "awsRegion": record.get("awsRegion", "us-east-1"),
        "eventID": record["eventID"],
        "eventName": record["eventName"],
        "userIdentity": record.get("userIdentity"),
        "recordFormat": "application/json",
        "tableName": record["eventSourceARN"].split(":table/")[1].split("/")[0],
        "dynamodb": {
            "ApproximateCreationDateTime": round(detail["ApproximateCreationDateTime"] * 1000),
            **{k: detail[k] for k in ("Keys", "NewImage", "OldImage") if k in detail},
            "SizeBytes": detail.get("SizeBytes", 1),
        },
        "eventSource": "aws:dynamodb",
    }


def firehose_batch(payloads: list[bytes], first: int) -> dict[str, Any]:
    """Firehose's transformation event for Kinesis records holding ``payloads``."""
    return {"records": [
        {"recordId": f"r{first + i}", "data": base64.b64encode(p).decode(),
         "kinesisRecordMetadata": {"sequenceNumber": f"{first + i:056d}"}}
        for i, p in enumerate(payloads)
    ]}


def measure(records: int) -> dict[str, Any]:
    """The bytes and seconds of ``records`` changes through the transformation."""
    rng = random.Random(7)
    transform = FirehoseIcebergTransform(IcebergRoute("archive", "changes", SinkMode.CHANGES, COLUMNS))
    bytes_in = billed_kinesis = bytes_out = 0
    seconds = 0.0
    for first in range(0, records, BATCH):
        payloads = [json.dumps(kinesis_change(telemetry_record(i, rng)), separators=(",", ":")).encode()
                    for i in range(first, min(first + BATCH, records))]
        bytes_in += sum(len(p) for p in payloads)
        billed_kinesis += sum(math.ceil(len(p) / 1024) * 1024 for p in payloads)
        event = firehose_batch(payloads, first)
        started = time.process_time()  # CPU time: the shared VM's wall clock counts other engineers' work
        answers = transform.transform(event)["records"]
        seconds += time.process_time() - started
        bytes_out += sum(len(base64.b64decode(a["data"])) for a in answers if a["result"] == "Ok")
    per_million = 1_000_000 / records
    return {
        "records": records,
        "mean_record_bytes": round(bytes_in / records, 1),
        "mean_row_bytes": round(bytes_out / records, 1),
        "kinesis_billed_gib_per_million": round(billed_kinesis * per_million / 2**30, 3),
        "firehose_billed_gb_per_million": round(max(bytes_in, bytes_out) * per_million / 1e9, 3),
        "transform_records_per_cpu_second": round(records / seconds),
        "transform_cpu_seconds_per_million": round(seconds * per_million, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> int:
    """Run the measurement and print it as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    print(json.dumps(measure(parser.parse_args().records), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
