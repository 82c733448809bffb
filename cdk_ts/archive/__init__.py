"""The archive, construct side: a table's changes kept in S3, compacted to Parquet or Iceberg, and catalogued.

The public names are here: ``StreamArchiver`` (``archiver``: stream -> Lambda -> S3, nothing lost),
``StreamArchiverBase`` (``base``: what any archive can do: grants, ``bind``, metrics;
``StreamArchiver.from_archive_bucket_name`` returns an ``ImportedStreamArchiver``, from ``imported``, for one another
stack or account writes, described by ``ArchiveAttributes``), ``ArchiveCompaction`` (``compaction``: closed
partitions rewritten as Parquet or Iceberg) with ``CompactionOptions`` and ``IcebergOptions`` (``options``), the
Glue catalogs ``ArchiveCatalog`` (``catalog``) and ``CompactedCatalog`` (``compacted_catalog``), and
``IcebergTableSink`` (``iceberg_table_sink``: AWS's own path, Kinesis and Firehose into an Iceberg table in S3
Tables). The ``_``-prefixed modules are the machinery: what the archiver creates (``_resources``), how it reads its
source's stream (``_mapping``), the Glue database archivers share and Glue's names (``_glue``, ``_glue_names``,
``_glue_views``), the compaction's fan-out (``_compaction_fanout``), S3 Tables (``_s3_tables``) and the metrics and
alarms (``_monitoring``). The runtime side is ``cdk_ts_runtime._archiver`` and ``_compaction*`` (run by
``handlers/archiver`` and ``handlers/compaction``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cdk_ts.archive.archiver import TTL_DELETIONS_ONLY, FailureDestination, StreamArchiver
from cdk_ts.archive.base import StreamArchiverBase
from cdk_ts.archive.catalog import ARCHIVE_COLUMNS, PARTITION_COLUMNS, ArchiveCatalog, deduplicated_view_sql
from cdk_ts.archive.compacted_catalog import CompactedCatalog
from cdk_ts.archive.compaction import ArchiveCompaction
from cdk_ts.archive.imported import ArchiveAttributes, ImportedStreamArchiver
from cdk_ts.archive.options import CompactionOptions, IcebergOptions

if TYPE_CHECKING:
    from cdk_ts.archive.iceberg_table_sink import IcebergTableSink

__all__ = [
    "ARCHIVE_COLUMNS",
    "PARTITION_COLUMNS",
    "TTL_DELETIONS_ONLY",
    "ArchiveAttributes",
    "ArchiveCatalog",
    "ArchiveCompaction",
    "CompactedCatalog",
    "CompactionOptions",
    "FailureDestination",
    "IcebergOptions",
    "IcebergTableSink",
    "ImportedStreamArchiver",
    "StreamArchiver",
    "StreamArchiverBase",
    "deduplicated_view_sql",
]


def __getattr__(name: str) -> Any:
    # IcebergTableSink is imported on first use: it brings aws-cdk-lib's Kinesis, Firehose and Lake Formation
    # modules, which every app that imports the archiver paid at synth (about 0.2 s) without using them.
    if name == "IcebergTableSink":
        return importlib.import_module("cdk_ts.archive.iceberg_table_sink").IcebergTableSink
    raise AttributeError(f"module 'cdk_ts.archive' has no attribute {name!r}")
