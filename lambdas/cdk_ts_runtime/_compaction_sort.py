"""A partition's rows deduplicated and sorted out of core: memory stays flat however large the partition is.

DuckDB parses the raw lines (:mod:`cdk_ts_runtime._compaction_sql`: the same rows and generation rules
as :func:`cdk_ts_runtime._compaction.compact_lines`) as Python hands it the objects, a chunk at a time, and
writes them to Parquet files on local disk (Lambda's ephemeral ``/tmp``), one folder per range of keys
(:class:`cdk_ts_runtime._compaction_ranges.KeyRanges`). It then keeps each ``eventID``'s first line and sorts
by key, time and sequence number, a range at a time, within a memory limit, spilling to the same disk: "DuckDB
supports larger-than-memory workloads ... by spilling to disk" for sorting, aggregation and joins, into
``temp_directory`` once ``memory_limit`` is reached (DuckDB documentation, "Memory Management in DuckDB" and the
``memory_limit`` and ``temp_directory`` configuration options). The sorted rows stream out in batches and are
written as Parquet files one row group at a time (:func:`write_parquet_files`).

Chosen by measurement (``bench/README.md``, compaction at scale): DuckDB's sort kept peak memory flat
from 1 to 5 million changes, where the in-memory sort grows by about 1 GB per million; parsing in DuckDB
rather than line by line in Python, and each range's files written in the same pass, are what make it
several times faster.

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
from cdk_ts_runtime._compaction_ranges import KeyRanges
from cdk_ts_runtime._errors import CdkTsError

#: Lambda sets the function's memory size (MB) in this variable (Lambda developer guide, "Defined runtime
#: environment variables").
LAMBDA_MEMORY = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
#: DuckDB's share of the function's memory; the rest is Python, pyarrow's batches and the Parquet writer.
_DUCKDB_SHARE = 0.4
#: DuckDB sorts a range of keys at a time, each about 1/_SORT_SHARE of its memory limit in raw text: its sort
#: needs several times the rows' size (measured: 120 MB of wide rows did not sort within 128 MB).
_SORT_SHARE = 4
#: Rows of each batch of ``SortedChanges.of_table``; small enough that large rows stay a few MB a batch.
_BATCH_ROWS = 2048
#: Raw text handed to DuckDB at a time (one Arrow batch it pulls): Python holds one chunk.
_CHUNK_BYTES = 16 * 2**20
#: ... and at most this fraction of DuckDB's memory limit: a chunk takes about 15-30 times its text while parsed.
_CHUNK_SHARE = 64


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
    duckdb = _duckdb_module()
    with tempfile.TemporaryDirectory(prefix="cdk-ts-compaction-", dir=directory) as work:
        # no database file: the parsed lines go to Parquet files, one folder per range of keys
        connection = duckdb.connect(config={
            "memory_limit": f"{memory_limit_mib}MB", "temp_directory": str(Path(work) / "duckdb"),
            "threads": threads or os.cpu_count() or 1,
        })
        try:
            connection.execute("SET TimeZone = 'UTC'")
            chunk = min(_CHUNK_BYTES, memory_limit_mib * 2**20 // _CHUNK_SHARE)
            ranges = KeyRanges(connection, Path(work), memory_limit_mib * 2**20 // _SORT_SHARE)
            lines = ranges.load(text_chunks(bodies, chunk), settings)
            names = ", ".join(f'"{name}"' for name in compacted_schema(settings).names)
            groups = ranges.groups()
            kept = sum(ranges.events(span) for span in groups)

            def source() -> Iterator[Any]:
                for span in groups:
                    yield from ranges.sorted_batches(span, names)

            yield SortedChanges(compacted_schema(settings), kept, lines - kept, source)
        finally:
            connection.close()


def text_chunks(bodies: Iterable[bytes], chunk_bytes: int) -> Iterator[tuple[list[str], list[int]]]:
    """The objects' text in pieces of whole lines, numbered in order, about ``chunk_bytes`` at a time.

    Python holds one chunk, and DuckDB parses a piece at a time whatever an object's size (an object of
    wide rows took more than a 64 MiB limit at once); a piece's number and a line's place in it order the
    lines as the objects and their lines came.
    """
    texts: list[str] = []
    numbers: list[int] = []
    held = 0
    pieces = (piece for body in bodies for piece in _pieces(gzip.decompress(body).decode(), chunk_bytes))
    for number, piece in enumerate(pieces):
        texts.append(piece)
        numbers.append(number)
        held += len(piece)
        if held >= chunk_bytes:
            yield texts, numbers
            texts, numbers, held = [], [], 0
    if texts:
        yield texts, numbers


def _pieces(text: str, size: int) -> Iterator[str]:
    """``text`` cut after the first newline past every ``size`` characters: whole lines, the last piece the rest."""
    start = 0
    while len(text) - start > size and (end := text.find("\n", start + size)) >= 0:
        yield text[start:end + 1]
        start = end + 1
    if start < len(text):
        yield text[start:]


def _duckdb_module() -> Any:
    try:
        import duckdb
    except ImportError as error:
        raise DuckdbMissingError(
            "the out-of-core compaction needs duckdb: in Lambda give the function a layer holding it "
            "(CompactionOptions(extra_layers=...)); elsewhere pip install duckdb"
        ) from error
    return duckdb
