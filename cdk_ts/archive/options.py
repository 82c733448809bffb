"""The archive's options types: ``CompactionOptions`` (``StreamArchiver(compaction=...)``) and ``IcebergOptions``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_lambda as lambda_

from cdk_ts_runtime._compaction_plan import ColumnSpec, Granularity
from cdk_ts_runtime._inputs import whole


@dataclass(frozen=True)
class IcebergOptions:
    """Write the compacted layer as an Apache Iceberg table in an S3 Tables table bucket instead of Parquet + Glue.

    The construct creates the table bucket, the namespace and the table (schema and identity partitions
    ``table``, ``dt``, and ``hour`` by hour); each compaction is one commit through the bucket's Iceberg
    REST endpoint. The function needs pyiceberg: pass a layer holding it in ``CompactionOptions.extra_layers``.

    :param table_bucket_name: the S3 Tables table bucket to create (3-63 of ``[a-z0-9-]``).
    :param namespace: the namespace.
        Default: ``"archive"``.
    :param table_name: the table.
        Default: ``"changes"``.
    """

    table_bucket_name: str
    namespace: str = "archive"
    table_name: str = "changes"


@dataclass(frozen=True)
class CompactionOptions:
    """How ``StreamArchiver(compaction=...)`` compacts its closed partitions (see ``ArchiveCompaction``).

    :param pyarrow_layer_arn: the AWS SDK for pandas layer (AWS-managed, holds pyarrow) for the function's
        Region, e.g. ``arn:aws:lambda:eu-west-1:336392948345:layer:AWSSDKPandas-Python313-Arm64:4``; its name
        sets the function's Python version and architecture. Nothing is downloaded or bundled at synth.
    :param columns: typed columns taken from the items (``ColumnSpec`` or ``{"name", "type", "attribute"}``).
        Default: none — the event's fields and images only.
    :param granularity: one compaction unit, ``"hour"`` or ``"day"``.
        Default: ``"hour"``.
    :param grace: how long after its end a partition waits for late records.
        Default: None — 1 hour.
    :param lookback: how far back each run looks for late raw objects.
        Default: None — 3 days.
    :param schedule: when the function runs.
        Default: None — every hour at minute 20.
    :param compacted_prefix: where Parquet files and manifests go.
        Default: None — ``"parquet/" + prefix``.
    :param target_file_size_mib: a new Parquet file once one reaches this size.
        Default: 128.
    :param row_group_rows: rows per Parquet row group.
        Default: 65,536.
    :param memory_size: the function's memory in MB (bench/README.md measures what fits).
        Default: 3008.
    :param timeout: the function's timeout.
        Default: None — 15 minutes.
    :param iceberg: write an Iceberg table instead (``IcebergOptions``).
        Default: None — Parquet + Glue.
    :param extra_layers: more layers (pyiceberg for the Iceberg option).
        Default: none.
    :param duckdb_layer: a layer holding the ``duckdb`` package for the function's Python and architecture: the
        compaction then sorts out of core (memory flat, spilling to ``/tmp``; bench/README.md, compaction at scale).
        Default: None — each partition is sorted in memory (about 1 GB per million changes).
    :param max_concurrency: partitions compacted at once (the SQS event source's ``MaximumConcurrency``, 2-1,000).
        Default: 5.
    :param ephemeral_storage_mib: the function's ``/tmp`` in MiB (512-10,240), where the out-of-core sort spills.
        Default: 10,240.
    :param max_partition_raw_bytes: the single-function envelope: a partition with more raw gzip bytes is reported
        (metric ``PartitionsOverEnvelope``, the planner's log) and never attempted.
        Default: None — derived from the function's memory, timeout and ``/tmp`` (``SingleFunctionEnvelope``).
    """

    pyarrow_layer_arn: str
    columns: Sequence[ColumnSpec | Mapping[str, Any]] = ()
    granularity: Granularity | str = Granularity.HOUR
    grace: Duration | None = None
    lookback: Duration | None = None
    schedule: events.Schedule | None = None
    compacted_prefix: str | None = None
    target_file_size_mib: int = 128
    row_group_rows: int = 65_536
    memory_size: int = 3008
    timeout: Duration | None = None
    iceberg: IcebergOptions | None = None
    extra_layers: Sequence[lambda_.ILayerVersion] = field(default_factory=tuple)
    duckdb_layer: lambda_.ILayerVersion | None = None
    max_concurrency: int = 5
    ephemeral_storage_mib: int = 10_240
    max_partition_raw_bytes: int | None = None

    def __post_init__(self) -> None:
        whole("target_file_size_mib", self.target_file_size_mib, maximum=10_240)
        # MaximumConcurrency: 2-1,000 (Lambda API reference, ScalingConfig); /tmp: 512-10,240 MB (Lambda quotas)
        whole("max_concurrency", self.max_concurrency, minimum=2, maximum=1000)
        whole("ephemeral_storage_mib", self.ephemeral_storage_mib, minimum=512, maximum=10_240)
        if self.max_partition_raw_bytes is not None:
            whole("max_partition_raw_bytes", self.max_partition_raw_bytes, minimum=1, maximum=2**62)
        whole("row_group_rows", self.row_group_rows, maximum=10_000_000)
        # Lambda's memory: 128 MB to 10,240 MB (Lambda quotas).
        whole("memory_size", self.memory_size, minimum=128, maximum=10_240)
