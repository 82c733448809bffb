"""Compaction whose memory does not grow with the partition: a partition larger than the process's address-space limit
is compacted out of core with no MemoryError (the in-memory sort fails on it), with the same rows, order and bytes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from cdk_ts_runtime._compaction import compact_lines, parquet_files, write_parquet_files
from cdk_ts_runtime._compaction_plan import ColumnSpec, CompactionSettings
from cdk_ts_runtime._compaction_sort import sorted_changes

SETTINGS = CompactionSettings(bucket="b", columns=(ColumnSpec("device", "string", attribute="pk"),
                                                   ColumnSpec("reading", "decimal(10,2)")), row_group_rows=1000)
#: Run in a fresh process under RLIMIT_AS: compact the partition's objects one way and print what came out.
CHILD = """
import json, resource, sys
from pathlib import Path
limit = int(sys.argv[1]) * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from tests.runtime.test_compaction_scale import SETTINGS
from cdk_ts_runtime._compaction import compact_lines, write_parquet_files
from cdk_ts_runtime._compaction_sort import SortedChanges, sorted_changes
mode, source, out = sys.argv[2:5]
bodies = (p.read_bytes() for p in sorted(Path(source).glob("*.jsonl.gz")))
try:
    if mode == "in-memory":
        rows = SortedChanges.of_table(*compact_lines(bodies, SETTINGS))
        files = list(write_parquet_files(rows.batches(), rows.schema, SETTINGS, Path(out)))
    else:
        with sorted_changes(bodies, SETTINGS, memory_limit_mib=64, directory=out, threads=1) as rows:
            files = list(write_parquet_files(rows.batches(), rows.schema, SETTINGS, Path(out)))
except MemoryError as error:
    print(json.dumps({"error": type(error).__name__}))
else:
    peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmPeak"))
    print(json.dumps({"rows": rows.num_rows, "duplicates": rows.duplicates, "files": [str(f) for f in files],
                      "address_space_peak_mib": peak // 1024}))
"""
# glibc reserves 64 MB of address space per thread arena; DuckDB's threads would each take one (mallopt(3))
CHILD_ENV = {**os.environ, "MALLOC_ARENA_MAX": "2", "ARROW_DEFAULT_MEMORY_POOL": "system"}


def write_partition(directory: Path, events: int, payload_bytes: int, *, per_object: int = 500) -> int:
    """Raw objects as the archiver writes them: keys descending (so the sort has work), every 10th event twice."""
    directory.mkdir(parents=True, exist_ok=True)
    lines, written = [], 0
    for n in range(events):
        key = {"pk": {"S": f"d-{(events - n) % 97:02d}"}, "sk": {"N": str(events - n)}}
        image = {**key, "reading": {"N": f"{n % 5000 / 100:.2f}"}, "payload": {"S": f"{n:08d}" * (payload_bytes // 8)}}
        line = json.dumps({
            "eventID": f"{n:032x}", "eventName": "INSERT", "sequenceNumber": str(10**20 + n),
            "approximateCreationDateTime": f"2026-03-01T07:{n // 1000 % 60:02d}:00+00:00", "table": "t",
            "keys": json.dumps(key, separators=(",", ":")), "newImage": json.dumps(image, separators=(",", ":")),
            "oldImage": None, "userIdentity": None,
        }, separators=(",", ":"))
        lines += [line, line] if n % 10 == 0 else [line]
        if len(lines) >= per_object or n == events - 1:
            (directory / f"{written:06d}.jsonl.gz").write_bytes(gzip.compress("\n".join(lines).encode(), 1))
            lines, written = [], written + 1
    return written


def compact_in_child(mode: str, source: Path, out: Path, limit_mib: int) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    answer = subprocess.run([sys.executable, "-c", CHILD, str(limit_mib), mode, str(source), str(out)],
                            capture_output=True, text=True, env=CHILD_ENV, cwd=Path(__file__).parents[2], check=False)
    assert answer.returncode == 0, answer.stderr[-2000:]
    return json.loads(answer.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_partition_larger_than_the_memory_limit_compacts_out_of_core_without_memory_error(tmp_path):
    events, limit_mib = 30_000, 1000
    write_partition(tmp_path / "raw", events, payload_bytes=8_000)  # about 240 MB of lines

    # the in-memory sort holds the whole partition (twice, while it sorts): it cannot, within the limit
    failed = compact_in_child("in-memory", tmp_path / "raw", tmp_path / "a", limit_mib)
    assert failed["error"] in ("MemoryError", "ArrowMemoryError")  # Python's, or pyarrow's (a MemoryError)

    result = compact_in_child("out-of-core", tmp_path / "raw", tmp_path / "b", limit_mib)

    assert (result["rows"], result["duplicates"]) == (events, events // 10)
    files = result["files"]
    connection = duckdb.connect()
    readings = dict(connection.execute("SELECT eventid, reading FROM read_parquet(?)", [files]).fetchall())
    assert len(readings) == events  # one row per event
    assert all(reading == Decimal(int(event, 16) % 5000) / 100 for event, reading in readings.items())
    keys = [k for (k,) in connection.execute("SELECT keys FROM read_parquet(?)", [files]).fetchall()]
    assert keys == sorted(keys)


def test_the_out_of_core_sort_writes_the_same_rows_and_bytes_as_the_in_memory_sort(tmp_path):
    write_partition(tmp_path / "raw", 5_000, payload_bytes=16, per_object=700)
    bodies = [p.read_bytes() for p in sorted((tmp_path / "raw").glob("*.jsonl.gz"))]

    table, duplicates = compact_lines(iter(bodies), SETTINGS)
    in_memory = parquet_files(table, SETTINGS)
    (tmp_path / "out").mkdir()
    with sorted_changes(iter(bodies), SETTINGS, memory_limit_mib=64, directory=str(tmp_path), threads=2) as rows:
        out_of_core = [p.read_bytes() for p in write_parquet_files(rows.batches(), rows.schema, SETTINGS,
                                                                   tmp_path / "out")]
        assert (rows.num_rows, rows.duplicates) == (table.num_rows, duplicates) == (5_000, 500)

    assert out_of_core == in_memory
    assert list(tmp_path.iterdir()) == [tmp_path / "raw", tmp_path / "out"] or set(tmp_path.iterdir()) == {
        tmp_path / "raw", tmp_path / "out"}  # the spill and DuckDB's files are gone
