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
from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any, Protocol

from cdk_ts_runtime._aws import LazyClient, client_property, error_code
from cdk_ts_runtime._compaction_plan import (
    ArchiveInventory,
    ColumnSpec,
    CompactionSettings,
    Granularity,
    Manifest,
    Partition,
    PartitionState,
    PartitionStatus,
    generation_name,
)
from cdk_ts_runtime._errors import CdkTsError, ValidationError

logger = logging.getLogger(__name__)

_INT64 = (-(2**63), 2**63 - 1)
#: Rows gathered as Python objects before they become an Arrow batch: bounds the interpreter's share of memory.
_BATCH_ROWS = 16_384


class PyarrowMissingError(CdkTsError, ImportError):
    """pyarrow is not installed where compaction runs (in Lambda: the AWS SDK for pandas layer is missing)."""


class CompactionFailedError(CdkTsError, RuntimeError):
    """Some partitions could not be compacted; the others were. ``report`` says which, and why."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.report = report
        failed = ", ".join(f"{f['partition']}: {f['error']}" for f in report["failed"])
        super().__init__(f"{len(report['failed'])} partition(s) not compacted: {failed}")


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


def column_value(spec: ColumnSpec, attribute: Mapping[str, Any] | None) -> Any:
    """A declared column's value from one DynamoDB JSON attribute; None when absent or not exactly of its type.

    A number that a ``bigint`` or ``decimal(P,S)`` cannot hold exactly is None, not rounded (the image keeps it).
    """
    if not isinstance(attribute, Mapping) or len(attribute) != 1:
        return None
    (kind, value), = attribute.items()
    if spec.type == "string":
        return value if kind in ("S", "N") else None
    if spec.type == "boolean":
        return value if kind == "BOOL" else None
    if kind != "N":
        return None
    if spec.type == "double":
        return float(value)
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    if spec.type == "bigint":
        return int(number) if number == number.to_integral_value() and _INT64[0] <= number <= _INT64[1] else None
    precision, scale = (int(n) for n in spec.type[len("decimal("):-1].split(","))
    with localcontext(prec=80):  # the default 28 digits would refuse DynamoDB's 38
        try:
            exact = number.quantize(Decimal(1).scaleb(-scale))
        except InvalidOperation:
            return None
    return exact if exact == number and len(exact.as_tuple().digits) <= precision else None


def attribute_from_column(spec: ColumnSpec, value: Any) -> dict[str, Any] | None:
    """The DynamoDB JSON attribute a column value stands for, or None when the column cannot say it exactly.

    Only an attribute of the column's own kind (``S`` for string, ``BOOL`` for boolean, ``N`` for the
    numbers) whose text the value gives back character for character: ``"20.50"`` in a ``decimal(6,2)``,
    ``"41.5"`` in a ``double``, ``"7"`` in a ``bigint``; ``"20.5"`` in a ``decimal(6,2)`` reads back as
    ``"20.50"``, so it is not.
    """
    if value is None:
        return None
    if spec.type == "string":
        return {"S": value}
    if spec.type == "boolean":
        return {"BOOL": value}
    return {"N": repr(value) if spec.type == "double" else str(value)}


def split_image(image: dict[str, Any], columns: tuple[ColumnSpec, ...]) -> tuple[list[Any], bool]:
    """Each declared column's value, and whether attributes were taken out of ``image`` (changed in place).

    An attribute moves out of the image into its column only when :func:`attribute_from_column` gives
    it back exactly; anything else stays in the image (and the column holds what it can, or None).
    """
    values = [column_value(spec, image.get(spec.source)) for spec in columns]
    exact = {spec.source for spec, value in zip(columns, values, strict=True)
             if value is not None and attribute_from_column(spec, value) == image.get(spec.source)}
    for name in exact:
        del image[name]
    return values, bool(exact)


def restore_image(row: Mapping[str, Any], columns: tuple[ColumnSpec, ...]) -> tuple[dict | None, dict | None]:
    """A compacted row's new and old images as the JSON Lines held them (DynamoDB JSON, attribute order aside).

    The declared columns' attributes go back into the image they came from: the new image, or the old
    one for a REMOVE (no new image).
    """
    new = json.loads(row["newimage"]) if row.get("newimage") is not None else None
    old = json.loads(row["oldimage"]) if row.get("oldimage") is not None else None
    target = new if new is not None else old
    if target is not None:
        for spec in columns:
            attribute = attribute_from_column(spec, row.get(spec.name))
            if attribute is not None and spec.source not in target:
                target[spec.source] = attribute
    return new, old


def compact_lines(bodies: Iterable[bytes], settings: CompactionSettings) -> tuple[Any, int]:
    """The Arrow table of the given raw objects' lines, one row per ``eventID``, sorted; and the duplicates dropped.

    Each declared column is read from the new image (the old one for a REMOVE; the keys without
    images); an attribute its column gives back exactly leaves that image (:func:`split_image`), so
    values are stored once, and :func:`restore_image` puts them back.

    Sorted by ``keys`` (the item's key as DynamoDB JSON text), then time, then sequence number as a number.

    :param bodies: the raw objects' gzip bytes, in a fixed order (the first copy of an event is kept).
    :param settings: the columns to extract and the granularity.
    """
    pa, pc, _pq = pyarrow_modules()
    schema = compacted_schema(settings)
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    batches = []
    seen: set[str] = set()
    duplicates = 0
    declared = settings.columns
    for body in bodies:
        for text in gzip.decompress(body).splitlines():
            line = json.loads(text)
            event_id = line["eventID"]
            if event_id in seen:
                duplicates += 1
                continue
            seen.add(event_id)
            columns["eventid"].append(event_id)
            columns["eventname"].append(line["eventName"])
            columns["sequencenumber"].append(line["sequenceNumber"])
            columns["approximatecreationdatetime"].append(line["approximateCreationDateTime"])
            new_image, old_image = line.get("newImage"), line.get("oldImage")
            if declared:
                source = "new" if new_image is not None else "old" if old_image is not None else "keys"
                image = json.loads({"new": new_image, "old": old_image, "keys": line.get("keys") or "{}"}[source])
                values, moved = split_image(image, declared)
                for spec, value in zip(declared, values, strict=True):
                    columns[spec.name].append(value)
                if moved and source != "keys":
                    rest = json.dumps(image, separators=(",", ":"), ensure_ascii=False)
                    new_image, old_image = (rest, old_image) if source == "new" else (new_image, rest)
            columns["keys"].append(line.get("keys"))
            columns["newimage"].append(new_image)
            columns["oldimage"].append(old_image)
            columns["useridentity"].append(line.get("userIdentity"))
            if settings.granularity is Granularity.DAY:
                columns["hour"].append(line["approximateCreationDateTime"][11:13])
            if len(columns["eventid"]) == _BATCH_ROWS:
                batches.append(_record_batch(columns, schema))
    batches.append(_record_batch(columns, schema))
    table = pa.Table.from_batches(batches, schema=schema)
    del batches
    digits = pc.utf8_length(table["sequencenumber"])
    order = pc.sort_indices(
        table.append_column("_digits", digits),
        sort_keys=[("keys", "ascending"), ("approximatecreationdatetime", "ascending"),
                   ("_digits", "ascending"), ("sequencenumber", "ascending")],
    )
    return table.take(order).combine_chunks(), duplicates


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
    pa, _pc, pq = pyarrow_modules()
    files: list[bytes] = []
    sink = writer = None
    for start in range(0, max(table.num_rows, 1), settings.row_group_rows):
        if writer is None:
            sink = pa.BufferOutputStream()
            writer = pq.ParquetWriter(sink, table.schema, compression="zstd", write_statistics=True)
        writer.write_table(table.slice(start, settings.row_group_rows), row_group_size=settings.row_group_rows)
        if sink.tell() >= settings.target_file_bytes:
            writer.close()
            files.append(sink.getvalue().to_pybytes())
            sink = writer = None
    if writer is not None:
        writer.close()
        files.append(sink.getvalue().to_pybytes())
    return files


class CompactedLayerSink(Protocol):
    """Where a partition's rows go, and how readers are switched to them (Parquet + Glue, or Iceberg)."""

    def publish(self, partition: Partition, table: Any, generation: str) -> tuple[list[str], str]:
        """Write the generation and switch readers to it; return its file keys and its location."""
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

    def publish(self, partition: Partition, table: Any, generation: str) -> tuple[list[str], str]:
        """Write the files, then point the Glue partition (if any) at their prefix."""
        location = partition.generation_prefix(self.settings.compacted_prefix, generation)
        keys = []
        for number, body in enumerate(parquet_files(table, self.settings)):
            key = f"{location}part-{number:05d}.parquet"
            self.s3.put_object(Bucket=self.settings.bucket, Key=key, Body=body,
                               ContentType="application/vnd.apache.parquet")
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
        Default: None — created on
        first use.
    """

    def __init__(self, settings: CompactionSettings, *, s3_client=None, sink: CompactedLayerSink | None = None,
                 glue_client=None) -> None:
        self.settings = settings
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
        for status in self.inventory.statuses(now=now, since=since):
            report["states"][status.state.value] = report["states"].get(status.state.value, 0) + 1
            if status.state is PartitionState.RAW_EXPIRED and status.late:
                report["failed"].append({
                    "partition": status.partition.path,
                    "error": f"{len(status.late)} late raw object(s) but {len(status.missing)} raw object(s) the "
                             "Parquet was built from have expired: the Parquet is kept; raise the raw layer's "
                             "expiration above the lookback",
                })
            if status.state not in (PartitionState.PENDING, PartitionState.LATE, PartitionState.STALE):
                continue
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

    def compact(self, status: PartitionStatus) -> dict[str, Any]:
        """Build the partition's generation from its raw objects, switch readers, then the manifest, then clean up."""
        partition, raw = status.partition, status.raw
        if not raw:
            raise ValidationError(f"partition {partition.path} has no raw objects to compact")
        generation = generation_name(raw, self.settings.fingerprint())
        bodies = (self.s3.get_object(Bucket=self.settings.bucket, Key=key, IfMatch=raw[key])["Body"].read()
                  for key in sorted(raw))
        table, duplicates = compact_lines(bodies, self.settings)
        files, location = self.sink.publish(partition, table, generation)
        manifest = Manifest(partition, generation, dict(raw), files, table.num_rows, duplicates,
                            self.settings.fingerprint(), location)
        self.s3.put_object(Bucket=self.settings.bucket, Key=partition.manifest_key(self.settings.compacted_prefix),
                           Body=json.dumps(manifest.as_json(), indent=1).encode(), ContentType="application/json")
        if status.manifest is not None and status.manifest.generation != generation:
            self.sink.retire(status.manifest, manifest)
        result = {"partition": partition.path, "generation": generation, "rows": table.num_rows,
                  "duplicates": duplicates, "files": len(files), "late_objects": len(status.late)}
        logger.info("compacted %s", partition.path, extra=result)
        return result

