"""Compaction on moto S3 and Glue: real stream records archived as JSON Lines, compacted, read by pyarrow and DuckDB."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cdk_ts_runtime._compaction import ArchiveCompactor, CompactionFailedError, restore_image
from cdk_ts_runtime._compaction_plan import (
    ArchiveInventory,
    ColumnSpec,
    CompactionSettings,
    Granularity,
    Partition,
    PartitionState,
)
from tests.support.compaction import BIG, COLUMNS, archive, compaction_settings, sample_changes
from tests.support.streams import BUCKET

LATER = datetime(2026, 3, 5, tzinfo=UTC)  # every partition of the fixture closed long ago


def settings(**kwargs):
    return compaction_settings(**kwargs)


@pytest.fixture
def s3(stream_table):
    return boto3.client("s3", region_name="us-east-1")


@pytest.fixture
def records(stream_table):
    return sample_changes(*stream_table)


def raw_lines(s3):
    lines = []
    for obj in s3.list_objects_v2(Bucket=BUCKET, Prefix="dynamodb/").get("Contents", []):
        body = s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read()
        lines += [json.loads(line) for line in gzip.decompress(body).splitlines()]
    return lines


def current_files(s3, compactor):
    """What a reader outside Glue reads: the files the manifests name, downloaded."""
    statuses = compactor.inventory.statuses(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    return {key: s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
            for status in statuses if status.manifest for key in status.manifest.files}


def read_compacted(s3, compactor):
    tables = [pq.read_table(pa.BufferReader(body)) for body in current_files(s3, compactor).values()]
    return pa.concat_tables(tables)


def parquet_keys(s3):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="parquet/").get("Contents", [])
                  if o["Key"].endswith(".parquet"))


def test_json_lines_round_trip_to_parquet_exactly_with_typed_columns(s3, records):
    archive(s3, records)
    archive(s3, records[1:2] + records[4:6])  # a retry grouped differently: redeliveries in other objects
    compactor = ArchiveCompactor(settings(), s3_client=s3)

    report = compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))

    assert [c["partition"] for c in report["compacted"]] == [
        "table=readings/dt=2026-03-01/hour=22", "table=readings/dt=2026-03-01/hour=23",
        "table=readings/dt=2026-03-02/hour=00"]
    assert sum(c["duplicates"] for c in report["compacted"]) == 3
    table = read_compacted(s3, compactor)
    raw = {line["eventID"]: line for line in raw_lines(s3)}
    assert table.num_rows == len(records) == len(raw)
    assert table.schema.field("sequencenumber").type == pa.string()
    assert table.schema.field("temperature").type == pa.decimal128(10, 2)
    rows = {row["eventid"]: row for row in table.to_pylist()}
    for event_id, line in raw.items():
        row = rows[event_id]
        assert row["sequencenumber"] == line["sequenceNumber"]  # every digit, as text
        assert row["keys"] == line["keys"]
        restored = restore_image(row, COLUMNS)
        assert restored == tuple(json.loads(line[k]) if line[k] else None for k in ("newImage", "oldImage"))
        assert row["approximatecreationdatetime"] == datetime.fromisoformat(line["approximateCreationDateTime"])
    updated = next(r for r in rows.values() if r["eventname"] == "MODIFY")
    assert (updated["device"], updated["sk"], updated["temperature"]) == ("d-0", 1000, Decimal("19.25"))
    removed = next(r for r in rows.values() if r["eventname"] == "REMOVE")  # no new image: the old one's values
    assert (removed["device"], removed["sk"], removed["humidity"]) == ("d-1", 1001, 41.5)
    assert {r["big"] for r in rows.values()} == {Decimal(BIG)}
    # a value its column gives back exactly is stored once (in the column); any other stays in the image
    inserted = json.loads(next(r for r in rows.values() if r["sk"] == 1002)["newimage"])
    assert inserted == {"temperature": {"N": "22.5"}, "Url": {"S": "A"}, "url": {"S": "a"}}
    assert next(r for r in rows.values() if r["sk"] == 1002)["temperature"] == Decimal("22.50")


def test_rows_are_sorted_by_key_then_time_and_duckdb_reads_the_same_rows(s3, records, tmp_path):
    archive(s3, records)
    compactor = ArchiveCompactor(settings(), s3_client=s3)
    compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    paths = []
    for key, body in current_files(s3, compactor).items():
        path = tmp_path / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        paths.append(str(path))
        keys = pq.read_table(path).column("keys").to_pylist()
        assert keys == sorted(keys)
    got = duckdb.sql(f"""
        SELECT sequencenumber, typeof(sequencenumber), "table", dt, hour
        FROM read_parquet({paths!r}, hive_partitioning = true,
                          hive_types = {{'table': 'VARCHAR', 'dt': 'VARCHAR', 'hour': 'VARCHAR', 'gen': 'VARCHAR'}})
        ORDER BY length(sequencenumber), sequencenumber
    """).fetchall()
    assert [g[0] for g in got] == [r["dynamodb"]["SequenceNumber"] for r in records]
    assert {g[1] for g in got} == {"VARCHAR"}
    assert {(g[2], g[3], g[4]) for g in got} == {("readings", "2026-03-01", "22"), ("readings", "2026-03-01", "23"),
                                                ("readings", "2026-03-02", "00")}


def test_a_rerun_writes_nothing_and_a_forced_rebuild_gives_the_same_bytes(s3, records):
    archive(s3, records)
    compactor = ArchiveCompactor(settings(), s3_client=s3)
    compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    before = current_files(s3, compactor)

    again = compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))

    assert again["compacted"] == [] and again["states"] == {"compacted": 3}
    # rebuilding a partition from the same raw objects writes the same keys with the same bytes
    status = compactor.inventory.statuses(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))[0]
    compactor.compact(status)
    assert current_files(s3, compactor) == before


def test_a_late_record_appears_after_the_next_run_once_and_the_old_generation_is_deleted(s3, records):
    archive(s3, records[:7])
    compactor = ArchiveCompactor(settings(), s3_client=s3)
    compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    old_keys = parquet_keys(s3)
    assert read_compacted(s3, compactor).num_rows == 7

    archive(s3, records[7:])  # arrives after its hour (00:30 on 2 March) was compacted
    statuses = {s.partition.path: s for s in
                ArchiveInventory(settings(), s3_client=s3).statuses(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))}
    late = statuses["table=readings/dt=2026-03-02/hour=00"]
    assert late.state is PartitionState.LATE and len(late.late) == 1
    assert read_compacted(s3, compactor).num_rows == 7  # not yet: never half a partition

    report = compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))

    assert [(c["partition"], c["late_objects"]) for c in report["compacted"]] == [
        ("table=readings/dt=2026-03-02/hour=00", 1)]
    table = read_compacted(s3, compactor)
    assert sorted(table.column("eventid").to_pylist()) == sorted(r["eventID"] for r in records)
    new_keys = parquet_keys(s3)
    replaced = set(old_keys) - set(new_keys)
    assert len(replaced) == 1 and "hour=00" in replaced.pop()  # only that partition's old file went
    assert len(new_keys) == len(old_keys)


def test_a_redelivery_after_compaction_is_compacted_again_but_appears_once(s3, records):
    archive(s3, records)
    compactor = ArchiveCompactor(settings(), s3_client=s3)
    compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    archive(s3, records)  # same objects, same bytes: nothing to do
    assert compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))["compacted"] == []

    archive(s3, records[3:4])  # the same record in a new object (a bisected retry)
    report = compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))

    assert [(c["rows"], c["duplicates"]) for c in report["compacted"]] == [(3, 1)]
    assert read_compacted(s3, compactor).num_rows == len(records)


def test_a_partition_inside_its_grace_period_is_left_open(s3, records):
    archive(s3, records)
    compactor = ArchiveCompactor(settings(grace=timedelta(hours=1)), s3_client=s3)
    # 01:20 on 2 March: 22:00 and 23:00 closed (end + 1 h passed), 00:00 still open
    report = compactor.run(now=datetime(2026, 3, 2, 1, 20, tzinfo=UTC))
    assert report["states"] == {"pending": 2, "open": 1}
    assert [c["partition"][-7:] for c in report["compacted"]] == ["hour=22", "hour=23"]


def test_day_granularity_compacts_a_closed_day_with_hour_as_a_column(s3, records):
    archive(s3, records)
    compactor = ArchiveCompactor(settings(granularity=Granularity.DAY), s3_client=s3)

    report = compactor.run(now=datetime(2026, 3, 2, 12, tzinfo=UTC), since=datetime(2026, 3, 1, tzinfo=UTC))

    assert [c["partition"] for c in report["compacted"]] == ["table=readings/dt=2026-03-01"]  # 2 March still open
    table = read_compacted(s3, compactor)
    assert sorted(table.column("hour").to_pylist()) == ["22"] * 3 + ["23"] * 3


def test_the_glue_partition_points_at_the_current_generation(s3, records):
    glue = boto3.client("glue", region_name="us-east-1")
    glue.create_database(DatabaseInput={"Name": "archive"})
    glue.create_table(DatabaseName="archive", TableInput={
        "Name": "readings_compacted", "PartitionKeys": [{"Name": n, "Type": "string"} for n in ("table", "dt", "hour")],
        "StorageDescriptor": {"Location": f"s3://{BUCKET}/parquet/dynamodb/", "Columns": []},
    })
    compactor = ArchiveCompactor(settings(glue_database="archive", glue_table="readings_compacted"),
                                 s3_client=s3, glue_client=glue)
    archive(s3, records[:7])
    compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    archive(s3, records[7:])
    compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))

    partitions = glue.get_partitions(DatabaseName="archive", TableName="readings_compacted")["Partitions"]
    manifests = {tuple(s.partition.values()): s.manifest for s in compactor.inventory.statuses(
        now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))}
    assert {tuple(p["Values"]): p["StorageDescriptor"]["Location"] for p in partitions} == {
        values: f"s3://{BUCKET}/{m.location}" for values, m in manifests.items()}


def test_late_objects_in_a_partition_whose_raw_objects_expired_fail_loudly_and_keep_the_parquet(s3, records):
    archive(s3, records[:7])
    compactor = ArchiveCompactor(settings(), s3_client=s3)
    compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    before = current_files(s3, compactor)
    expired = s3.list_objects_v2(Bucket=BUCKET, Prefix="dynamodb/table=readings/dt=2026-03-02/")["Contents"][0]
    s3.delete_object(Bucket=BUCKET, Key=expired["Key"])
    archive(s3, records[7:])

    with pytest.raises(CompactionFailedError, match="have expired"):
        compactor.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    assert current_files(s3, compactor) == before


def test_the_partition_of_a_raw_key_follows_the_granularity():
    hourly, daily = settings(), settings(granularity="day")
    key = "dynamodb/table=t/dt=2026-03-01/hour=07/s-1-2.jsonl.gz"
    assert ArchiveInventory(hourly)._raw_partition(key) == Partition("t", "2026-03-01", "07")
    assert ArchiveInventory(daily)._raw_partition(key) == Partition("t", "2026-03-01")


def test_bad_settings_are_refused_naming_the_value():
    with pytest.raises(ValueError, match="compacted_prefix 'dynamodb/parquet/' must .* lie outside"):
        CompactionSettings(bucket=BUCKET, prefix="dynamodb/", compacted_prefix="dynamodb/parquet/")
    assert CompactionSettings(bucket=BUCKET, prefix="", compacted_prefix="parquet/").prefix == ""  # raw at the root
    with pytest.raises(ValueError, match="type 'float' must be"):
        CompactionSettings(bucket=BUCKET, columns=[ColumnSpec("v", "float")])
    with pytest.raises(ValueError, match="'eventid' is one of the compacted layer's own columns"):
        CompactionSettings(bucket=BUCKET, columns=[{"name": "eventid"}])


def test_settings_survive_the_environment_round_trip():
    original = settings(granularity="day", grace=timedelta(minutes=30), glue_database="a", glue_table="b")
    env = {"CDK_TS_COMPACTION_SETTINGS": json.dumps(original.as_json())}
    assert CompactionSettings.from_env(env) == original


def test_the_runtime_package_imports_without_pyarrow_and_compaction_says_where_to_get_it():
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import cdk_ts_runtime, cdk_ts_runtime._compaction as c, cdk_ts_runtime.handlers.compaction\n"
        "try:\n    c.pyarrow_modules()\nexcept c.PyarrowMissingError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "AWS SDK for pandas layer" in out


def test_changed_columns_make_every_partition_stale_and_the_next_run_rebuilds_them(s3, records):
    archive(s3, records)
    ArchiveCompactor(settings(), s3_client=s3).run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))
    wider = ArchiveCompactor(settings(columns=COLUMNS + (ColumnSpec("url"),)), s3_client=s3)

    states = {s.state for s in wider.inventory.statuses(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))}
    report = wider.run(now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))

    assert states == {PartitionState.STALE} and len(report["compacted"]) == 3
    assert set(read_compacted(s3, wider).column("url").to_pylist()) == {"a"}  # a REMOVE: from its old image


def test_the_handler_compacts_as_of_the_scheduled_time_and_fails_the_invocation_on_a_failed_partition(
    s3, records, monkeypatch
):
    from cdk_ts_runtime.handlers import compaction

    monkeypatch.setenv("CDK_TS_COMPACTION_SETTINGS", json.dumps(settings().as_json()))
    archive(s3, records)
    # 00:30 on 2 March: only the 22:00 partition has ended more than an hour ago
    report = compaction.handler({"time": "2026-03-02T00:30:00Z", "Since": "2026-03-01"}, None)
    assert [c["partition"][-7:] for c in report["compacted"]] == ["hour=22"]

    s3.put_object(Bucket=BUCKET, Key="dynamodb/table=readings/dt=2026-03-01/hour=23/s-9-9.jsonl.gz", Body=b"not gzip")
    with pytest.raises(CompactionFailedError, match="table=readings/dt=2026-03-01/hour=23: BadGzipFile"):
        compaction.handler({"time": "2026-03-05T00:00:00Z", "Since": "2026-03-01"}, None)
    assert [s.state for s in ArchiveInventory(settings(), s3_client=s3).statuses(
        now=LATER, since=datetime(2026, 3, 1, tzinfo=UTC))] == [
        PartitionState.COMPACTED, PartitionState.PENDING, PartitionState.COMPACTED]  # the others went on
    with pytest.raises(ValueError, match="Since 'yesterday' is not an ISO day"):
        compaction.handler({"Since": "yesterday"}, None)
