"""The Glue views the construct writes parse as Athena SQL, and DuckDB runs them: each event once, before, during
and after compaction, with the same typed values from either layer."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from decimal import Decimal

import boto3
import duckdb
import pytest
import sqlglot
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Template

from cdk_ts import CompactionOptions, DeviceLogTable, StreamArchiver
from cdk_ts_runtime._compaction import ArchiveCompactor
from cdk_ts_runtime._compaction_plan import ColumnSpec
from tests.support.compaction import (
    BIG,
    COLUMNS,
    archive,
    compaction_settings,
    create_raw_view,
    download,
    sample_changes,
)
from tests.support.nag import new_app
from tests.support.streams import BUCKET, spread_over_hours, stream_records

pytestmark = pytest.mark.slow  # one synth for the module

LAYER = "arn:aws:lambda:us-east-1:336392948345:layer:AWSSDKPandas-Python313-Arm64:4"
SINCE = datetime(2026, 3, 1, tzinfo=UTC)
#: Glue names in the views' text, longest first, and the DuckDB relations standing for them.
RELATIONS = {
    '"archive_db"."archive_compacted$partitions"': "compacted_partitions",
    '"archive_db"."archive_compacted"': "archive_compacted",
    '"archive_db"."archive_deduplicated"': "archive_deduplicated",
    '"archive_db"."archive"': "stream_archive",
}
TYPED = ("eventid", "eventname", "sequencenumber", "approximatecreationdatetime", "device", "sk", "temperature",
         "humidity", "big", "table", "dt", "hour")


#: Every declared column type, over attributes of the ``readings`` items (``every_type_changes``).
EVERY_TYPE = (*COLUMNS, ColumnSpec("flag", "boolean"), ColumnSpec("count", "bigint"),
              ColumnSpec("ratio", "decimal(4,3)"), ColumnSpec("label", "string"))


def synthesized_views(columns):
    """Both views' SQL exactly as the construct writes them into Glue (Presto view JSON), by view name."""
    stack = Stack(new_app(), "Test")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "Archive", source=log, glue_database="archive_db", create_glue_database=True,
                   compaction=CompactionOptions(pyarrow_layer_arn=LAYER, columns=columns))
    found = {}
    for table in Template.from_stack(stack).find_resources("AWS::Glue::Table").values():
        table_input = table["Properties"]["TableInput"]
        if table_input["TableType"] == "VIRTUAL_VIEW":
            text = table_input["ViewOriginalText"]
            found[table_input["Name"]] = json.loads(base64.b64decode(text[len("/* Presto View: "):-len(" */")]))
    return {name: view["originalSql"] for name, view in found.items()}


@pytest.fixture(scope="module")
def views():
    """The views over :data:`COLUMNS`."""
    return synthesized_views(COLUMNS)


def in_duckdb(sql: str) -> str:
    """Athena's text transpiled by sqlglot, the Glue relations replaced by the DuckDB ones defined below."""
    text = sqlglot.transpile(sql, read="athena", write="duckdb")[0]
    for glue_name, local in RELATIONS.items():
        text = text.replace(glue_name, local)
    assert '"archive_db"' not in text, text
    return text


def test_both_views_parse_as_athena_sql(views):
    assert set(views) == {"archive_deduplicated", "archive_all"}
    for sql in views.values():
        (statement,) = sqlglot.parse(sql, read="athena")
        assert statement is not None
    union = sqlglot.parse_one(views["archive_all"], read="athena")
    assert isinstance(union, sqlglot.exp.Union) and not union.args.get("distinct")  # UNION ALL


class Layers:
    """The archive in moto S3 and, after each step, the same layers on local disk as DuckDB relations."""

    def __init__(self, s3, views, root, columns=COLUMNS):
        self.s3, self.views, self.root, self.columns = s3, views, root, columns
        self.compactor = ArchiveCompactor(compaction_settings(columns=columns), s3_client=s3)
        self.step = 0

    def query(self, sql: str) -> list[tuple]:
        self.step += 1
        root = self.root / str(self.step)
        listing = self.s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
        download(self.s3, [o["Key"] for o in listing if o["Key"].startswith("dynamodb/")], root / "raw")
        statuses = self.compactor.inventory.statuses(now=datetime(2026, 3, 9, tzinfo=UTC), since=SINCE)
        current = [key for s in statuses if s.manifest for key in s.manifest.files]
        parquet = download(self.s3, current, root / "parquet")
        connection = duckdb.connect()
        connection.execute("SET TimeZone = 'UTC'")
        create_raw_view(connection, root / "raw")
        connection.execute(f"CREATE VIEW archive_deduplicated AS {in_duckdb(self.views['archive_deduplicated'])}")
        # the Parquet table: the files the manifests name (what the Glue partitions point at)
        if parquet:
            files = [str(p) for p in parquet]
            connection.execute(
                f"CREATE VIEW archive_compacted AS SELECT * EXCLUDE (gen) FROM read_parquet({files!r},"
                " hive_partitioning = true,"
                " hive_types = {'table': 'VARCHAR', 'dt': 'VARCHAR', 'hour': 'VARCHAR', 'gen': 'VARCHAR'})"
            )
        else:
            self._empty_compacted(connection)
        connection.execute('CREATE TABLE compacted_partitions ("table" VARCHAR, dt VARCHAR, hour VARCHAR)')
        for status in statuses:
            if status.manifest:
                connection.execute("INSERT INTO compacted_partitions VALUES (?, ?, ?)", status.partition.values())
        connection.execute(f"CREATE VIEW archive_all AS {in_duckdb(self.views['archive_all'])}")
        return connection.execute(sql).fetchall()

    def _empty_compacted(self, connection):
        fixed = (("eventid", "VARCHAR"), ("eventname", "VARCHAR"), ("sequencenumber", "VARCHAR"),
                 ("approximatecreationdatetime", "TIMESTAMPTZ"), ("keys", "VARCHAR"), ("newimage", "VARCHAR"),
                 ("oldimage", "VARCHAR"), ("useridentity", "VARCHAR"))
        declared = tuple((c.name, {"string": "VARCHAR"}.get(c.type, c.type.upper())) for c in self.columns)
        partitions = (("table", "VARCHAR"), ("dt", "VARCHAR"), ("hour", "VARCHAR"))
        columns = ", ".join(f"NULL::{t} AS \"{n}\"" for n, t in fixed + declared + partitions)
        connection.execute(f"CREATE VIEW archive_compacted AS SELECT {columns} WHERE false")


@pytest.fixture
def layers(stream_table, views, tmp_path):
    return Layers(boto3.client("s3", region_name="us-east-1"), views, tmp_path)


def typed_rows(layers):
    columns = ", ".join(f'"{c}"' for c in TYPED)
    return layers.query(f"SELECT {columns} FROM archive_all ORDER BY length(sequencenumber), sequencenumber")


def test_the_all_view_shows_each_event_once_with_the_same_values_before_during_and_after_compaction(
    stream_table, layers
):
    ddb, stream = stream_table
    records = sample_changes(ddb, stream)
    archive(layers.s3, records)
    archive(layers.s3, records[1:2] + records[4:6])  # redeliveries in other objects

    before = typed_rows(layers)  # nothing compacted: all from the raw layer's deduplicated view
    assert [r[0] for r in before] == [r["eventID"] for r in records]

    # 01:20 on 2 March: the 22:00 and 23:00 partitions are compacted, 00:00 is still open
    report = layers.compactor.run(now=datetime(2026, 3, 2, 1, 20, tzinfo=UTC))
    assert len(report["compacted"]) == 2
    during = typed_rows(layers)
    assert during == before  # the same rows and typed values, from Parquet for two partitions and raw for one

    # a late record for 23:00, which is compacted already: not shown until the next run, never twice
    ddb.put_item(TableName="readings", Item={"pk": {"S": "d-9"}, "sk": {"N": "9"}, "temperature": {"N": "30.25"}})
    late = spread_over_hours(stream_records(stream)[-1:], [1])
    archive(layers.s3, late)
    assert typed_rows(layers) == before

    layers.compactor.run(now=datetime(2026, 3, 9, tzinfo=UTC), since=SINCE)
    after = typed_rows(layers)
    assert sorted(r[0] for r in after) == sorted([r["eventID"] for r in records] + [late[0]["eventID"]])
    assert [r for r in after if r[0] != late[0]["eventID"]] == before
    (row,) = [r for r in after if r[0] == late[0]["eventID"]]
    assert (row[4], row[6], row[-1]) == ("d-9", Decimal("30.25"), "23")


def every_type_changes(ddb, stream):
    """Items whose attributes each column holds exactly, cannot hold exactly (NULL), or holds with other text."""
    values = [
        {"temperature": {"N": "20.555"}, "ratio": {"N": "1.2345"}, "count": {"N": "7.5"}, "flag": {"BOOL": True},
         "label": {"S": "a"}, "humidity": {"N": "41.5"}},  # 20.555, 1.2345, 7.5: not held exactly -> NULL
        {"temperature": {"N": "20.5"}, "ratio": {"N": "0.125"}, "count": {"N": "7"}, "flag": {"BOOL": False},
         "label": {"N": "12.50"}, "big": {"N": BIG}},  # 20.5 is 20.50; a number in a string column is its text
        {"temperature": {"N": "123456789.12"}, "ratio": {"N": "12.5"}, "count": {"N": "9223372036854775808"},
         "label": {"S": "é"}, "humidity": {"N": "1e3"}},  # past the precision, past bigint: NULL
        {"temperature": {"N": "-0.10"}, "count": {"N": "-12.000"}, "flag": {"S": "true"}},  # not a BOOL: NULL
        # exponents: NULL in every bigint and decimal column on both sides (Athena's casts would round some),
        # the double's value and the string's text on both
        {"temperature": {"N": "2.5e-3"}, "ratio": {"N": "1E-1"}, "count": {"N": "1E+2"}, "humidity": {"N": "2.5e-3"},
         "big": {"N": "1E+37"}, "label": {"N": "1E+2"}, "flag": {"BOOL": True}},
    ]
    for number, extra in enumerate(values):
        ddb.put_item(TableName="readings", Item={"pk": {"S": f"d-{number}"}, "sk": {"N": str(number)}, **extra})
    return spread_over_hours(stream_records(stream), [0, 0, 1, 1, 1])


def test_every_declared_type_reads_the_same_value_from_either_layer_and_null_where_it_is_not_exact(
    stream_table, tmp_path
):
    columns = EVERY_TYPE
    layers = Layers(boto3.client("s3", region_name="us-east-1"), synthesized_views(columns), tmp_path, columns)
    archive(layers.s3, every_type_changes(*stream_table))
    names = ", ".join(f'"{c.name}"' for c in columns)
    query = f"SELECT eventid, {names} FROM archive_all ORDER BY length(sequencenumber), sequencenumber"

    before = layers.query(query)
    layers.compactor.run(now=datetime(2026, 3, 9, tzinfo=UTC), since=SINCE)
    after = layers.query(query)

    assert after == before
    by_device = {row[1]: dict(zip([c.name for c in columns], row[1:], strict=True)) for row in after}
    assert [by_device[f"d-{n}"]["temperature"] for n in range(4)] == [
        None, Decimal("20.50"), None, Decimal("-0.10")]
    assert [by_device[f"d-{n}"]["count"] for n in range(4)] == [None, 7, None, -12]
    assert [by_device[f"d-{n}"]["ratio"] for n in range(4)] == [None, Decimal("0.125"), None, None]
    assert [by_device[f"d-{n}"]["flag"] for n in range(4)] == [True, False, None, None]
    assert [by_device[f"d-{n}"]["label"] for n in range(4)] == ["a", "12.50", "é", None]
    assert by_device["d-2"]["humidity"] == 1000.0 and by_device["d-1"]["big"] == Decimal(BIG)
    exponents = by_device["d-4"]
    assert [exponents[c] for c in ("temperature", "ratio", "count", "big")] == [None] * 4
    assert (exponents["humidity"], exponents["label"], exponents["flag"]) == (0.0025, "1E+2", True)
