"""The scenario's archive step: the emulator's stream records through each archiver's code into the archive bucket.

The emulator cannot run Lambda code, so the records are read from its streams here and handed to the archiver
in batches, as the event source mappings would deliver them.
"""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING

from examples import progress
from examples.progress import say

if TYPE_CHECKING:
    from examples.scenario import Scenario


def stream_records(dynamodb, streams, tables: list[str]) -> list[dict]:
    """Every record in the tables' streams, oldest first, as Lambda delivers them (with ``eventSourceARN``).

    :param dynamodb: a DynamoDB client; :param streams: a DynamoDB Streams client.
    """
    records = []
    for table in tables:
        arn = dynamodb.describe_table(TableName=table)["Table"].get("LatestStreamArn")
        if not arn:
            continue
        for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            iterator = streams.get_shard_iterator(
                StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            while iterator:
                page = streams.get_records(ShardIterator=iterator, Limit=1000)
                if not page["Records"]:
                    break
                records += [{**r, "eventSourceARN": arn} for r in page["Records"]]
                iterator = page.get("NextShardIterator")
    return records


def archive(scenario: Scenario) -> None:
    """Stream records through each archiver's code into the archive bucket.

    Keeps the records each archiver was given in ``scenario.archived`` (the compaction step counts them).
    """
    say("\n6. Streams to S3: the emulator's stream records through each archiver's code")
    sources = [
        ("DeviceLogArchiverFunctionName", [scenario.outputs["DeviceLogTableName"]]),
        ("TelemetryArchiverFunctionName", scenario.period_tables()),
    ]
    total = 0
    for function_output, tables in sources:
        records = scenario.archived[function_output] = scenario.stream_records(tables)
        for start in range(0, len(records), 1000):
            response = run_archiver(scenario, function_output, records[start : start + 1000])
            if response["batchItemFailures"]:
                scenario.check("archive batch", False, str(response))
                return
        total += len(records)
        scenario.check(
            f"{function_output.removesuffix('FunctionName')} archived its stream",
            bool(records),
            f"{len(records)} records",
        )
    _count_archived_lines(scenario, total)


def run_archiver(scenario: Scenario, function_output: str, records: list[dict]) -> dict:
    """The deployed archiver function's handler, invoked with one stream batch as Lambda would; its response.

    :param function_output: the stack output naming the function (its environment is read back from the emulator).
    """
    from cdk_ts_runtime.handlers import archiver

    with scenario.deployed_environment(function_output), progress.function_output("archiver"):
        return archiver.handler({"Records": records}, None)  # its EMF metric lines and JSON log lines: to its log


def _count_archived_lines(scenario: Scenario, total: int) -> None:
    """List the archive's objects and check that their lines number the records archived."""
    s3 = scenario.boto3.client("s3")
    bucket = scenario.outputs["ArchiveBucketName"]
    objects = s3.list_objects_v2(Bucket=bucket, Prefix="cdc/").get("Contents", [])
    for obj in objects[:8]:
        say(f"     s3://{bucket}/{obj['Key']}  {obj['Size']} B")
    if len(objects) > 8:
        say(f"     ... {len(objects) - 8} more")
    lines = 0
    for obj in objects:
        body = s3.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
        lines += len(gzip.decompress(body).splitlines())
    scenario.check(
        "every stream record is one archived line", lines == total, f"{lines} lines in {len(objects)} objects"
    )
