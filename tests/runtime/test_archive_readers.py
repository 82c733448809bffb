"""The docs' "Reading the archive" recipes (docs/snippets/stream-archiver/: DuckDB, pandas, pyarrow) on objects
the archiver wrote: exact numbers."""

from __future__ import annotations

import glob

import pandas as pd
import pyarrow as pa
import pyarrow.json as pj
import pytest

from tests.support.archive import write_archive
from tests.support.docs import run


@pytest.fixture
def sequences(aws, tmp_path, monkeypatch):
    """The archive in a fresh folder (the recipes read ``archive/``); the sequence numbers, in stream order."""
    monkeypatch.chdir(tmp_path)
    return write_archive(tmp_path / "archive")


def recipe(name):
    return f"stream-archiver/read_{name}.py"


def test_the_archive_has_inserts_modifies_and_removes_in_objects_read_together(sequences):
    files = glob.glob("archive/**/*.jsonl.gz", recursive=True)
    assert len(files) == 2 and len(sequences) == 36
    names = run(recipe("duckdb"))["rows"]
    assert {row[1] for row in names} == {"INSERT", "MODIFY", "REMOVE"}


def test_duckdb_keeps_every_sequence_number_exact_and_in_order(sequences):
    rows = run(recipe("duckdb"))["rows"]
    assert [row[0] for row in rows] == sequences
    assert {row[1]: row[7] is None for row in rows} == {"INSERT": True, "MODIFY": False, "REMOVE": False}


def test_pandas_keeps_every_sequence_number_exact(sequences):
    frame = run(recipe("pandas"))["frame"]
    assert sorted(frame["sequenceNumber"], key=lambda s: (len(s), s)) == sequences
    assert set(frame["eventName"]) == {"INSERT", "MODIFY", "REMOVE"}


def test_pyarrow_reads_objects_with_an_all_null_column_together_exactly(sequences):
    archive = run(recipe("pyarrow"))["archive"]
    assert archive.schema.field("oldImage").type == pa.string()
    assert sorted(archive.column("sequenceNumber").to_pylist(), key=lambda s: (len(s), s)) == sequences


def test_without_the_recipes_pandas_collapses_the_numbers_and_pyarrow_refuses(sequences):
    files = sorted(glob.glob("archive/**/*.jsonl.gz", recursive=True))
    careless = pd.concat([pd.read_json(path, lines=True) for path in files], ignore_index=True)
    assert careless["sequenceNumber"].nunique() < len(sequences)  # floats: the 36 values into a few
    with pytest.raises(pa.ArrowInvalid, match="Schema at index 1 was different"):
        pa.concat_tables([pj.read_json(path) for path in files])
