"""cdk-ts: AWS CDK constructs for DynamoDB time-series and IoT data patterns.

Constructs are imported on first use, so ``cdk_ts.plan`` (pure Python) does not start the
aws_cdk runtime. The runtime clients users' functions import live in ``cdk_ts_runtime``.
"""

from __future__ import annotations

import importlib
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from cdk_ts._heap import freeze_heap_at_exit, freeze_imports
from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._periods import RotationPeriod
from cdk_ts_runtime._rotation.config import AutoScaling, CapacityTier, RightSizing
from cdk_ts_runtime._rotation.metrics import RotationMetric
from cdk_ts_runtime._stream_consumer import StreamConsumer

if TYPE_CHECKING:  # editors and type checkers see the real classes; at run time they load lazily
    from cdk_ts._capacity import TableCapacityOptions
    from cdk_ts._defaults import LAMBDA_RUNTIME
    from cdk_ts._validation import ConstructValidationError
    from cdk_ts.archive import (
        ARCHIVE_COLUMNS,
        PARTITION_COLUMNS,
        TTL_DELETIONS_ONLY,
        ArchiveAttributes,
        ArchiveCatalog,
        ArchiveCompaction,
        CompactedCatalog,
        CompactionOptions,
        FailureDestination,
        IcebergOptions,
        IcebergTableSink,
        ImportedStreamArchiver,
        StreamArchiver,
        StreamArchiverBase,
        deduplicated_view_sql,
    )
    from cdk_ts.buckets import access_logs_bucket, secure_bucket, stack_access_logs_bucket
    from cdk_ts.device_log import DeviceLogTable, DeviceLogTableBase
    from cdk_ts.monitoring import MonitoringDashboard
    from cdk_ts.protocols import ArchiverSource, HasTable, RotatingStreamSource
    from cdk_ts.rotation import (
        PeriodTableOptions,
        RotatingTimeSeriesTables,
        RotatingTimeSeriesTablesBase,
        RotationOptions,
    )
    from cdk_ts.runtime_layer import RuntimeLayer
    from cdk_ts.sharding import ShardMetadataTable, ShardMetadataTableBase
    from cdk_ts.timestream import TimestreamTable, TimestreamTableBase
    from cdk_ts_runtime._archiver import ArchiverMetric
    from cdk_ts_runtime._compaction_plan import ColumnSpec, Granularity
    from cdk_ts_runtime._firehose_iceberg import SinkMode
    from cdk_ts_runtime._sharding import ShardGrowth, ShardStrategy

_LAZY = {
    "ShardGrowth": "cdk_ts_runtime._sharding",  # the sharding client imports boto3
    "ShardStrategy": "cdk_ts_runtime._sharding",
    "ArchiverMetric": "cdk_ts_runtime._archiver",  # the archiver and the compaction plan import boto3
    "ColumnSpec": "cdk_ts_runtime._compaction_plan",
    "Granularity": "cdk_ts_runtime._compaction_plan",
    "SinkMode": "cdk_ts_runtime._firehose_iceberg",
    "access_logs_bucket": "cdk_ts.buckets",
    "secure_bucket": "cdk_ts.buckets",
    "stack_access_logs_bucket": "cdk_ts.buckets",
    "TableCapacityOptions": "cdk_ts._capacity",
    "ConstructValidationError": "cdk_ts._validation",
    "LAMBDA_RUNTIME": "cdk_ts._defaults",  # the Lambda runtime of cdk-ts's functions and the docs' examples
    "ArchiverSource": "cdk_ts.protocols",
    "HasTable": "cdk_ts.protocols",
    "RotatingStreamSource": "cdk_ts.protocols",
    "ARCHIVE_COLUMNS": "cdk_ts.archive",
    "PARTITION_COLUMNS": "cdk_ts.archive",
    "deduplicated_view_sql": "cdk_ts.archive",
    "DeviceLogTable": "cdk_ts.device_log",
    "DeviceLogTableBase": "cdk_ts.device_log",
    "MonitoringDashboard": "cdk_ts.monitoring",
    "RotatingTimeSeriesTables": "cdk_ts.rotation",
    "RuntimeLayer": "cdk_ts.runtime_layer",
    "ShardMetadataTable": "cdk_ts.sharding",
    "ShardMetadataTableBase": "cdk_ts.sharding",
    "RotatingTimeSeriesTablesBase": "cdk_ts.rotation",
    "PeriodTableOptions": "cdk_ts.rotation",
    "RotationOptions": "cdk_ts.rotation",
    "ArchiveCatalog": "cdk_ts.archive",
    "ArchiveCompaction": "cdk_ts.archive",
    "CompactionOptions": "cdk_ts.archive",
    "IcebergOptions": "cdk_ts.archive",
    "IcebergTableSink": "cdk_ts.archive",
    "CompactedCatalog": "cdk_ts.archive",
    "StreamArchiver": "cdk_ts.archive",
    "StreamArchiverBase": "cdk_ts.archive",
    "ArchiveAttributes": "cdk_ts.archive",
    "ImportedStreamArchiver": "cdk_ts.archive",
    "FailureDestination": "cdk_ts.archive",
    "TTL_DELETIONS_ONLY": "cdk_ts.archive",
    "TimestreamTable": "cdk_ts.timestream",
    "TimestreamTableBase": "cdk_ts.timestream",
}

freeze_heap_at_exit()

try:  # one version, written in pyproject.toml only
    __version__ = _metadata.version("cdk-ts")
except _metadata.PackageNotFoundError:  # a source tree on sys.path without an install
    __version__ = "0+unknown"
__all__ = [
    "ARCHIVE_COLUMNS",
    "LAMBDA_RUNTIME",
    "PARTITION_COLUMNS",
    "TTL_DELETIONS_ONLY",
    "ArchiveAttributes",
    "ArchiveCatalog",
    "ArchiveCompaction",
    "ArchiverMetric",
    "ArchiverSource",
    "CdkTsError",
    "ConstructValidationError",
    "AutoScaling",
    "CapacityTier",
    "ColumnSpec",
    "CompactedCatalog",
    "CompactionOptions",
    "DeviceLogTable",
    "DeviceLogTableBase",
    "FailureDestination",
    "Granularity",
    "IcebergOptions",
    "IcebergTableSink",
    "MonitoringDashboard",
    "HasTable",
    "ImportedStreamArchiver",
    "PeriodTableOptions",
    "RightSizing",
    "RotatingStreamSource",
    "RotatingTimeSeriesTables",
    "RotatingTimeSeriesTablesBase",
    "RotationMetric",
    "RotationOptions",
    "RotationPeriod",
    "RuntimeLayer",
    "ShardGrowth",
    "ShardMetadataTable",
    "ShardMetadataTableBase",
    "ShardStrategy",
    "SinkMode",
    "StreamArchiver",
    "StreamArchiverBase",
    "StreamConsumer",
    "TableCapacityOptions",
    "TimestreamTable",
    "TimestreamTableBase",
    "ValidationError",
    "access_logs_bucket",
    "deduplicated_view_sql",
    "secure_bucket",
    "stack_access_logs_bucket",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = _LAZY[name]
        if module.startswith("cdk_ts."):  # before the construct side adds to what the app imported
            freeze_imports()
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'cdk_ts' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
