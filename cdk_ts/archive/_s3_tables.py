"""An S3 Tables table bucket, namespace and Iceberg table with a declared schema: what the Iceberg paths create."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from aws_cdk import aws_s3tables as s3tables
from constructs import Construct


class IcebergTableResources(NamedTuple):
    """The three resources of one Iceberg table in a new table bucket."""

    bucket: s3tables.CfnTableBucket
    namespace: s3tables.CfnNamespace
    table: s3tables.CfnTable


def iceberg_table(
    scope: Construct, *, table_bucket_name: str, namespace: str, table_name: str,
    fields: Sequence[tuple[str, str, bool]], partitions: Sequence[str],
) -> IcebergTableResources:
    """A table bucket (SSE-S3), its namespace and an Iceberg table of ``fields`` (name, type, required) and partitions.

    Construct IDs ``TableBucket``, ``Namespace`` and ``Table`` under ``scope``. S3 Tables compacts the table's
    files and expires its snapshots itself (maintenance is on by default: "S3 Tables maintenance", Amazon S3
    user guide).
    """
    bucket = s3tables.CfnTableBucket(
        scope, "TableBucket", table_bucket_name=table_bucket_name,
        encryption_configuration=s3tables.CfnTableBucket.EncryptionConfigurationProperty(sse_algorithm="AES256"),
    )
    space = s3tables.CfnNamespace(
        scope, "Namespace", namespace=namespace, table_bucket_arn=bucket.attr_table_bucket_arn)
    ids = {name: number for number, (name, _type, _required) in enumerate(fields, start=1)}
    table = s3tables.CfnTable(
        scope, "Table",
        table_bucket_arn=bucket.attr_table_bucket_arn,
        namespace=namespace,
        table_name=table_name,
        open_table_format="ICEBERG",
        iceberg_metadata=s3tables.CfnTable.IcebergMetadataProperty(
            iceberg_schema=s3tables.CfnTable.IcebergSchemaProperty(schema_field_list=[
                s3tables.CfnTable.SchemaFieldProperty(name=n, type=t, required=r, id=ids[n]) for n, t, r in fields
            ]),
            iceberg_partition_spec=s3tables.CfnTable.IcebergPartitionSpecProperty(fields=[
                s3tables.CfnTable.IcebergPartitionFieldProperty(
                    source_id=ids[name], transform="identity", name=name, field_id=1000 + number)
                for number, name in enumerate(partitions)
            ]),
        ),
    )
    table.node.add_dependency(space)
    return IcebergTableResources(bucket, space, table)
