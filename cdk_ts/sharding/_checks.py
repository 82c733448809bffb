"""What the metadata table's owner and its importer both check: the strategy, the main table and its key."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts._validation import Problems, attribute_problem
from cdk_ts.protocols import HasTable
from cdk_ts_runtime._errors import WrongTypeError
from cdk_ts_runtime._sharding import STRATEGIES


def check_strategy(problems: Problems, strategy: object) -> None:
    """Record a strategy that is not one of ``STRATEGIES``."""
    problems.check(strategy in STRATEGIES, f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")


def check_partition_key(problems: Problems, partition_key: object) -> None:
    """Record a partition key that is not a ``dynamodb.Attribute`` of type String (shards are ``{key}_{n}``)."""
    if problems.check((problem := attribute_problem("partition_key", partition_key)) is None, str(problem)):
        problems.check(
            partition_key.type == dynamodb.AttributeType.STRING,
            f"partition key {partition_key.name!r} is {partition_key.type.name}; shards are stored as "
            "'{key}_{n}', so the main table's partition key must be a String",
        )


def main_table_of(problems: Problems, main_table: object) -> dynamodb.ITable | dynamodb.ITableV2:
    """The table ``main_table`` is or exposes as ``.table``; a ``TypeError`` naming the path for anything else."""
    table = main_table.table if isinstance(main_table, HasTable) else main_table
    if not hasattr(table, "table_name"):
        raise WrongTypeError(
            f"{problems.path}: main_table {main_table!r} is not a DynamoDB table or a construct with .table"
        )
    return table
