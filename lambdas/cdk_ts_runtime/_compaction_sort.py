"""A partition's rows deduplicated and sorted out of core: memory stays flat however large the partition is.

The raw lines become Arrow batches as in :func:`cdk_ts_runtime._compaction.compact_lines` (the same
generation rules) and are spilled, batch by batch, to a Parquet file on local disk (Lambda's ephemeral
``/tmp``). DuckDB then keeps each ``eventID``'s first line and sorts by key, time and sequence number
within a memory limit, spilling to the same disk: "DuckDB supports larger-than-memory workloads ... by
spilling to disk" for sorting, aggregation and joins, into ``temp_directory`` once ``memory_limit`` is
reached (DuckDB documentation, "Memory Management in DuckDB" and the ``memory_limit`` and
``temp_directory`` configuration options). The sorted rows stream out in batches and are written as
Parquet files one row group at a time (:func:`write_parquet_files`).

Chosen by measurement (``bench/README.md``, compaction at scale): DuckDB's sort kept peak memory flat
from 1 to 5 million changes, where the in-memory sort grows by about 1 GB per million.

DuckDB and pyarrow are imported when a partition is compacted; in Lambda pyarrow comes from the AWS SDK
for pandas layer and DuckDB from a layer of the user's (``CompactionOptions(extra_layers=...)``). Without
DuckDB the compaction sorts in memory as before (:func:`duckdb_available`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk_ts_runtime._compaction import change_batches, compacted_schema, pyarrow_modules
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._errors import CdkTsError

#: Lambda sets the function's memory size (MB) in this variable (Lambda developer guide, "Defined runtime
#: environment variables").
LAMBDA_MEMORY = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
#: DuckDB's share of the function's memory; the rest is Python, pyarrow's batches and the Parquet writer.
_DUCKDB_SHARE = 0.4
_BATCH_ROWS = 16_384


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
        spill = Path(work) / "lines.parquet"
        lines = _spill_lines(bodies, settings, spill, pq)
        connection = duckdb.connect(config={
            "memory_limit": f"{memory_limit_mib}MB", "temp_directory": str(Path(work) / "duckdb"),
            "threads": threads or os.cpu_count() or 1,
        })
        try:
            connection.execute("SET TimeZone = 'UTC'")
            connection.execute(
                "CREATE TEMP TABLE firsts AS SELECT min(_ordinal) AS _ordinal FROM read_parquet(?) GROUP BY eventid",
                [str(spill)],
            )
            ((kept,),) = connection.execute("SELECT count(*) FROM firsts").fetchall()
            names = ", ".join(f'"{name}"' for name in compacted_schema(settings).names)
            # the in-memory sort is stable; the line's position as the last key gives DuckDB's the same order
            query = (
                f"SELECT {names} FROM read_parquet(?) SEMI JOIN firsts USING (_ordinal) "
                "ORDER BY keys, approximatecreationdatetime, length(sequencenumber), sequencenumber, _ordinal"
            )

            def source() -> Iterator[Any]:
                relation = connection.sql(query, params=[str(spill)])
                # a relation streams its rows; to_arrow_reader is DuckDB 1.4's name for fetch_record_batch
                reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_record_batch
                yield from reader(_BATCH_ROWS)

            yield SortedChanges(compacted_schema(settings), kept, lines - kept, source)
        finally:
            connection.close()


def _spill_lines(bodies: Iterable[bytes], settings: CompactionSettings, path: Path, pq: Any) -> int:
    """Write every line (duplicates too, with its position) to a local Parquet file; the number of lines."""
    lines = 0
    writer = None
    for batch in change_batches(bodies, settings, ordinal=True):
        if writer is None:
            # lz4: the file is read once, moments later; speed matters more than size
            writer = pq.ParquetWriter(str(path), batch.schema, compression="lz4")
        if batch.num_rows:
            writer.write_batch(batch)
            lines += batch.num_rows
    writer.close()
    return lines


def _duckdb_module() -> Any:
    try:
        import duckdb
    except ImportError as error:
        raise DuckdbMissingError(
            "the out-of-core compaction needs duckdb: in Lambda give the function a layer holding it "
            "(CompactionOptions(extra_layers=...)); elsewhere pip install duckdb"
        ) from error
    return duckdb
