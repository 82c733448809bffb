"""A partition's parsed lines split by ranges of keys into Parquet files in one pass, then sorted a range at a time.

Every copy of an event has the same key, so each range deduplicates and sorts on its own, and the ranges in
key order are the whole partition in order. DuckDB writes each range to its own folder while it parses the
lines (``COPY ... TO ... (FORMAT parquet, PARTITION_BY (...))``: "the files are written in a Hive partitioned
folder hierarchy", DuckDB documentation, "Partitioned Writes"), so each range's sort reads only its own files:
the work grows with the partition, not with its square (``bench/README.md``, compaction at scale: the ranges
used to be cut out of one table, which each range read whole).

The ranges' bounds come from the first objects' keys. A range that turns out larger than a sort's share of
DuckDB's memory is split again, by a sample of its own keys, in one more pass over that range alone; small
neighbours are sorted together. One key cannot be split: a single item written more than a range's worth of
times is sorted on its own, DuckDB spilling to disk.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cdk_ts_runtime._compaction import pyarrow_modules
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._compaction_sql import BODIES, parse_lines_sql

#: Ranges the first objects' keys give, at most; each range is a file DuckDB keeps open while it writes.
_RANGES = 32
#: ... and at most the sort's budget over this many lines (at the first objects' bytes a line): each open file
#: costs DuckDB memory that grows with the rows (measured: with 8 KB lines and a 64 MiB limit, 16 open files ran
#: out of memory and 8 did not).
_LINES_A_RANGE = 256
#: The rows DuckDB gathers before it hands them to the files, and the row groups the files hold, take this
#: fraction of the sort's budget.
_WRITE_SHARE = 16
#: Rows of each batch DuckDB streams out of a sort; small enough that large rows stay a few MB a batch.
_BATCH_ROWS = 2048
#: Keys sampled to split a range.
_SAMPLE_ROWS = 20_000
#: Each event's first line; the line's position as the last key makes DuckDB's sort as stable as the in-memory one.
_SORT = ("WITH part AS (SELECT * FROM read_parquet({files}, hive_partitioning = false)) "
         "SELECT {names} FROM part SEMI JOIN (SELECT min(_ordinal) AS _ordinal FROM part GROUP BY eventid) firsts "
         "USING (_ordinal) "
         "ORDER BY keys, approximatecreationdatetime, length(sequencenumber), sequencenumber, _ordinal")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _files(files: list[str]) -> str:
    return "[" + ", ".join(_literal(name) for name in files) + "]"


def quantiles(sample: list[str], count: int) -> list[str]:
    """Up to ``count - 1`` bounds cutting the sorted ``sample`` into ``count`` parts of about equal size."""
    keys = sorted(sample)
    return sorted({keys[len(keys) * n // count] for n in range(1, count)}) if keys else []


def range_sql(bounds: list[str]) -> str:
    """The number of the range ``keys`` falls in: ``n`` for ``bounds[n - 1] <= keys < bounds[n]``; NULL keys last.

    A binary tree of comparisons, each bound a parameter used once, in the order of the statement's text.
    """
    def tree(low: int, high: int) -> str:
        if low == high:
            return str(low)
        middle = (low + high) // 2
        return f"CASE WHEN keys < ? THEN {tree(low, middle)} ELSE {tree(middle + 1, high)} END"

    return f"CASE WHEN keys IS NULL THEN {len(bounds)} ELSE {tree(0, len(bounds))} END"


def _tree_order(bounds: list[str]) -> list[str]:
    """The bounds in the order :func:`range_sql` asks for them."""
    def walk(low: int, high: int) -> list[str]:
        if low == high:
            return []
        middle = (low + high) // 2
        return [bounds[middle], *walk(low, middle), *walk(middle + 1, high)]

    return walk(0, len(bounds))


class KeyRanges:
    """A partition's lines in Parquet files by range of keys (in a work folder), sorted a range at a time.

    :param connection: the DuckDB connection (its memory limit and spill folder set).
    :param work: a folder for the ranges' files, removed by the caller.
    :param budget_bytes: the raw text one sort may take: DuckDB's sort needs several times the rows' size.
    """

    def __init__(self, connection: Any, work: Path, budget_bytes: int) -> None:
        self._connection, self._work, self._budget = connection, work, budget_bytes
        self._line_bytes = 0.0
        self._folders = 0

    def load(self, chunks: Iterator[tuple[list[str], list[int]]], settings: CompactionSettings) -> int:
        """Every line (duplicates too, with its position) parsed into the ranges' files; the number of lines.

        :param chunks: the objects' texts and numbers, a chunk at a time; DuckDB pulls them as it parses.
        :param settings: the declared columns and the granularity.
        """
        pa, _pc, _pq = pyarrow_modules()
        first = next(chunks, None)
        if first is None:
            return 0
        ((sample,),) = self._connection.execute(
            f"SELECT list(keys) FROM (SELECT json_extract_string(line, '$.keys') AS keys FROM "
            f"(SELECT unnest(string_split(body, chr(10))) AS line FROM ({BODIES})) WHERE line <> '')", list(first),
        ).fetchall()
        schema = pa.schema([("body", pa.string()), ("number", pa.int64())])
        self._line_bytes = max(1.0, sum(map(len, first[0])) / max(1, len(sample or [])))
        text = 0

        def batches() -> Iterator[Any]:
            nonlocal text
            for texts, numbers in itertools.chain([first], chunks):
                text += sum(map(len, texts))
                yield pa.record_batch([pa.array(texts, pa.string()), pa.array(numbers, pa.int64())], schema=schema)

        self._connection.register("_objects", pa.RecordBatchReader.from_batches(schema, batches()))
        try:
            lines = self._write(parse_lines_sql(settings, "SELECT body, number FROM _objects"),
                                quantiles([k for k in sample or [] if k is not None], self._open_files(_RANGES)))
        finally:
            self._connection.unregister("_objects")
        self._line_bytes = text / max(lines, 1)
        return lines

    def groups(self) -> list[list[str]]:
        """The files of each sort, in key order: ranges within the budget, neighbours together, large ones split."""
        groups: list[list[str]] = []
        held = self._budget + 1
        for files, rows in self._ranges(self._work / "ranges-0"):
            for part, part_rows in self._within_budget(files, rows):
                if held + part_rows * self._line_bytes > self._budget:
                    groups.append([])
                    held = 0
                groups[-1] += part
                held += part_rows * self._line_bytes
        return groups

    def events(self, files: list[str]) -> int:
        """Distinct events in ``files``: the rows their sort gives."""
        ((count,),) = self._connection.execute(
            f"SELECT count(DISTINCT eventid) FROM read_parquet({_files(files)}, hive_partitioning = false)").fetchall()
        return count

    def sorted_batches(self, files: list[str], names: str) -> Iterator[Any]:
        """The rows of ``files``, each event's first line, sorted, as Arrow record batches of columns ``names``."""
        relation = self._connection.sql(_SORT.format(files=_files(files), names=names))
        # to_arrow_reader is DuckDB 2.0's name; 1.1 has only fetch_arrow_reader, which 2.0 deprecates
        reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        yield from reader(_BATCH_ROWS)

    def _write(self, select: str, bounds: list[str]) -> int:
        """The rows of ``select`` written to a new folder, one subfolder per range of ``bounds``; the rows written."""
        folder = self._work / f"ranges-{self._folders}"
        self._folders += 1
        gathered = max(64, int(self._budget / _WRITE_SHARE / self._line_bytes))
        self._connection.execute(f"SET partitioned_write_flush_threshold = {gathered}")
        ((rows,),) = self._connection.execute(
            f"COPY (SELECT *, {range_sql(bounds)} AS _range FROM ({select})) TO {_literal(str(folder))} "
            f"(FORMAT parquet, PARTITION_BY (_range), COMPRESSION lz4, "
            f"ROW_GROUP_SIZE {max(16, gathered // (len(bounds) + 1))})",
            _tree_order(bounds),
        ).fetchall()
        return rows

    def _open_files(self, wanted: int) -> int:
        """How many ranges one pass may write: ``wanted``, or fewer when lines are wide for the memory."""
        return max(2, min(wanted, int(self._budget / self._line_bytes / _LINES_A_RANGE)))

    def _ranges(self, folder: Path) -> list[tuple[list[str], int]]:
        """The ranges written to ``folder``, in key order: each one's files and rows."""
        _pa, _pc, pq = pyarrow_modules()
        found = []
        for sub in sorted(folder.glob("_range=*"), key=lambda path: int(path.name.split("=", 1)[1])):
            files = sorted(str(path) for path in sub.glob("*.parquet"))
            found.append((files, sum(pq.ParquetFile(name).metadata.num_rows for name in files)))
        return found

    def _within_budget(self, files: list[str], rows: int) -> list[tuple[list[str], int]]:
        """A range as it is, or split by its own keys into ranges within the budget (one pass over it)."""
        count = self._open_files(-(-int(rows * self._line_bytes) // self._budget))
        if count <= 1 or rows * self._line_bytes <= self._budget:
            return [(files, rows)]
        ((sample,),) = self._connection.execute(
            f"SELECT list(keys) FROM (SELECT keys FROM read_parquet({_files(files)}, hive_partitioning = false) "
            f"WHERE keys IS NOT NULL USING SAMPLE reservoir({_SAMPLE_ROWS} ROWS) REPEATABLE (7))").fetchall()
        bounds = quantiles(sample or [], count)
        if not bounds:  # one key: nothing to split
            return [(files, rows)]
        folder = self._work / f"ranges-{self._folders}"
        self._write(f"SELECT * FROM read_parquet({_files(files)}, hive_partitioning = false)", bounds)
        parts = self._ranges(folder)
        if len(parts) == 1:  # every sampled key the same range: splitting again would not help
            return parts
        return [piece for part, part_rows in parts for piece in self._within_budget(part, part_rows)]
