"""Stream records for compaction tests, archived as the archiver writes them, and the layers read back locally."""

from __future__ import annotations

from pathlib import Path

from cdk_ts_runtime.archiver import StreamRecordArchiver
from cdk_ts_runtime.compaction_plan import ColumnSpec, CompactionSettings
from examples.archive_duckdb import create_raw_view  # noqa: F401  (tests read the raw layer as the sample does)
from tests.support.streams import BUCKET, spread_over_hours, stream_records

BIG = "12345678901234567890123456789012345678"  # 38 significant digits, DynamoDB's most
#: Declared columns over the ``readings`` table's items (``create_stream_table``).
COLUMNS = (ColumnSpec("device", "string", attribute="pk"), ColumnSpec("sk", "bigint"),
           ColumnSpec("temperature", "decimal(10,2)"), ColumnSpec("humidity", "double"),
           ColumnSpec("big", "decimal(38,0)"))


def compaction_settings(**kwargs) -> CompactionSettings:
    """Hourly compaction of ``BUCKET``'s ``dynamodb/`` into ``parquet/dynamodb/`` with :data:`COLUMNS`."""
    return CompactionSettings(**{"bucket": BUCKET, "prefix": "dynamodb/", "compacted_prefix": "parquet/dynamodb/",
                                 "columns": COLUMNS, "row_group_rows": 1000, **kwargs})


def sample_changes(ddb, stream) -> list[dict]:
    """Eight real stream records (six puts, an update, a delete), created at 22:30, 23:30 on 1 March, 00:30 on 2 March.

    Temperatures ``2N.5`` do not fit ``decimal(10,2)`` exactly (they read back as ``2N.50``) and stay in the
    image; the update's ``19.25`` does.
    """
    for i in range(6):
        ddb.put_item(TableName="readings", Item={
            "pk": {"S": f"d-{i % 2}"}, "sk": {"N": str(1000 + i)}, "temperature": {"N": f"2{i}.5"},
            "humidity": {"N": "41.5"}, "big": {"N": BIG}, "Url": {"S": "A"}, "url": {"S": "a"},
        })
    ddb.update_item(TableName="readings", Key={"pk": {"S": "d-0"}, "sk": {"N": "1000"}},
                    UpdateExpression="SET temperature = :t", ExpressionAttributeValues={":t": {"N": "19.25"}})
    ddb.delete_item(TableName="readings", Key={"pk": {"S": "d-1"}, "sk": {"N": "1001"}})
    return spread_over_hours(stream_records(stream), [0, 0, 0, 1, 1, 1, 2, 2])


def archive(s3, records) -> None:
    """Archive ``records`` into ``BUCKET`` with the archiver, asserting every one was written."""
    assert StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3).archive(records) == {"batchItemFailures": []}


def download(s3, keys, root: Path) -> list[Path]:
    """Copy ``keys`` of ``BUCKET`` under ``root`` (same relative paths); the local paths."""
    paths = []
    for key in keys:
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())
        paths.append(path)
    return paths


