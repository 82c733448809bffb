"""What ``ShardMetadataTable.from_table_name`` returns: a metadata table another stack or app deployed."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts.sharding.base import ShardMetadataTableBase


class _ImportedShardMetadataTable(ShardMetadataTableBase):
    """A metadata table deployed elsewhere, known by name: what ``ShardMetadataTable.from_table_name`` returns.

    Creates nothing: imports the metadata table as ``{construct_id}/Table``; the main table is the one given.
    ``from_table_name`` checks and documents the arguments.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, table_name: str, encryption_key: kms.IKey | None, **keys: Any
    ) -> None:
        super().__init__(scope, construct_id, **keys)
        self.table = dynamodb.Table.from_table_attributes(
            self, "Table", table_name=table_name, encryption_key=encryption_key
        )
