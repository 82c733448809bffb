"""An archive as the real archiver writes it, on local disk: INSERT, MODIFY and REMOVE records over several objects.

For the docs' "Reading the archive" recipes (docs/snippets/stream-archiver/) and their tests. Sequence numbers
are given DynamoDB's real size (21 to 40 digits: ``SequenceNumber`` in the DynamoDB Streams API reference), which a
float cannot hold: read carelessly, neighbouring ones collapse into one value.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
from botocore.config import Config

from cdk_ts_runtime._archiver import StreamRecordArchiver

BUCKET = "archive-for-readers"
#: 24 digits, like the sequence numbers DynamoDB Streams hands out; consecutive ones differ in the last digits.
SEQUENCE_BASE = 400000000000000000000000


def write_archive(root: Path, *, records: int = 36, prefix: str = "dynamodb/", table: str = "readings") -> list[str]:
    """Write ``records`` stream records (INSERTs, then MODIFYs and REMOVEs) as archive objects under ``root``.

    ``prefix`` is the archiver's (``StreamArchiver(prefix=...)``), ``table`` the source table's name.

    Must run inside ``moto.mock_aws()``. The INSERTs land in objects of their own (whose ``oldImage`` is
    null on every line), the MODIFYs and REMOVEs in others. Returns the sequence numbers, in stream order.
    """
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    stream = dynamodb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )["TableDescription"]["LatestStreamArn"]
    inserts = records // 2
    for i in range(inserts):
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "d"}, "sk": {"N": str(i)}, "v": {"N": "1"}})
    for i in range(records - inserts):
        if i % 2:
            dynamodb.delete_item(TableName=table, Key={"pk": {"S": "d"}, "sk": {"N": str(i)}})
        else:
            dynamodb.put_item(TableName=table, Item={"pk": {"S": "d"}, "sk": {"N": str(i)}, "v": {"N": "2"}})
    delivered = _stream_records(stream)
    assert len(delivered) == records, f"moto's stream holds {len(delivered)} records, not {records}"
    start = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)
    for index, record in enumerate(delivered):
        record["dynamodb"]["SequenceNumber"] = str(SEQUENCE_BASE + index)
        # INSERTs in the first hour, the rest in the next: two objects, oldImage all null in the first
        record["dynamodb"]["ApproximateCreationDateTime"] = start + timedelta(hours=0 if index < inserts else 1)
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    archiver = StreamRecordArchiver(BUCKET, prefix, s3_client=s3)
    assert archiver.archive(delivered) == {"batchItemFailures": []}
    for obj in s3.list_objects_v2(Bucket=BUCKET)["Contents"]:
        path = root / obj["Key"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read())
    return [r["dynamodb"]["SequenceNumber"] for r in delivered]


def _stream_records(stream_arn: str) -> list[dict]:
    streams = boto3.client("dynamodbstreams", region_name="us-east-1",
                           config=Config(account_id_endpoint_mode="disabled"))
    records = []
    for shard in streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records += streams.get_records(ShardIterator=iterator, Limit=1000)["Records"]
    return copy.deepcopy([{**r, "eventSourceARN": stream_arn} for r in records])


#: What the docs' compacted-layer recipes declare: the device (``pk``), the time (``sk``) and the measure ``v``.
COMPACTED_COLUMNS = ({"name": "device_id", "type": "string", "attribute": "pk"}, {"name": "sk", "type": "bigint"},
                     {"name": "v", "type": "bigint"})


def write_compacted(root: Path, *, iceberg_catalog: dict | None = None) -> None:
    """:func:`write_archive`, compacted as the function does, with ``parquet/`` copied under ``root`` too.

    Must run inside ``moto.mock_aws()``. With ``iceberg_catalog`` (pyiceberg catalog properties) the rows go
    into the Iceberg table ``archive.changes`` of that catalog instead of Parquet files.
    """
    from cdk_ts_runtime._compaction import ArchiveCompactor
    from cdk_ts_runtime._compaction_iceberg import IcebergSink
    from cdk_ts_runtime._compaction_plan import CompactionSettings

    write_archive(root)
    settings = CompactionSettings(bucket=BUCKET, columns=COMPACTED_COLUMNS)
    sink = None
    if iceberg_catalog is not None:
        from pyiceberg.catalog import load_catalog

        sink = IcebergSink(load_catalog("archive", **iceberg_catalog), "archive.changes", settings)
    s3 = boto3.client("s3", region_name="us-east-1")
    ArchiveCompactor(settings, s3_client=s3, sink=sink).run(now=datetime(2026, 3, 5, tzinfo=UTC),
                                                            since=datetime(2026, 3, 1, tzinfo=UTC))
    for obj in s3.list_objects_v2(Bucket=BUCKET, Prefix="parquet/").get("Contents", []):
        path = root / obj["Key"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read())
