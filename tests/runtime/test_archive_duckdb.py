"""DuckDB over a real archive: the construct's view text deduplicates, prunes files, and reads odd items exactly."""

from __future__ import annotations

import base64
import json
import re

import boto3
import duckdb
import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Template

from cdk_ts import DeviceLogTable, StreamArchiver
from cdk_ts_runtime._archiver import StreamRecordArchiver
from tests.support.compaction import create_raw_view
from tests.support.nag import new_app
from tests.support.streams import BUCKET, spread_over_hours, stream_records

# Every test reads the view the construct writes, synthesized once for the module: 5-8 s on a shared 2-core machine.
pytestmark = pytest.mark.slow

BIG = "12345678901234567890123456789012345678"  # 38 significant digits, DynamoDB's most


@pytest.fixture(scope="module")
def view_sql():
    """The view's SQL exactly as the construct writes it into the Glue VIRTUAL_VIEW (Presto view JSON)."""
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "Archive", source=log, glue_database="archive_db", create_glue_database=True)
    (view,) = [
        t["Properties"]["TableInput"]
        for t in Template.from_stack(stack).find_resources("AWS::Glue::Table").values()
        if t["Properties"]["TableInput"]["TableType"] == "VIRTUAL_VIEW"
    ]
    text = view["ViewOriginalText"]
    return json.loads(base64.b64decode(text[len("/* Presto View: "):-len(" */")]))["originalSql"]


def duckdb_view(view_sql: str) -> str:
    """The one adaptation DuckDB needs: the Glue table reference becomes the DuckDB table defined below."""
    reference = '"archive_db"."archive"'
    assert view_sql.count(reference) == 1
    return view_sql.replace(reference, "stream_archive")


@pytest.fixture
def archive(stream_table, tmp_path):
    """An archive written by the archiver from moto stream records, with duplicated objects, on local disk."""
    ddb, stream = stream_table
    items = [
        {"pk": {"S": "case"}, "sk": {"N": "1"}, "Url": {"S": "https://a.example/"}, "url": {"S": "lower"}},
        {"pk": {"S": "mixed"}, "sk": {"N": "2"}, "list": {"L": [{"S": "x"}, {"N": "1.5"}, {"BOOL": True},
                                                                {"M": {"k": {"NULL": True}}}]}},
        {"pk": {"S": "big"}, "sk": {"N": "3"}, "n": {"N": BIG}},
    ] + [{"pk": {"S": "d"}, "sk": {"N": str(i)}} for i in range(10, 15)]
    for item in items:
        ddb.put_item(TableName="readings", Item=item)
    records = spread_over_hours(stream_records(stream), [0, 0, 0, 1, 1, 1, 2, 2])
    s3 = boto3.client("s3", region_name="us-east-1")
    archiver = StreamRecordArchiver(BUCKET, "dynamodb/", s3_client=s3)
    assert archiver.archive(records) == {"batchItemFailures": []}
    # at least once: a retry after a bisect groups the same records differently, in other objects
    assert archiver.archive(records[1:2]) == {"batchItemFailures": []}
    assert archiver.archive(records[4:7]) == {"batchItemFailures": []}
    root = tmp_path / "archive"
    for obj in s3.list_objects_v2(Bucket=BUCKET)["Contents"]:
        path = root / obj["Key"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read())
    connection = duckdb.connect()
    create_raw_view(connection, root)
    return connection, records, root


def test_the_constructs_view_returns_one_row_per_event_id_despite_duplicated_objects(archive, view_sql):
    connection, records, _root = archive
    assert connection.execute("SELECT count(*) FROM stream_archive").fetchone()[0] > len(records)  # duplicates
    connection.execute(f"CREATE VIEW stream_archive_deduplicated AS {duckdb_view(view_sql)}")
    rows = connection.execute("SELECT eventid FROM stream_archive_deduplicated").fetchall()
    assert sorted(r[0] for r in rows) == sorted(r["eventID"] for r in records)


def files_read(connection, query):
    """How many files DuckDB's scan read for ``query`` (EXPLAIN ANALYZE), and of how many when it pruned."""
    plan = "\n".join(row[1] for row in connection.execute(f"EXPLAIN ANALYZE {query}").fetchall())
    read = re.search(r"Total Files Read: (\d+)", plan)
    assert read, plan
    pruned = re.search(r"Scanning Files: (\d+)/(\d+)", plan)
    return int(read.group(1)), int(pruned.group(2)) if pruned else None


def test_a_filter_on_table_and_day_prunes_files_through_the_view(archive, view_sql):
    connection, records, root = archive
    connection.execute(f"CREATE VIEW stream_archive_deduplicated AS {duckdb_view(view_sql)}")
    query = "SELECT * FROM stream_archive_deduplicated WHERE \"table\" = 'readings' AND dt = '2026-03-02'"
    total = len(list(root.rglob("*.jsonl.gz")))
    wanted = len(list(root.glob("dynamodb/table=readings/dt=2026-03-02/*/*.jsonl.gz")))
    assert files_read(connection, query) == (wanted, total) and wanted < total
    assert len(connection.execute(query).fetchall()) == 2  # the last two records, created on 2 March

    # the view the README used to print (window over eventid alone) reads every file for the same filter
    old = duckdb_view(view_sql).replace('PARTITION BY "table", dt, hour, eventid', "PARTITION BY eventid")
    connection.execute(f"CREATE VIEW old_view AS {old}")
    assert files_read(connection, query.replace("stream_archive_deduplicated", "old_view")) == (total, None)


def test_case_variant_names_mixed_lists_and_38_digit_numbers_read_back_exactly(archive, view_sql):
    connection, _records, _root = archive
    connection.execute(f"CREATE VIEW stream_archive_deduplicated AS {duckdb_view(view_sql)}")
    image = {
        pk: value
        for pk, value in connection.execute(
            "SELECT json_extract_string(keys, '$.pk.S'), newimage FROM stream_archive_deduplicated"
        ).fetchall()
    }
    got = connection.execute(
        """
        SELECT json_extract_string(?, '$.Url.S'), json_extract_string(?, '$.url.S'),
               json_extract(?, '$.list.L'), json_extract_string(?, '$.n.N'),
               CAST(json_extract_string(?, '$.n.N') AS DECIMAL(38, 0))
        """,
        [image["case"], image["case"], image["mixed"], image["big"], image["big"]],
    ).fetchone()
    assert got[:2] == ("https://a.example/", "lower")
    assert json.loads(got[2]) == [{"S": "x"}, {"N": "1.5"}, {"BOOL": True}, {"M": {"k": {"NULL": True}}}]
    assert got[3] == BIG and str(got[4]) == BIG
