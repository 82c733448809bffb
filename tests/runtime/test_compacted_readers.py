"""The docs' "Reading the compacted layer" recipes (docs/snippets/compaction/: DuckDB, pyarrow, pandas, pyiceberg)
on a layer the compaction wrote from the archiver's objects: every event once, sequence numbers exact, declared
columns typed."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pytest

from cdk_ts_runtime._compaction_iceberg import ENV_ICEBERG
from tests.support.archive import write_compacted
from tests.support.docs import run

RECIPES = {"import duckdb": "read_duckdb", "import pyarrow.dataset": "read_pyarrow", "import pandas": "read_pandas",
           "from pyiceberg": "read_iceberg"}


def recipe(marker):
    return f"compaction/{RECIPES[marker]}.py"


@pytest.fixture
def sequences(aws, tmp_path, monkeypatch):
    """The compacted layer under ``parquet/`` in a fresh folder; the archive's sequence numbers, in stream order."""
    monkeypatch.chdir(tmp_path)
    write_compacted(tmp_path)
    return _sequences(tmp_path)


def _sequences(root):
    lines = [json.loads(line) for path in sorted(root.glob("dynamodb/**/*.jsonl.gz"))
             for line in gzip.decompress(path.read_bytes()).splitlines()]
    return sorted((line["sequenceNumber"] for line in lines), key=lambda s: (len(s), s))


def test_duckdb_reads_every_event_once_with_exact_sequence_numbers(sequences):
    rows = run(recipe("import duckdb"))["rows"]
    assert [row[3] for row in rows] == sequences and len(sequences) == 36
    assert {row[4] for row in rows} == {"INSERT", "MODIFY", "REMOVE"}
    assert {(row[0], type(row[1]), row[5], row[6]) for row in rows} == {("d", int, "readings", "2026-03-01")}


def test_pyarrow_filters_on_a_typed_column(sequences):
    table = run(recipe("import pyarrow.dataset"))["table"]
    assert table.schema.field("v").type == pa.int64() and table.schema.field("sequencenumber").type == pa.string()
    assert table.num_rows == 9  # the MODIFYs: new image v=2 (the INSERTs and the REMOVEs' old images hold 1)


def test_pandas_keeps_sequence_numbers_as_text(sequences):
    frame = run(recipe("import pandas"))["frame"]
    assert sorted(frame["sequencenumber"], key=lambda s: (len(s), s)) == sequences


def test_pyiceberg_reads_the_iceberg_table_from_the_functions_settings(aws, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/warehouse"}
    write_compacted(tmp_path, iceberg_catalog=catalog)
    monkeypatch.setenv(ENV_ICEBERG, json.dumps({"identifier": "archive.changes", "catalog": catalog}))
    rows = run(recipe("from pyiceberg"))["rows"]
    assert sorted(rows.column("sequencenumber").to_pylist(), key=lambda s: (len(s), s)) == _sequences(tmp_path)
