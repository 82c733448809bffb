"""Closed archive partitions rewritten as sorted, zstd Parquet with typed columns; needs pyarrow.

The raw gzip JSON Lines stay (they are the source of truth); each closed partition (an hour or a day,
see :mod:`cdk_ts_runtime._compaction_plan`) is read whole, redeliveries (same ``eventID``) dropped, the
rows sorted by key and time, and written as one *generation* of Parquet files. Then the readers are
switched (the Glue partition's location, or one Iceberg commit), then the manifest, and only then are
the previous generation's files deleted: a reader sees the old generation or the new one, never both.
A rerun over the same raw objects writes the same keys and rows and, once the manifest says so, does
nothing at all; a raw object the manifest does not list (a late record) makes the next run build a new
generation.

pyarrow is imported when a partition is compacted, not when this module is imported, so
``cdk_ts_runtime`` stays importable with the standard library and boto3 alone. In Lambda the
compaction function gets pyarrow from the AWS SDK for pandas layer (``ArchiveCompaction(pyarrow_layer_arn=...)``).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from cdk_ts_runtime._aws import LazyClient, client_property, error_code
from cdk_ts_runtime._compaction_columns import (  # noqa: F401 - attribute_from_column, column_value: this module's API
    ESCAPE_MARK,
    attribute_from_column,
    column_value,
    restore_image,
    split_image,
)
from cdk_ts_runtime._compaction_plan import (
    DUE_STATES,
    ArchiveInventory,
    ColumnSpec,
    CompactionSettings,
    Granularity,
    Manifest,
    Partition,
    PartitionsFailedError,
    PartitionStatus,
    generation_name,
)
from cdk_ts_runtime._errors import CdkTsError, ValidationError

logger = logging.getLogger(__name__)

#: Rows, or bytes of raw lines, gathered as Python objects before they become an Arrow batch: bound the
#: interpreter's share of memory whether the rows are small or large.
_BATCH_ROWS = 16_384
_BATCH_BYTES = 8 * 2**20


class PyarrowMissingError(CdkTsError, ImportError):
    """pyarrow is not installed where compaction runs (in Lambda: the AWS SDK for pandas layer is missing)."""


class CompactionFailedError(PartitionsFailedError):
    """Some partitions could not be compacted; the others were. ``report`` says which, and why."""


def pyarrow_modules() -> tuple[Any, Any, Any]:
    """``(pyarrow, pyarrow.compute, pyarrow.parquet)``, or :class:`PyarrowMissingError` saying where to get them."""
    try:
        import pyarrow
        import pyarrow.compute
        import pyarrow.parquet
    except ImportError as error:
        raise PyarrowMissingError(
            "compaction needs pyarrow: in Lambda give the function the AWS SDK for pandas layer "
            "(ArchiveCompaction(pyarrow_layer_arn=...)); elsewhere pip install pyarrow"
        ) from error
    return pyarrow, pyarrow.compute, pyarrow.parquet


def arrow_type(spec: ColumnSpec) -> Any:
    """The Arrow type of a declared column."""
    pa, _pc, _pq = pyarrow_modules()
    if spec.type.startswith("decimal("):
        precision, scale = (int(n) for n in spec.type[len("decimal("):-1].split(","))
        return pa.decimal128(precision, scale)
    return {"string": pa.string(), "bigint": pa.int64(), "double": pa.float64(), "boolean": pa.bool_()}[spec.type]


def compacted_schema(settings: CompactionSettings) -> Any:
    """The Parquet schema: the event's fields (time typed, the rest exact text), then the declared columns.

    With day granularity the hour is a data column (the day is the partition); with hour granularity
    ``table``, ``dt`` and ``hour`` are all in the path.
    """
    pa, _pc, _pq = pyarrow_modules()
    fields = [
        pa.field("eventid", pa.string(), nullable=False),
        pa.field("eventname", pa.string(), nullable=False),
        # up to 40 digits: more than a DECIMAL(38) holds, and a double would round it
        pa.field("sequencenumber", pa.string(), nullable=False),
        pa.field("approximatecreationdatetime", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("keys", pa.string()),
        pa.field("newimage", pa.string()),
        pa.field("oldimage", pa.string()),
        pa.field("useridentity", pa.string()),
    ]
    fields += [pa.field(c.name, arrow_type(c)) for c in settings.columns]
    if settings.granularity is Granularity.DAY:
        fields.append(pa.field("hour", pa.string(), nullable=False))
    return pa.schema(fields)


def compact_lines(bodies: Iterable[bytes], settings: CompactionSettings) -> tuple[Any, int]:
    """The Arrow table of the given raw objects' lines, one row per ``eventID``, sorted; and the duplicates dropped.

    Each declared column is read from the new image (the old one for a REMOVE; the keys without
    images); an attribute its column gives back exactly leaves that image (:func:`split_image`), so
    values are stored once, and :func:`restore_image` puts them back.

    Sorted by ``keys`` (the item's key as DynamoDB JSON text), then time, then sequence number as a number.
    The whole partition is held in memory: :func:`cdk_ts_runtime._compaction_sort.sorted_changes` does the
    same out of core.

    :param bodies: the raw objects' gzip bytes, in a fixed order (the first copy of an event is kept).
    :param settings: the columns to extract and the granularity.
    """
    pa, pc, _pq = pyarrow_modules()
    seen = _SeenIds()
    table = pa.Table.from_batches(list(change_batches(bodies, settings, seen=seen)),
                                  schema=compacted_schema(settings))
    digits = pc.utf8_length(table["sequencenumber"])
    order = pc.sort_indices(
        table.append_column("_digits", digits),
        sort_keys=[("keys", "ascending"), ("approximatecreationdatetime", "ascending"),
                   ("_digits", "ascending"), ("sequencenumber", "ascending")],
    )
    return table.take(order).combine_chunks(), seen.duplicates


class _SeenIds(set):
    """Event IDs already kept, and how many lines repeated one."""

    duplicates = 0


def change_batches(
    bodies: Iterable[bytes], settings: CompactionSettings, *, seen: _SeenIds | None = None,
    ordinal: bool = False,
) -> Iterable[Any]:
    """The raw lines as Arrow batches of the compacted schema (:func:`compact_lines` says how columns are made).

    :param bodies: the raw objects' gzip bytes, in a fixed order.
    :param settings: the columns to extract and the granularity.
    :param seen: drop lines whose ``eventID`` is in it and add the others (its ``duplicates`` counts the drops).
        Default: None — every line, duplicates too (the caller removes them).
    :param ordinal: add ``_ordinal``, the line's position (int64), so a caller can keep each event's first copy.
        Default: False.
    """
    pa, _pc, _pq = pyarrow_modules()
    schema = compacted_schema(settings)
    if ordinal:
        schema = schema.append(pa.field("_ordinal", pa.int64(), nullable=False))
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    declared = settings.columns
    position = held = 0
    for body in bodies:
        for text in gzip.decompress(body).splitlines():
            held += len(text)
            line = json.loads(text)
            event_id = line["eventID"]
            if seen is not None:
                if event_id in seen:
                    seen.duplicates += 1
                    continue
                seen.add(event_id)
            columns["eventid"].append(event_id)
            columns["eventname"].append(line["eventName"])
            columns["sequencenumber"].append(line["sequenceNumber"])
            columns["approximatecreationdatetime"].append(line["approximateCreationDateTime"])
            new_image, old_image = line.get("newImage"), line.get("oldImage")
            if declared:
                source = "new" if new_image is not None else "old" if old_image is not None else "keys"
                text = {"new": new_image, "old": old_image, "keys": line.get("keys") or "{}"}[source]
                image = json.loads(text)
                values, moved = split_image(image, declared)
                for spec, value in zip(declared, values, strict=True):
                    columns[spec.name].append(value)
                if moved and source != "keys" and ESCAPE_MARK not in text:
                    rest = json.dumps(image, separators=(",", ":"), ensure_ascii=False)
                    new_image, old_image = (rest, old_image) if source == "new" else (new_image, rest)
            columns["keys"].append(line.get("keys"))
            columns["newimage"].append(new_image)
            columns["oldimage"].append(old_image)
            columns["useridentity"].append(line.get("userIdentity"))
            if settings.granularity is Granularity.DAY:
                columns["hour"].append(line["approximateCreationDateTime"][11:13])
            if ordinal:
                columns["_ordinal"].append(position)
            position += 1
            if len(columns["eventid"]) == _BATCH_ROWS or held >= _BATCH_BYTES:
                yield _record_batch(columns, schema)
                held = 0
    yield _record_batch(columns, schema)


def _record_batch(columns: dict[str, list[Any]], schema: Any) -> Any:
    """The rows gathered so far as one Arrow batch; the lists are emptied (Python objects cost ~4x Arrow's bytes)."""
    pa, pc, _pq = pyarrow_modules()
    arrays = []
    for name in schema.names:
        if name == "approximatecreationdatetime":
            arrays.append(pc.cast(pa.array(columns[name], pa.string()), schema.field(name).type))
        else:
            arrays.append(pa.array(columns[name], schema.field(name).type))
        columns[name].clear()
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def parquet_files(table: Any, settings: CompactionSettings) -> list[bytes]:
    """``table`` as Parquet files of about ``target_file_bytes`` each: zstd, row groups of ``row_group_rows``."""
    with tempfile.TemporaryDirectory(prefix="cdk-ts-parquet-") as directory:
        return [path.read_bytes() for path in write_parquet_files(
            table.to_batches(), table.schema, settings, Path(directory))]


def write_parquet_files(batches: Iterable[Any], schema: Any, settings: CompactionSettings,
                        directory: Path) -> Iterator[Path]:
    """Sorted batches as Parquet files in ``directory``, each yielded once complete; one row group held at a time.

    A new file starts once one reaches ``target_file_bytes``; row groups hold ``row_group_rows`` rows.
    The bytes depend on the rows alone, not on how the batches were cut, so a rerun writes the same files.
    """
    pa, _pc, pq = pyarrow_modules()
    files = _RollingParquet(pa, pq, schema, settings, directory)
    pending: list[Any] = []
    held = 0
    for batch in batches:
        while batch.num_rows:
            take = min(batch.num_rows, settings.row_group_rows - held)
            pending.append(batch.slice(0, take))
            held += take
            batch = batch.slice(take)
            if held == settings.row_group_rows:
                yield from files.write(pa.Table.from_batches(pending, schema=schema).combine_chunks())
                pending, held = [], 0
    if pending or files.empty:
        yield from files.write(pa.Table.from_batches(pending, schema=schema))
    yield from files.close()


class _RollingParquet:
    """Row groups appended to ``part-NNNNN.parquet`` files, a new file once one reaches the target size."""

    def __init__(self, pa: Any, pq: Any, schema: Any, settings: CompactionSettings, directory: Path) -> None:
        self._pa, self._pq, self._schema, self._settings, self._directory = pa, pq, schema, settings, directory
        self._sink = self._writer = None
        self.written = 0

    @property
    def empty(self) -> bool:
        """True until a row group is written."""
        return self.written == 0 and self._writer is None

    def _path(self) -> Path:
        return self._directory / f"part-{self.written:05d}.parquet"

    def write(self, group: Any) -> Iterator[Path]:
        """Append one row group; yield the file it completes, if it does."""
        if self._writer is None:
            self._sink = self._pa.OSFile(str(self._path()), "wb")
            self._writer = self._pq.ParquetWriter(self._sink, self._schema, compression="zstd", write_statistics=True)
        self._writer.write_table(group, row_group_size=self._settings.row_group_rows)
        if self._sink.tell() >= self._settings.target_file_bytes:
            yield from self.close()

    def close(self) -> Iterator[Path]:
        """Finish the open file, if any, and yield it."""
        if self._writer is not None:
            self._writer.close()
            self._sink.close()
            self._writer = self._sink = None
            self.written += 1
            yield self._directory / f"part-{self.written - 1:05d}.parquet"


class CompactedLayerSink(Protocol):
    """Where a partition's rows go, and how readers are switched to them (Parquet + Glue, or Iceberg)."""

    def publish(self, partition: Partition, rows: Any, generation: str) -> tuple[list[str], str]:
        """Write the generation (``rows``: its ``SortedChanges``), switch readers to it; return its keys, location."""
        ...

    def retire(self, old: Manifest, new: Manifest) -> None:
        """Remove what only the previous generation used, once the manifest names the new one."""
        ...


class ParquetSink:
    """Parquet files under the compacted prefix; with a Glue table, each partition's location is switched.

    :param settings: the compacted layer's settings.
    :param s3_client: the boto3 S3 client.
        Default: None — created on first use.
    :param glue_client: the boto3 Glue client.
        Default: None — created on first use (only with a Glue table).
    """

    def __init__(self, settings: CompactionSettings, *, s3_client=None, glue_client=None) -> None:
        self.settings = settings
        self._s3 = LazyClient("s3", s3_client)
        self._glue = LazyClient("glue", glue_client)

    s3 = client_property("_s3", "The S3 client (created on first use).")
    glue = client_property("_glue", "The Glue client (created on first use).")

    def publish(self, partition: Partition, rows: Any, generation: str) -> tuple[list[str], str]:
        """Write the files (each uploaded as soon as it is complete), then point the Glue partition (if any) at them.

        :param rows: the partition's ``SortedChanges``.
        """
        location = partition.generation_prefix(self.settings.compacted_prefix, generation)
        keys = []
        with tempfile.TemporaryDirectory(prefix="cdk-ts-parquet-") as directory:
            for path in write_parquet_files(rows.batches(), rows.schema, self.settings, Path(directory)):
                key = f"{location}{path.name}"
                with path.open("rb") as body:
                    self.s3.put_object(Bucket=self.settings.bucket, Key=key, Body=body,
                                       ContentType="application/vnd.apache.parquet")
                path.unlink()
                keys.append(key)
        if self.settings.glue_table:
            self._switch_glue_partition(partition, f"s3://{self.settings.bucket}/{location}")
        return keys, location

    def retire(self, old: Manifest, new: Manifest) -> None:
        """Delete the previous generation's files (never one the new manifest lists)."""
        stale = sorted(set(old.files) - set(new.files))
        for start in range(0, len(stale), 1000):  # DeleteObjects takes at most 1,000 keys
            answer = self.s3.delete_objects(
                Bucket=self.settings.bucket,
                Delete={"Objects": [{"Key": k} for k in stale[start:start + 1000]], "Quiet": True},
            )
            if answer.get("Errors"):
                # the new generation is live; leftovers cost storage only, so report and go on
                logger.error("could not delete old Parquet files", extra={"errors": answer["Errors"][:10]})

    def _switch_glue_partition(self, partition: Partition, location: str) -> None:
        database, name = self.settings.glue_database, self.settings.glue_table
        descriptor = dict(self.glue.get_table(DatabaseName=database, Name=name)["Table"]["StorageDescriptor"])
        descriptor["Location"] = location
        partition_input = {"Values": partition.values(), "StorageDescriptor": descriptor}
        try:
            self.glue.update_partition(DatabaseName=database, TableName=name, PartitionValueList=partition.values(),
                                       PartitionInput=partition_input)
        except Exception as error:
            if error_code(error) != "EntityNotFoundException":
                raise
            self.glue.create_partition(DatabaseName=database, TableName=name, PartitionInput=partition_input)


class ArchiveCompactor:
    """Compacts every closed partition whose Parquet is missing or behind its raw objects.

    :param settings: the compacted layer's settings.
    :param s3_client: the boto3 S3 client.
        Default: None — created on first use.
    :param sink: where the rows go.
        Default: None — :class:`ParquetSink` over the same bucket.
    :param glue_client: the boto3 Glue client of the default sink (with a Glue table).
        Default: None — created on first use.
    :param sort_memory_mib: sort out of core with DuckDB within this much memory (spilling to ``/tmp``).
        Default: None — DuckDB's share of the function's memory when DuckDB is installed
        (``duckdb_memory_limit_mib``), else the whole partition is sorted in memory.
    """

    def __init__(self, settings: CompactionSettings, *, s3_client=None, sink: CompactedLayerSink | None = None,
                 glue_client=None, sort_memory_mib: int | None = None) -> None:
        self.settings = settings
        self.sort_memory_mib = sort_memory_mib
        self._s3 = LazyClient("s3", s3_client)
        self.inventory = ArchiveInventory(settings, s3_client=s3_client)
        self.sink = sink or ParquetSink(settings, s3_client=s3_client, glue_client=glue_client)

    s3 = client_property("_s3", "The S3 client (created on first use).")

    def run(self, *, now: datetime, since: datetime | None = None) -> dict[str, Any]:
        """Compact what is due: closed partitions never compacted, compacted ones with late raw objects or old settings.

        Each partition is done on its own; one that fails is reported and the run goes on, then raises
        :class:`CompactionFailedError` so the invocation fails (and reaches the on-failure destination).

        :param now: the reference time (a scheduled run passes the event's time, not the clock).
        :param since: the earliest day to look at.
            Default: None — ``now`` minus the settings' lookback.
        :return: ``compacted`` (per partition, the generation, rows, duplicates, files, late objects merged),
            ``states`` (how many partitions were in each state) and ``failed``.
        """
        report: dict[str, Any] = {"compacted": [], "states": {}, "failed": []}
        for status in self.inventory.due(report, now=now, since=since):
            try:
                report["compacted"].append(self.compact(status))
            except Exception as error:  # noqa: BLE001 - one partition must not stop the others
                text = f"{type(error).__name__}: {error}"
                logger.error("compaction failed: %s %s", status.partition.path, text,
                             extra={"partition": status.partition.path, "error": text})
                report["failed"].append({"partition": status.partition.path, "error": text})
        if report["failed"]:
            raise CompactionFailedError(report)
        return report

    @contextmanager
    def _sorted(self, bodies: Iterable[bytes]) -> Iterator[Any]:
        """The partition's rows in order: out of core with DuckDB when it is there, else in memory."""
        from cdk_ts_runtime._compaction_sort import (  # imports this module: loaded on first use
            SortedChanges,
            duckdb_available,
            duckdb_memory_limit_mib,
            sorted_changes,
        )

        if self.sort_memory_mib is None and not duckdb_available():
            yield SortedChanges.of_table(*compact_lines(bodies, self.settings))
            return
        limit = self.sort_memory_mib or duckdb_memory_limit_mib(os.environ)
        with sorted_changes(bodies, self.settings, memory_limit_mib=limit) as rows:
            yield rows

    def compact_partition(self, partition: Partition, *, now: datetime) -> dict[str, Any]:
        """Compact one partition if it is due as of ``now`` (a planner's message); else report its state and do nothing.

        A message delivered twice, or planned twice, finds the partition compacted the second time.
        """
        status = self.inventory.status(partition, now=now)
        if status.state not in DUE_STATES:
            logger.info("partition %s is %s: nothing to do", partition.path, status.state.value)
            return {"partition": partition.path, "skipped": status.state.value}
        return self.compact(status)

    def compact(self, status: PartitionStatus) -> dict[str, Any]:
        """Build the partition's generation from its raw objects, switch readers, then the manifest, then clean up."""
        partition, raw = status.partition, status.raw
        if not raw:
            raise ValidationError(f"partition {partition.path} has no raw objects to compact")
        generation = generation_name(raw, self.settings.fingerprint())
        bodies = (self.s3.get_object(Bucket=self.settings.bucket, Key=key, IfMatch=raw[key])["Body"].read()
                  for key in sorted(raw))
        with self._sorted(bodies) as rows:
            files, location = self.sink.publish(partition, rows, generation)
        manifest = Manifest(partition, generation, dict(raw), files, rows.num_rows, rows.duplicates,
                            self.settings.fingerprint(), location)
        self.s3.put_object(Bucket=self.settings.bucket, Key=partition.manifest_key(self.settings.compacted_prefix),
                           Body=json.dumps(manifest.as_json(), indent=1).encode(), ContentType="application/json")
        if status.manifest is not None and status.manifest.generation != generation:
            self.sink.retire(status.manifest, manifest)
        result = {"partition": partition.path, "generation": generation, "rows": rows.num_rows,
                  "duplicates": rows.duplicates, "files": len(files), "late_objects": len(status.late)}
        logger.info("compacted %s", partition.path, extra=result)
        return result

