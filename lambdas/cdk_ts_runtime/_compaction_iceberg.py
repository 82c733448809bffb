"""The compacted layer as an Apache Iceberg table: each partition's rows replaced in one atomic commit.

An alternative :class:`~cdk_ts_runtime._compaction.CompactedLayerSink`: instead of Parquet generations
and Glue partition locations, one Iceberg table (in an S3 Tables table bucket, through its Iceberg REST
endpoint, or in the Glue Data Catalog) holds every compacted partition, with ``table``, ``dt`` (and
``hour``) as identity-partitioned columns. A compaction is one ``overwrite`` filtered to its partition:
delete and append in one commit, so a reader sees the partition before or after, never half of it.
Iceberg keeps the files old snapshots use until snapshots expire (S3 Tables' snapshot management, or
``expire_snapshots`` with Glue), so :meth:`IcebergSink.retire` deletes nothing.

Needs pyiceberg (and pyarrow), imported when the sink is built: the runtime package stays stdlib + boto3.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._compaction_plan import CompactionSettings, Granularity, Manifest, Partition
from cdk_ts_runtime._errors import CdkTsError, ValidationError

#: ``{"identifier": "namespace.table", "catalog": {pyiceberg catalog properties}}`` (set by ``ArchiveCompaction``).
ENV_ICEBERG = _environment.COMPACTION_ICEBERG


class PyicebergMissingError(CdkTsError, ImportError):
    """pyiceberg is not installed where compaction runs (in Lambda: give the function a layer holding it)."""


def s3_tables_catalog_properties(table_bucket_arn: str, region: str) -> dict[str, str]:
    """pyiceberg REST catalog properties for an S3 Tables table bucket (its Iceberg REST endpoint, SigV4-signed)."""
    return {
        "type": "rest",
        "uri": f"https://s3tables.{region}.amazonaws.com/iceberg",
        "warehouse": table_bucket_arn,
        "rest.sigv4-enabled": "true",
        "rest.signing-name": "s3tables",
        "rest.signing-region": region,
    }


class IcebergSink:
    """Writes each compacted partition into one Iceberg table with a filtered overwrite (one commit).

    :param catalog: a pyiceberg ``Catalog`` (``load_catalog(...)``).
    :param identifier: the table, ``"namespace.table"``; created (identity-partitioned by ``table``, ``dt``
        and, with hour granularity, ``hour``) when it does not exist.
    :param settings: the compacted layer's settings (columns, granularity).
    """

    def __init__(self, catalog: Any, identifier: str, settings: CompactionSettings) -> None:
        if "." not in identifier:
            raise ValidationError(f"Iceberg identifier {identifier!r} must be 'namespace.table'")
        self.catalog = catalog
        self.identifier = identifier
        self.settings = settings

    @classmethod
    def from_env(cls, env: Mapping[str, str], settings: CompactionSettings) -> IcebergSink:
        """The sink ``CDK_TS_COMPACTION_ICEBERG`` describes (catalog properties and identifier).

        The old name, ``COMPACTION_ICEBERG``, set alone is refused, naming the new one.

        :raises EnvironmentVariableMissingError: (a ``KeyError``) when the variable is not set.
        """
        try:
            from pyiceberg.catalog import load_catalog
        except ImportError as error:
            raise PyicebergMissingError(
                "the Iceberg option needs pyiceberg: give the compaction function a layer holding it "
                "(ArchiveCompaction(extra_layers=...)), or pip install pyiceberg"
            ) from error
        env = _environment.required(env, (ENV_ICEBERG,), "ArchiveCompaction sets it with the iceberg option")
        config = json.loads(env[ENV_ICEBERG])
        return cls(load_catalog("compaction", **config["catalog"]), config["identifier"], settings)

    def table(self, arrow_schema: Any) -> Any:
        """The Iceberg table, created with the compacted schema and its identity partitions if missing."""
        namespace = self.identifier.rsplit(".", 1)[0]
        self.catalog.create_namespace_if_not_exists(namespace)
        if self.catalog.table_exists(self.identifier):
            return self.catalog.load_table(self.identifier)
        table = self.catalog.create_table(self.identifier, schema=arrow_schema)
        with table.update_spec() as spec:
            for name in self._partition_names():
                spec.add_identity(name)
        return table

    def _partition_names(self) -> list[str]:
        return ["table", "dt"] + (["hour"] if self.settings.granularity is Granularity.HOUR else [])

    def publish(self, partition: Partition, rows: Any, generation: str) -> tuple[list[str], str]:
        """Replace the partition's rows with ``rows`` (``SortedChanges``) in one commit (location: the snapshot).

        pyiceberg appends an Arrow table, so the partition is held in memory here.
        """
        import pyarrow as pa

        rows = rows.to_table()
        from pyiceberg.expressions import And, EqualTo

        extra = {"table": partition.table, "dt": partition.dt}
        if partition.hour is not None:
            extra["hour"] = partition.hour
        for name, value in extra.items():
            rows = rows.append_column(pa.field(name, pa.string(), nullable=False),
                                      pa.array([value] * rows.num_rows, pa.string()))
        table = self.table(rows.schema)
        condition = None
        for name, value in extra.items():
            condition = EqualTo(name, value) if condition is None else And(condition, EqualTo(name, value))
        with warnings.catch_warnings():
            # a partition's first compaction deletes nothing, which pyiceberg reports as a warning
            warnings.filterwarnings("ignore", "Delete operation did not match any records")
            table.overwrite(rows, overwrite_filter=condition,
                            snapshot_properties={"cdk-ts.generation": generation, "cdk-ts.partition": partition.path})
        snapshot = table.current_snapshot()
        return [], f"iceberg:{self.identifier}@{snapshot.snapshot_id}"

    def retire(self, old: Manifest, new: Manifest) -> None:
        """Nothing: the previous rows' files belong to older snapshots until those expire."""
