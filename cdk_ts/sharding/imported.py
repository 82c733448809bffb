"""What ``ShardMetadataTable.from_table_name`` returns: a metadata table another stack or app deployed."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts._import_checks import check_key
from cdk_ts._table_names import check_imported_table_name
from cdk_ts._validation import Problems
from cdk_ts.protocols import HasTable
from cdk_ts.sharding._checks import check_partition_key, check_strategy, main_table_of
from cdk_ts.sharding.base import ShardMetadataTableBase
from cdk_ts_runtime._sharding import ShardStrategy, StrategyName


class _ImportedShardMetadataTable(ShardMetadataTableBase):
    """A metadata table deployed elsewhere, known by name: what ``ShardMetadataTable.from_table_name`` returns.

    Creates nothing: imports the metadata table as ``{construct_id}/Table``; the main table is the one given.
    ``from_table_name`` documents the arguments and what is refused.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        table_name: str,
        main_table: dynamodb.ITable | dynamodb.ITableV2 | HasTable,
        partition_key: dynamodb.Attribute,
        sort_key_name: str,
        strategy: ShardStrategy | StrategyName,
        encryption_key: kms.IKey | None,
    ) -> None:
        problems = Problems(scope, construct_id)
        main_table_of(problems, main_table)
        check_strategy(problems, strategy)
        check_imported_table_name(problems, "table_name", table_name)
        check_key(problems, "encryption_key", encryption_key)
        check_partition_key(problems, partition_key)
        problems.check(
            isinstance(sort_key_name, str) and bool(sort_key_name.strip()),
            f"sort_key_name {sort_key_name!r} names no attribute; pass the main table's sort key name",
        )
        problems.raise_if_any()
        super().__init__(
            scope, construct_id, main_table=main_table, partition_key=partition_key, sort_key_name=sort_key_name,
            strategy=strategy,
        )
        self.table = dynamodb.Table.from_table_attributes(
            self, "Table", table_name=table_name, encryption_key=encryption_key
        )
