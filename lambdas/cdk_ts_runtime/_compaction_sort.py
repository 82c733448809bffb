"""A partition's rows deduplicated and sorted out of core: memory stays flat however large the partition is.

DuckDB parses the raw lines (:mod:`cdk_ts_runtime._compaction_sql`: the same rows and generation rules
as :func:`cdk_ts_runtime._compaction.compact_lines`) into a database file on local disk (Lambda's ephemeral
``/tmp``), a chunk of objects at a time. It then keeps each ``eventID``'s first line and sorts by key,
time and sequence number within a memory limit, spilling to the same disk: "DuckDB supports larger-than-memory
workloads ... by spilling to disk" for sorting, aggregation and joins, into ``temp_directory`` once ``memory_limit`` is
reached (DuckDB documentation, "Memory Management in DuckDB" and the ``memory_limit`` and
``temp_directory`` configuration options). The sorted rows stream out in batches and are written as
Parquet files one row group at a time (:func:`write_parquet_files`).

Chosen by measurement (``bench/README.md``, compaction at scale): DuckDB's sort kept peak memory flat
from 1 to 5 million changes, where the in-memory sort grows by about 1 GB per million; parsing in DuckDB
rather than line by line in Python is what makes it several times faster.

DuckDB and pyarrow are imported when a partition is compacted; in Lambda pyarrow comes from the AWS SDK
for pandas layer and DuckDB from a layer of the user's (``CompactionOptions(duckdb_layer=...)``). Without
DuckDB the compaction sorts in memory as before (:func:`duckdb_available`).
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk_ts_runtime._compaction import compacted_schema, pyarrow_modules
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._compaction_sql import parse_lines_sql
from cdk_ts_runtime._errors import CdkTsError

#: Lambda sets the function's memory size (MB) in this variable (Lambda developer guide, "Defined runtime
#: environment variables").
LAMBDA_MEMORY = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
#: DuckDB's share of the function's memory; the rest is Python, pyarrow's batches and the Parquet writer.
_DUCKDB_SHARE = 0.4
#: DuckDB sorts a range of keys at a time, each about 1/_SORT_SHARE of its memory limit in Arrow bytes: its sort
#: needs several times the rows' size (measured: 120 MB of wide rows did not sort within 128 MB).
_SORT_SHARE = 4
#: Rows of each batch DuckDB streams out; small enough that large rows stay a few MB a batch.
_BATCH_ROWS = 2048
#: Raw text handed to DuckDB in one statement: few statements, and Python holds little.
_CHUNK_BYTES = 16 * 2**20
#: ... and at most this fraction of DuckDB's memory limit: measured, a chunk takes about 15 times its text while parsed.
_CHUNK_SHARE = 32


class DuckdbMissingError(CdkTsError, ImportError):
    """DuckDB is not installed where an out-of-core compaction was asked for."""


def duckdb_available() -> bool:
    """True when ``duckdb`` can be imported (the out-of-core sort can run)."""
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return False
    return True


def duckdb_memory_limit_mib(env: Mapping[str, str]) -> int:
    """DuckDB's memory limit: 40% of the function's memory (``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``), else 256 MiB."""
    try:
        function_mib = int(env.get(LAMBDA_MEMORY, ""))
    except ValueError:
        return 256
    return max(64, int(function_mib * _DUCKDB_SHARE))


@dataclass
class SortedChanges:
    """A partition's compacted rows in order: ``batches()`` streams them, ``to_table()`` holds them all.

    :param schema: the compacted schema (``compacted_schema``).
    :param num_rows: rows, one per ``eventID``.
    :param duplicates: lines dropped because their ``eventID`` came earlier.
    :param source: a callable giving a fresh iterator of Arrow record batches, in order.
    """

    schema: Any
    num_rows: int
    duplicates: int
    source: Any

    def batches(self) -> Iterator[Any]:
        """The rows in order, as record batches of the compacted schema."""
        for batch in self.source():
            if batch.num_rows:
                yield batch.cast(self.schema) if batch.schema != self.schema else batch

    def to_table(self) -> Any:
        """Every row in one Arrow table (memory grows with the partition: for sinks that need a table)."""
        pa, _pc, _pq = pyarrow_modules()
        return pa.Table.from_batches(list(self.batches()), schema=self.schema)

    @classmethod
    def of_table(cls, table: Any, duplicates: int) -> SortedChanges:
        """Rows already sorted in memory (``compact_lines``)."""
        return cls(table.schema, table.num_rows, duplicates, lambda: iter(table.to_batches(_BATCH_ROWS)))


@contextmanager
def sorted_changes(
    bodies: Iterable[bytes], settings: CompactionSettings, *, memory_limit_mib: int,
    directory: str | None = None, threads: int | None = None,
) -> Iterator[SortedChanges]:
    """The lines of ``bodies`` deduplicated and sorted out of core, while the context is open.

    :param bodies: the raw objects' gzip bytes, in a fixed order (the first copy of an event is kept).
    :param settings: the columns to extract and the granularity.
    :param memory_limit_mib: DuckDB's memory limit; beyond it DuckDB spills to ``directory``.
    :param directory: where the spill and DuckDB's temporary files go (removed on exit).
        Default: None — the system's temporary directory (``/tmp`` in Lambda).
    :param threads: DuckDB's threads.
        Default: None — one per CPU.
    """
    _pa, _pc, pq = pyarrow_modules()
    duckdb = _duckdb_module()
    with tempfile.TemporaryDirectory(prefix="cdk-ts-compaction-", dir=directory) as work:
        # a database file: the parsed lines live on disk, DuckDB holding only what its memory limit allows
        connection = duckdb.connect(str(Path(work) / "lines.duckdb"), config={
            "memory_limit": f"{memory_limit_mib}MB", "temp_directory": str(Path(work) / "duckdb"),
            "threads": threads or os.cpu_count() or 1,
        })
        try:
            connection.execute("SET TimeZone = 'UTC'")
            chunk = min(_CHUNK_BYTES, memory_limit_mib * 2**20 // _CHUNK_SHARE)
            lines, text_bytes = _load_lines(connection, bodies, settings, chunk)
            ranges = _key_ranges(connection, -(-text_bytes * _SORT_SHARE // (memory_limit_mib * 2**20)))
            names = ", ".join(f'"{name}"' for name in compacted_schema(settings).names)
            parts, kept = [], 0
            for number, (where, bounds) in enumerate(ranges):
                part = Path(work) / f"sorted-{number:04d}.parquet"
                # each event's first line; the line's position as the last key makes DuckDB's sort as stable as
                # the in-memory one. COPY writes the sorted rows to disk as it goes.
                ((rows,),) = connection.execute(
                    f"COPY (WITH part AS (SELECT * FROM lines WHERE {where}) "
                    f"SELECT {names} FROM part SEMI JOIN (SELECT min(_ordinal) AS _ordinal FROM part GROUP BY eventid) "
                    "firsts USING (_ordinal) "
                    "ORDER BY keys, approximatecreationdatetime, length(sequencenumber), sequencenumber, _ordinal) "
                    f"TO '{part}' (FORMAT parquet, COMPRESSION lz4, ROW_GROUP_SIZE {_BATCH_ROWS})",
                    bounds,
                ).fetchall()
                parts.append(part)
                kept += rows
            connection.execute("DROP TABLE lines")

            def source() -> Iterator[Any]:
                for part in parts:
                    yield from pq.ParquetFile(str(part)).iter_batches(batch_size=_BATCH_ROWS)

            yield SortedChanges(compacted_schema(settings), kept, lines - kept, source)
        finally:
            connection.close()


def _load_lines(connection: Any, bodies: Iterable[bytes], settings: CompactionSettings,
                chunk_bytes: int) -> tuple[int, int]:
    """Every line (duplicates too, with its position) parsed by DuckDB into table ``lines``; the lines and text bytes.

    Objects go to DuckDB about ``chunk_bytes`` of text at a time, so Python holds one chunk's text.
    """
    parse = parse_lines_sql(settings)
    connection.execute(f"CREATE TABLE lines AS {parse} LIMIT 0", [[], []])
    texts: list[str] = []
    numbers: list[int] = []
    held = size = 0

    def flush() -> None:
        connection.execute(f"INSERT INTO lines {parse}", [texts, numbers])
        texts.clear()
        numbers.clear()

    for number, body in enumerate(bodies):
        texts.append(gzip.decompress(body).decode())
        numbers.append(number)
        held += len(texts[-1])
        if held >= chunk_bytes:
            flush()
            size, held = size + held, 0
    if texts:
        flush()
    ((lines,),) = connection.execute("SELECT count(*) FROM lines").fetchall()
    return lines, size + held


def _key_ranges(connection: Any, count: int) -> list[tuple[str, list[str]]]:
    """``count`` ranges of ``keys`` (SQL conditions and their parameters) of about equal rows, from a sample.

    Every copy of an event has the same key, so each range deduplicates and sorts on its own, and the
    ranges in order are the whole partition in order. One key cannot be split: a single item written
    more than a range's worth of times makes its range larger than the others.
    """
    if count <= 1:
        return [("true", [])]
    sample = sorted(k for (k,) in connection.execute(
        "SELECT keys FROM lines WHERE keys IS NOT NULL USING SAMPLE reservoir(20000 ROWS) REPEATABLE (7)").fetchall())
    bounds = sorted({sample[len(sample) * n // count] for n in range(1, count)}) if sample else []
    ranges = [("keys < ?", bounds[:1])] if bounds else []
    ranges += [("keys >= ? AND keys < ?", [low, high]) for low, high in zip(bounds, bounds[1:], strict=False)]
    ranges.append(("(keys >= ? OR keys IS NULL)", bounds[-1:]) if bounds else ("true", []))
    return ranges


def _duckdb_module() -> Any:
    try:
        import duckdb
    except ImportError as error:
        raise DuckdbMissingError(
            "the out-of-core compaction needs duckdb: in Lambda give the function a layer holding it "
            "(CompactionOptions(extra_layers=...)); elsewhere pip install duckdb"
        ) from error
    return duckdb
