"""The Iceberg option on pyiceberg's own SQL catalog (sqlite) and a local warehouse: one commit per compaction."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from cdk_ts.archive.compaction import iceberg_fields
from cdk_ts_runtime._compaction import ArchiveCompactor
from cdk_ts_runtime._compaction_iceberg import IcebergSink
from tests.support.compaction import archive, compaction_settings, sample_changes

LATER = datetime(2026, 3, 9, tzinfo=UTC)
SINCE = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture
def catalog(tmp_path):
    return SqlCatalog("local", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")


@pytest.fixture
def setup(stream_table, catalog):
    s3 = boto3.client("s3", region_name="us-east-1")
    settings = compaction_settings()
    sink = IcebergSink(catalog, "archive.changes", settings)
    return s3, ArchiveCompactor(settings, s3_client=s3, sink=sink), sample_changes(*stream_table)


def commits(catalog):
    return len(catalog.load_table("archive.changes").metadata.metadata_log)


def test_each_partition_is_one_commit_and_every_event_appears_once(setup, catalog):
    s3, compactor, records = setup
    archive(s3, records)
    archive(s3, records[2:5])  # redeliveries

    report = compactor.run(now=LATER, since=SINCE)

    table = catalog.load_table("archive.changes")
    rows = table.scan().to_arrow()
    assert sorted(rows.column("eventid").to_pylist()) == sorted(r["eventID"] for r in records)
    assert sorted(rows.column("sequencenumber").to_pylist()) == sorted(r["dynamodb"]["SequenceNumber"] for r in records)
    assert {(r["table"], r["dt"], r["hour"]) for r in rows.select(["table", "dt", "hour"]).to_pylist()} == {
        ("readings", "2026-03-01", "22"), ("readings", "2026-03-01", "23"), ("readings", "2026-03-02", "00")}
    # the first compaction creates the table (one commit) and adds its partition spec (one more)
    assert len(table.metadata.metadata_log) + 1 == 2 + len(report["compacted"])
    assert [f.name for f in table.spec().fields] == ["table", "dt", "hour"]
    summaries = [s.summary for s in table.snapshots()]
    assert {s["cdk-ts.partition"] for s in summaries} == {c["partition"] for c in report["compacted"]}


def test_a_late_record_replaces_its_partition_in_one_commit_and_a_rerun_commits_nothing(setup, catalog):
    s3, compactor, records = setup
    archive(s3, records[:7])
    compactor.run(now=LATER, since=SINCE)
    before = commits(catalog)

    archive(s3, records[7:])
    report = compactor.run(now=LATER, since=SINCE)

    assert [c["partition"] for c in report["compacted"]] == ["table=readings/dt=2026-03-02/hour=00"]
    assert commits(catalog) == before + 1
    rows = catalog.load_table("archive.changes").scan().to_arrow()
    assert sorted(rows.column("eventid").to_pylist()) == sorted(r["eventID"] for r in records)
    assert compactor.run(now=LATER, since=SINCE)["compacted"] == []
    assert commits(catalog) == before + 1


def test_the_table_the_template_creates_has_the_schema_the_sink_writes(setup, catalog):
    s3, compactor, records = setup
    archive(s3, records)
    compactor.run(now=LATER, since=SINCE)
    schema = catalog.load_table("archive.changes").schema()
    written = [(f.name, str(f.field_type).replace(", ", ","), f.required) for f in schema.fields]
    assert written == iceberg_fields(compaction_settings())
