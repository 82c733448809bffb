"""The compacted layer in Glue: a Parquet table whose partitions the compaction registers, and a view over both layers.

The view ``<table>_all`` is what a query should read: every compacted partition from the Parquet table,
and every partition not yet compacted from the raw layer's ``<table>_deduplicated`` view, with the same
typed columns; a partition is on one side or the other, never both, because the Parquet table's
partitions decide: Athena lists them as the metadata table ``"<table>$partitions"`` ("List partitions for a
specific table", https://docs.aws.amazon.com/athena/latest/ug/querying-glue-catalog-listing-partitions.html).
A compaction registers a partition only after its files are written, so at any moment a query sees each
event once.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import aws_glue as glue
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk_ts._lookups import stack_of
from cdk_ts.archive._glue_views import presto_view
from cdk_ts_runtime._compaction_columns import BIGINT_TEXT, decimal_text
from cdk_ts_runtime._compaction_plan import ColumnSpec, Granularity

#: The compacted layer's own columns and their Glue (Hive) types, before the declared ones.
COMPACTED_COLUMNS = (
    ("eventid", "string"),
    ("eventname", "string"),
    ("sequencenumber", "string"),
    ("approximatecreationdatetime", "timestamp"),
    ("keys", "string"),
    ("newimage", "string"),
    ("oldimage", "string"),
    ("useridentity", "string"),
)
def compacted_columns(columns: Sequence[ColumnSpec], granularity: Granularity) -> list[tuple[str, str]]:
    """The Parquet table's data columns, ``(name, Glue type)``: the event's, the declared ones, ``hour`` by day."""
    found = list(COMPACTED_COLUMNS) + [(c.name, c.type) for c in columns]
    return found + ([("hour", "string")] if Granularity(granularity) is Granularity.DAY else [])


def partition_keys(granularity: Granularity) -> list[str]:
    """The Parquet table's partition keys: a compaction unit each."""
    return ["table", "dt"] + (["hour"] if Granularity(granularity) is Granularity.HOUR else [])


def _raw_column(spec: ColumnSpec) -> str:
    """A declared column computed from a raw row's DynamoDB JSON, as the compaction types it (Athena/Trino).

    A number a ``bigint`` or ``decimal(P,S)`` cannot hold exactly is NULL, as in the compacted layer
    (``column_value``), never rounded: a cast alone would round ``20.555`` to ``20.56`` in a ``decimal(10,2)``
    and ``7.5`` to ``8`` in a ``bigint``. The text is checked first: an integer (``.0`` allowed) for a
    ``bigint``; at most S digits after the point, beyond trailing zeros, for a ``decimal(P,S)``, whose cast
    then never rounds and gives NULL past P digits.
    """
    image = "coalesce(newimage, oldimage, keys)"
    path = f'$["{spec.source}"]'
    number = f"json_extract_scalar({image}, '{path}.N')"
    if spec.type == "string":
        value = f"coalesce(json_extract_scalar({image}, '{path}.S'), {number})"
    elif spec.type == "boolean":
        value = f"TRY_CAST(json_extract_scalar({image}, '{path}.BOOL') AS BOOLEAN)"
    elif spec.type == "double":
        value = f"TRY_CAST({number} AS DOUBLE)"
    elif spec.type == "bigint":
        value = (f"CASE WHEN regexp_like({number}, '^{BIGINT_TEXT}$') "
                 f"THEN TRY_CAST(regexp_extract({number}, '^[+-]?[0-9]+') AS BIGINT) END")
    else:
        scale = int(spec.type[len("decimal("):-1].split(",")[1])
        value = (f"CASE WHEN regexp_like({number}, '^{decimal_text(scale)}$') "
                 f"THEN TRY_CAST({number} AS {spec.type.upper()}) END")
    return f'{value} AS "{spec.name}"'


def all_changes_view_sql(
    compacted: str, compacted_partitions: str, raw_deduplicated: str, columns: Sequence[ColumnSpec],
    granularity: Granularity,
) -> str:
    """The SELECT of the ``<table>_all`` view (Athena/Trino): compacted partitions, then the raw rest.

    Raw rows get the compacted layer's types: the time parsed from its ISO text, declared columns read
    from the new image (old image for a REMOVE; the keys without images) like the compaction does. Their
    images keep every attribute; compacted rows' images leave out the attributes their columns hold
    exactly, so read a declared attribute from its column.

    :param compacted: the Parquet table, e.g. ``"archive"."telemetry_archiver_compacted"``.
    :param compacted_partitions: its partitions, e.g. ``"archive"."telemetry_archiver_compacted$partitions"``.
    :param raw_deduplicated: the raw layer's one-row-per-event view.
    :param columns: the declared columns.
    :param granularity: hour or day (which partition keys decide).
    """
    names = [name for name, _type in COMPACTED_COLUMNS] + [c.name for c in columns]
    quoted = ", ".join(f'"{n}"' for n in names)
    raw_fixed = [
        f'"{n}"' if n != "approximatecreationdatetime"
        else 'CAST(from_iso8601_timestamp("approximatecreationdatetime") AS TIMESTAMP) AS "approximatecreationdatetime"'
        for n, _type in COMPACTED_COLUMNS
    ]
    raw_select = ", ".join(raw_fixed + [_raw_column(c) for c in columns])
    keys = partition_keys(granularity)
    join = " AND ".join(f'p."{k}" = r."{k}"' for k in keys)
    return (
        f'SELECT {quoted}, "table", dt, hour\n'
        f"FROM {compacted}\n"
        "UNION ALL\n"
        f'SELECT {raw_select}, "table", dt, hour\n'
        f"FROM {raw_deduplicated} r\n"
        f"WHERE NOT EXISTS (SELECT 1 FROM {compacted_partitions} p WHERE {join})"
    )


class CompactedCatalog(Construct):
    """The Parquet layer's Glue table (partitions registered by the compaction) and the ``<raw>_all`` view.

    Exposes ``table`` (the ``EXTERNAL_TABLE``), ``view`` (the ``VIRTUAL_VIEW``), ``table_name`` and ``view_name``.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        bucket: s3.IBucket,
        compacted_prefix: str,
        database_name: str,
        raw_table_name: str,
        columns: Sequence[ColumnSpec],
        granularity: Granularity,
        table_name: str | None = None,
        database: glue.CfnDatabase | None = None,
    ) -> None:
        """Create the table over ``s3://{bucket}/{compacted_prefix}`` and the view over it and the raw layer.

        :param bucket: the archive bucket.
        :param compacted_prefix: the compacted layer's prefix.
        :param database_name: the Glue database of the raw layer's table (a literal, as the view names it).
        :param raw_table_name: the raw layer's Glue table; its ``_deduplicated`` view is the view's raw side.
        :param columns: the declared columns.
        :param granularity: hour or day, the table's partition keys.
        :param table_name: the Parquet table's name.
            Default: None — ``{raw_table_name}_compacted``.
        :param database: the database resource when this app creates it.
            Default: None — it exists already.
        """
        super().__init__(scope, construct_id)
        self.table_name = table_name or f"{raw_table_name}_compacted"
        self.view_name = f"{raw_table_name}_all"
        data_columns = compacted_columns(columns, granularity)
        self.table = glue.CfnTable(
            self,
            "Table",
            catalog_id=stack_of(self).account,
            database_name=database_name,
            table_input=_table_input(
                self.table_name, raw_table_name, f"s3://{bucket.bucket_name}/{compacted_prefix}", data_columns,
                granularity,
            ),
        )
        if database is not None and stack_of(database) is stack_of(self):
            self.table.add_resource_dependency(database)
        sql = all_changes_view_sql(
            f'"{database_name}"."{self.table_name}"', f'"{database_name}"."{self.table_name}$partitions"',
            f'"{database_name}"."{raw_table_name}_deduplicated"', columns, granularity,
        )
        view_columns = [(n, t) for n, t in data_columns if n != "hour"] + [
            ("table", "string"), ("dt", "string"), ("hour", "string")]
        self.view = presto_view(
            self, "View", database_name=database_name, name=self.view_name, sql=sql, columns=view_columns,
            description=f"{raw_table_name}: compacted partitions from Parquet, the rest from the raw layer, "
                        "each event once (cdk-ts ArchiveCompaction)",
        )
        self.view.add_resource_dependency(self.table)
        #: The view's SQL (Athena/Trino).
        self.view_sql = sql


def _table_input(
    name: str, raw_table_name: str, location: str, data_columns: list[tuple[str, str]], granularity: Granularity
) -> glue.CfnTable.TableInputProperty:
    """The Parquet table: zstd Parquet under ``location``, one partition per compaction unit."""
    return glue.CfnTable.TableInputProperty(
        name=name,
        description=f"{raw_table_name}, compacted to Parquet (cdk-ts ArchiveCompaction)",
        table_type="EXTERNAL_TABLE",
        # no projection: the compaction registers each partition at its current generation's prefix,
        # which is how readers switch to a new generation at once
        partition_keys=[glue.CfnTable.ColumnProperty(name=k, type="string") for k in partition_keys(granularity)],
        parameters={"classification": "parquet", "parquet.compression": "ZSTD"},
        storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
            location=location,
            columns=[glue.CfnTable.ColumnProperty(name=n, type=t) for n, t in data_columns],
            input_format="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            output_format="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            serde_info=glue.CfnTable.SerdeInfoProperty(
                serialization_library="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            ),
        ),
    )
