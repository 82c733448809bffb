"""ArchiveCatalog: the Glue table over a StreamArchiver's objects and its one-row-per-event view, for Athena."""

from __future__ import annotations

from aws_cdk import aws_glue as glue
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk_ts._lookups import stack_of
from cdk_ts._validation import Problems
from cdk_ts.archive._glue_names import MAX_NAME_LENGTH, VIEW_SUFFIX, glue_name
from cdk_ts.archive._glue_views import presto_view

#: The Glue table's data columns (all strings: every field of a line is a JSON string or null).
ARCHIVE_COLUMNS = (
    "eventid",
    "eventname",
    "sequencenumber",
    "approximatecreationdatetime",
    "keys",
    "newimage",
    "oldimage",
    "useridentity",
)
#: The Glue table's partition columns, in key order.
PARTITION_COLUMNS = ("table", "dt", "hour")


def deduplicated_view_sql(source: str) -> str:
    """The SELECT of the ``<table>_deduplicated`` view: one row per ``eventid`` (Presto/Trino, and DuckDB).

    The window partitions by ``"table", dt, hour, eventid``: a duplicate always has the same table,
    day and hour (they come from the record itself), and filters on those partition columns can then
    be pushed below the window, so a query for one table and day reads only that table's and day's files.

    :param source: the table reference, e.g. ``"archive"."telemetry_archiver"``.
    """
    columns = ", ".join(f'"{c}"' for c in ARCHIVE_COLUMNS + PARTITION_COLUMNS)
    return (
        f"SELECT {columns}\n"
        "FROM (\n"
        '  SELECT a.*, row_number() OVER (PARTITION BY "table", dt, hour, eventid ORDER BY sequencenumber) AS copy\n'
        f"  FROM {source} a\n"
        ")\n"
        "WHERE copy = 1"
    )


class ArchiveCatalog(Construct):
    """A Glue table (partition projection over table, day and hour; Hive JSON SerDe) and its deduplicated view.

    ``StreamArchiver`` creates one when given ``glue_database``. Exposes ``table``, ``view``,
    ``database_name`` and ``table_name``.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        bucket: s3.IBucket,
        prefix: str,
        database_name: str,
        table_name: str,
        database: glue.CfnDatabase | None = None,
    ) -> None:
        """Create the table over ``s3://{bucket}/{prefix}`` and its view in ``database_name``.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param bucket: the archive bucket.
        :param prefix: the archive's key prefix (ends with ``/``, or empty).
        :param database_name: the Glue database (a literal name: the view's text names it); 1-255 letters,
            digits or ``_``, written in lower case as Glue stores it.
        :param table_name: the Glue table's name (1-242 letters, digits or ``_``, lower-cased like the
            database's); the view is ``{table_name}_deduplicated``.
        :param database: the database resource when this app creates it, so the table is created after it.
            Default: None — the database exists already.
        :raises ValueError: for a database or table name Glue or Athena refuses (see ``cdk_ts.archive._glue_names``).
        """
        problems = Problems(scope, construct_id)
        database_name = glue_name(problems, "database_name", database_name) or database_name
        table_name = glue_name(problems, "table_name", table_name, longest=MAX_NAME_LENGTH - len(VIEW_SUFFIX)) or (
            table_name
        )
        problems.raise_if_any()
        super().__init__(scope, construct_id)
        self.database_name = database_name
        self.table_name = table_name
        table = glue.CfnTable(
            self,
            "GlueTable",
            catalog_id=stack_of(self).account,
            database_name=database_name,
            table_input=_table_input(f"s3://{bucket.bucket_name}/{prefix}", table_name),
        )
        if database is not None and stack_of(database) is stack_of(self):
            table.add_resource_dependency(database)
        view = self._glue_view(database_name, table_name)
        view.add_resource_dependency(table)
        #: The ``EXTERNAL_TABLE`` over the archive objects.
        self.table: glue.CfnTable = table
        #: The ``VIRTUAL_VIEW`` ``{table_name}_deduplicated``.
        self.view: glue.CfnTable = view

    def _glue_view(self, database_name: str, table_name: str) -> glue.CfnTable:
        return presto_view(
            self, "GlueDeduplicatedView", database_name=database_name, name=f"{table_name}{VIEW_SUFFIX}",
            sql=deduplicated_view_sql(f'"{database_name}"."{table_name}"'),
            columns=[(c, "string") for c in ARCHIVE_COLUMNS + PARTITION_COLUMNS],
            description=f"{table_name}, one row per eventid (cdk-ts StreamArchiver)",
        )


def _table_input(location: str, table_name: str) -> glue.CfnTable.TableInputProperty:
    """The archive's table: JSON Lines under ``location``, partitions projected over table, day and hour."""
    return glue.CfnTable.TableInputProperty(
        name=table_name,
        table_type="EXTERNAL_TABLE",
        partition_keys=[glue.CfnTable.ColumnProperty(name=n, type="string") for n in PARTITION_COLUMNS],
        parameters={
            "classification": "json",
            "compressionType": "gzip",
            "projection.enabled": "true",
            "projection.table.type": "injected",
            "projection.dt.type": "date",
            "projection.dt.format": "yyyy-MM-dd",
            "projection.dt.range": "2020-01-01,NOW",
            "projection.dt.interval": "1",
            "projection.dt.interval.unit": "DAYS",
            "projection.hour.type": "integer",
            "projection.hour.range": "0,23",
            "projection.hour.digits": "2",
            "storage.location.template": f"{location}table=${{table}}/dt=${{dt}}/hour=${{hour}}/",
        },
        storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
            location=location,
            columns=[glue.CfnTable.ColumnProperty(name=n, type="string") for n in ARCHIVE_COLUMNS],
            input_format="org.apache.hadoop.mapred.TextInputFormat",
            output_format="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            # Athena documents that the OpenX JSON SerDe can return non-deterministic results and
            # recommends the Hive JSON SerDe instead; every field is a string, so its lack of
            # OpenX's mapping options costs nothing. The "table" key of a line has no data column
            # (the partition of that name holds the same value) and is skipped.
            serde_info=glue.CfnTable.SerdeInfoProperty(
                serialization_library="org.apache.hive.hcatalog.data.JsonSerDe",
            ),
        ),
    )
