"""The ranges of keys the out-of-core sort writes in one pass: however the keys fall, the rows and bytes are the
in-memory sort's, each sort stays within its budget where keys allow, and a range too large is sorted a span of
keys at a time."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pytest

from cdk_ts_runtime._compaction import compact_lines, compacted_schema, parquet_files, write_parquet_files
from cdk_ts_runtime._compaction_ranges import KeyRanges, KeySpan, quantiles
from cdk_ts_runtime._compaction_sort import SortedChanges, text_chunks
from tests.runtime.test_compaction_scale import SETTINGS

pytest.importorskip("pyarrow")


def bodies_of(keys: list[str | None], per_object: int = 300) -> list[bytes]:
    """Raw objects of one change per key (None: a line without keys), every 7th change delivered twice."""
    lines = []
    for n, key in enumerate(keys):
        item = None if key is None else {"pk": {"S": key}}
        image = {**(item or {}), "reading": {"N": f"{n % 900 / 100:.2f}"}, "note": {"S": "x" * (n % 50)}}
        line = json.dumps({
            "eventID": f"{n:032x}", "eventName": "MODIFY", "sequenceNumber": str(10**20 + n % 11),
            "approximateCreationDateTime": f"2026-03-01T07:{n % 60:02d}:00+00:00", "table": "t",
            "keys": None if item is None else json.dumps(item, separators=(",", ":")),
            "newImage": json.dumps(image, separators=(",", ":")), "oldImage": None, "userIdentity": None,
        }, separators=(",", ":"))
        lines += [line, line] if n % 7 == 0 else [line]
    return [gzip.compress(("\n".join(lines[i:i + per_object]) + "\n").encode())
            for i in range(0, len(lines), per_object)]


def compact_in_ranges(bodies: list[bytes], work: Path, budget_bytes: int) -> tuple[list[bytes], list[int], int]:
    """The Parquet files' bytes written through ``KeyRanges`` with this budget; each sort's rows; rows kept."""
    work.mkdir(exist_ok=True)
    connection = duckdb.connect(config={"memory_limit": "64MB", "threads": 1})
    connection.execute("SET TimeZone = 'UTC'")
    ranges = KeyRanges(connection, work, budget_bytes)
    lines = ranges.load(text_chunks(iter(bodies), 40_000), SETTINGS)
    groups = ranges.groups()
    kept = sum(ranges.events(span) for span in groups)
    schema = compacted_schema(SETTINGS)
    names = ", ".join(f'"{name}"' for name in schema.names)
    sizes = [sum(b.num_rows for b in ranges.sorted_batches(span, names)) for span in groups]
    rows = SortedChanges(schema, kept, lines - kept,
                         lambda: (b for span in groups for b in ranges.sorted_batches(span, names)))
    (work / "out").mkdir()
    written = [p.read_bytes() for p in write_parquet_files(rows.batches(), schema, SETTINGS, work / "out")]
    connection.close()
    return written, sizes, kept


def in_memory(bodies: list[bytes]) -> tuple[list[bytes], int]:
    table, _duplicates = compact_lines(iter(bodies), SETTINGS)
    return parquet_files(table, SETTINGS), table.num_rows


def test_keys_that_grow_through_the_hour_split_the_last_range_and_keep_the_in_memory_bytes(tmp_path):
    # given keys that only grow, so the first object's keys put every later change in the last range
    bodies = bodies_of([f"device-{n:06d}" for n in range(3_000)])
    expected, events = in_memory(bodies)

    # when each sort may take about a tenth of the partition's text
    text = sum(len(gzip.decompress(b)) for b in bodies)
    written, sizes, kept = compact_in_ranges(bodies, tmp_path, text // 10)

    # then the last range was split into sorts of about the budget, and the bytes are the in-memory sort's
    assert kept == sum(sizes) == events == 3_000
    assert len(sizes) >= 8 and max(sizes) <= 2 * events // 10
    assert written == expected


def test_one_key_written_all_hour_is_sorted_whole_and_lines_without_keys_come_last(tmp_path):
    # given one item changed 2,000 times, and 100 lines with no keys at all
    bodies = bodies_of(["hot"] * 2_000 + [None] * 100)
    expected, events = in_memory(bodies)

    written, sizes, kept = compact_in_ranges(bodies, tmp_path, 10_000)

    # then the key cannot be split: one sort takes it, with the lines without keys (they sort after every key)
    assert kept == events == 2_100
    assert sizes == [2_100]
    assert written == expected


def test_small_ranges_sort_together_and_an_empty_partition_has_no_rows(tmp_path):
    keys = [f"d-{n % 97:02d}" for n in range(2_000)]
    expected, events = in_memory(bodies_of(keys))

    written, sizes, kept = compact_in_ranges(bodies_of(keys), tmp_path / "a", 10**9)

    assert sizes == [events] and kept == 2_000 and written == expected
    assert compact_in_ranges([], tmp_path / "b", 10**9)[1:] == ([], 0)


def test_quantiles_cut_a_sample_into_parts_of_about_equal_size():
    assert quantiles([str(n) for n in range(10, 50)], 4) == ["20", "30", "40"]
    assert quantiles(["a"] * 10, 4) == ["a"]
    assert quantiles([], 4) == []


def test_spans_take_every_key_once_in_order_null_keys_in_the_last():
    keys = ["a", "a'b", "b", "m", "z", None]
    spans = [KeySpan([]), KeySpan([], None, "a'b"), KeySpan([], "a'b", "m"), KeySpan([], "m", None)]
    connection = duckdb.connect()
    connection.execute("CREATE TABLE t AS SELECT unnest(?::VARCHAR[]) AS keys", [keys])

    taken = [[k for (k,) in connection.execute(f"SELECT keys FROM t WHERE {span.where()} ORDER BY keys").fetchall()]
             for span in spans]

    assert taken == [["a", "a'b", "b", "m", "z", None], ["a"], ["a'b", "b"], ["m", "z", None]]
