"""A partition's parsed lines split by ranges of keys into Parquet files in one pass, then sorted a range at a time.

Every copy of an event has the same key, so each range deduplicates and sorts on its own, and the ranges in
key order are the whole partition in order. DuckDB writes each range to its own folder while it parses the
lines (``COPY ... TO ... (FORMAT parquet, PARTITION_BY (...))``: "the files are written in a Hive partitioned
folder hierarchy", DuckDB documentation, "Partitioned Writes"), so each range's sort reads only its own files:
the work grows with the partition, not with its square (``bench/README.md``, compaction at scale: the ranges
used to be cut out of one table, which each range read whole).

The ranges' bounds come from the first objects' keys. A range that turns out larger than a sort's share of
DuckDB's memory is sorted a sub-range at a time, each sort reading the range's own files through a filter on its
keys (bounds from a sample of them): reading a range again costs less than writing it again, which the previous
version did (``bench/README.md``). Small neighbours are sorted together. One key cannot be split: a single item
written more than a range's worth of times is sorted on its own, DuckDB spilling to disk.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

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
_SORT = ("WITH part AS (SELECT * FROM read_parquet({files}, hive_partitioning = false) WHERE {where}) "
         "SELECT {names} FROM part SEMI JOIN (SELECT min(_ordinal) AS _ordinal FROM part GROUP BY eventid) firsts "
         "USING (_ordinal) "
         "ORDER BY keys, approximatecreationdatetime, length(sequencenumber), sequencenumber, _ordinal")


class KeySpan(NamedTuple):
    """The files one sort reads, and the keys it takes from them: ``low <= keys < high``, a None bound open.

    NULL keys sort after every key, so the span open above takes them.
    """

    files: list[str]
    low: str | None = None
    high: str | None = None

    def where(self) -> str:
        """The span's filter on ``keys``, as SQL."""
        terms = []
        if self.low is not None:
            low = f"keys >= {_literal(self.low)}"
            terms.append(low if self.high is not None else f"({low} OR keys IS NULL)")
        if self.high is not None:
            terms.append(f"keys < {_literal(self.high)}")
        return " AND ".join(terms) or "TRUE"


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

    def groups(self) -> list[KeySpan]:
        """What each sort reads, in key order: ranges within the budget, neighbours together, large ones in spans."""
        groups: list[KeySpan] = []
        held = self._budget + 1
        for files, rows in self._ranges(self._work / "ranges"):
            for span, span_rows in self._within_budget(files, rows):
                whole = span.low is None and span.high is None
                if not whole or held + span_rows * self._line_bytes > self._budget:
                    groups.append(KeySpan([], span.low, span.high))
                    held = 0 if whole else self._budget + 1
                groups[-1].files.extend(span.files)
                held += span_rows * self._line_bytes
        return groups

    def events(self, span: KeySpan) -> int:
        """Distinct events in ``span``: the rows its sort gives."""
        ((count,),) = self._connection.execute(
            f"SELECT count(DISTINCT eventid) FROM read_parquet({_files(span.files)}, hive_partitioning = false) "
            f"WHERE {span.where()}").fetchall()
        return count

    def sorted_batches(self, span: KeySpan, names: str) -> Iterator[Any]:
        """The rows of ``span``, each event's first line, sorted, as Arrow record batches of columns ``names``."""
        relation = self._connection.sql(_SORT.format(files=_files(span.files), where=span.where(), names=names))
        # to_arrow_reader is DuckDB 2.0's name; 1.1 has only fetch_arrow_reader, which 2.0 deprecates
        reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        yield from reader(_BATCH_ROWS)

    def _write(self, select: str, bounds: list[str]) -> int:
        """The rows of ``select`` written to ``ranges/``, one subfolder per range of ``bounds``; the rows written."""
        folder = self._work / "ranges"
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

    def _within_budget(self, files: list[str], rows: int) -> list[tuple[KeySpan, int]]:
        """A range as it is, or cut by a sample of its own keys into spans within the budget; each span's rows."""
        count = -(-int(rows * self._line_bytes) // self._budget)
        if count <= 1:
            return [(KeySpan(files), rows)]
        source = f"read_parquet({_files(files)}, hive_partitioning = false)"
        ((sample,),) = self._connection.execute(
            f"SELECT list(keys) FROM (SELECT keys FROM {source} "
            f"WHERE keys IS NOT NULL USING SAMPLE reservoir({_SAMPLE_ROWS} ROWS) REPEATABLE (7))").fetchall()
        bounds = quantiles(sample or [], count)
        counted = dict(self._connection.execute(
            f"SELECT {range_sql(bounds)} AS span, count(*) FROM {source} GROUP BY span", _tree_order(bounds),
        ).fetchall())
        edges = [None, *bounds, None]
        # a span no row falls in is no sort; one key (a hot item) leaves a single span, sorted whole
        return [(KeySpan(files, edges[n], edges[n + 1]), counted[n]) for n in range(len(bounds) + 1) if n in counted]
