"""ShardMetadataTable: per-key shard counts behind dynamic write sharding (``cdk_ts_runtime.sharding``)."""

from __future__ import annotations

from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from cdk_ts._capacity import table_capacity_options
from cdk_ts._defaults import table_protection
from cdk_ts._nag import acknowledge
from cdk_ts.runtime_layer import RuntimeLayer
from cdk_ts_runtime.sharding import (
    ENV_METADATA_TABLE,
    ENV_PARTITION_KEY,
    ENV_SORT_KEY,
    ENV_STRATEGY,
    ENV_TABLE,
    STRATEGIES,
)


class ShardMetadataTable(Construct):
    """Metadata table for dynamic write sharding of ``main_table``; its key matches the main table's partition key.

    ``main_table`` is any ``ITable`` or a cdk-ts construct exposing ``.table``. The partition key's
    name and type are read from a ``Table``/``TableV2``; for an imported table pass ``partition_key``
    (and ``sort_key_name`` for ``bind``). On-demand by default: the metadata table must never be the
    bottleneck of the writes it spreads. Exposes ``table`` (the metadata table) and ``main_table``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        main_table: Any,
        partition_key: dynamodb.Attribute | None = None,
        sort_key_name: str | None = None,
        strategy: str = "random",
        encryption_key: kms.IKey | None = None,
        point_in_time_recovery: bool = True,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        max_read_request_units: int | None = None,
        max_write_request_units: int | None = None,
        warm_read_units_per_second: int | None = None,
        warm_write_units_per_second: int | None = None,
        table_class: dynamodb.TableClass | None = None,
    ) -> None:
        """Create the metadata table for ``main_table``.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param main_table: the table whose hot keys are sharded, an ``ITable`` or a cdk-ts construct
            exposing ``.table``. Its partition key must be a String (shards are stored as ``{key}_{n}``).
        :param partition_key: the main table's partition key (the metadata table uses the same name and
            type). Default: None — read from ``main_table``'s schema (a ``Table``/``TableV2`` with a single
            partition key); required for an imported table.
        :param sort_key_name: the main table's sort key name, which ``bind`` passes to ``ShardedTable``.
            Default: None — read from ``main_table``'s schema; ``bind`` fails when there is none.
        :param strategy: how writers pick a shard, ``"random"`` (uniform) or ``"computed"``
            (``md5(key + sort key) % N + 1``, so a point read touches one shard). Default: ``"random"``.
        :param encryption_key: the KMS key the metadata table is encrypted with.
            Default: None — an AWS owned key.
        :param point_in_time_recovery: enable point-in-time recovery on the metadata table.
            Default: True.
        :param removal_policy: what happens to the metadata table when it leaves the stack.
            Default: ``RemovalPolicy.RETAIN`` — kept, so readers still find every shard of the main table.
        :param max_read_request_units: on-demand maximum read request units per second of the metadata table.
            Default: None — no cap.
        :param max_write_request_units: on-demand maximum write request units per second of the metadata table.
            Default: None — no cap.
        :param warm_read_units_per_second: warm throughput of the metadata table for reads.
            Default: None — DynamoDB's own.
        :param warm_write_units_per_second: warm throughput of the metadata table for writes.
            Default: None — DynamoDB's own.
        :param table_class: the metadata table's class.
            Default: None — Standard.
        :raises ValueError: for an unknown strategy, a partition key that cannot be read or is not a String,
            or a cap or warm value below 1.
        :raises TypeError: when ``main_table`` is not a table or a construct with ``.table``.
        """
        super().__init__(scope, construct_id)
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
        table = getattr(main_table, "table", main_table)
        if not hasattr(table, "table_name"):
            raise TypeError(f"main_table {main_table!r} is not a DynamoDB table or a construct with .table")
        schema = table.schema_v2() if hasattr(table, "schema_v2") else None
        if schema is not None and len(schema.partition_keys) != 1:
            schema = None  # a multi-attribute key cannot carry a '{key}_{n}' suffix; partition_key= must say
        partition_key = partition_key or (schema.partition_keys[0] if schema else None)
        if partition_key is None:
            raise ValueError(
                f"cannot read the partition key of main_table {table.node.path}; "
                "pass partition_key=dynamodb.Attribute(...)"
            )
        if partition_key.type != dynamodb.AttributeType.STRING:
            raise ValueError(
                f"partition key {partition_key.name!r} is {partition_key.type.name}; shards are stored as "
                "'{key}_{n}', so the main table's partition key must be a String"
            )
        sort_key_name = sort_key_name or (schema.sort_keys[0].name if schema and schema.sort_keys else None)
        self.main_table: dynamodb.ITable = table
        self.partition_key = partition_key
        self.sort_key_name = sort_key_name
        self.strategy = strategy
        options, _caps = table_capacity_options(
            on_demand=True,
            max_read_request_units=max_read_request_units, max_write_request_units=max_write_request_units,
            warm_read_units_per_second=warm_read_units_per_second,
            warm_write_units_per_second=warm_write_units_per_second, table_class=table_class,
        )
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=partition_key.name, type=partition_key.type),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            **table_protection(encryption_key, point_in_time_recovery),
            removal_policy=removal_policy,
            **options,
        )

    def grant_read_write(self, grantee: iam.IGrantable) -> iam.Grant:
        """Read/write data on the main table and the metadata table, and read CloudWatch metrics.

        The metrics are the fallback for throttles without ``ThrottlingReasons``.
        """
        grant = self.main_table.grant_read_write_data(grantee)
        self.table.grant_read_write_data(grantee)
        iam.Grant.add_to_principal(grantee=grantee, actions=["cloudwatch:GetMetricStatistics"], resource_arns=["*"])
        acknowledge(
            grantee,
            "AwsSolutions-IAM5[Resource::*]",
            "cloudwatch:GetMetricStatistics has no resource-level permissions; it reads the main table's "
            "consumed and provisioned WCU when a throttle carries no reasons",
        )
        return grant

    def bind(self, function: lambda_.Function, *, add_runtime_layer: bool = True) -> None:
        """Prepare ``function`` to use ``ShardedTable.from_env(os.environ)``.

        Sets ``SHARDED_TABLE_NAME``, ``SHARD_METADATA_TABLE_NAME``, ``SHARDED_PARTITION_KEY``,
        ``SHARDED_SORT_KEY`` and ``SHARDING_STRATEGY``, grants read/write on both tables (and the
        CloudWatch read of the throttle fallback) and adds the stack's :class:`RuntimeLayer`.

        :param function: the writer or reader of the sharded table.
        :param add_runtime_layer: add the stack's ``RuntimeLayer`` to ``function``.
            Default: True; pass False when the function ships ``cdk_ts_runtime`` in its own code.
        """
        if not self.sort_key_name:
            raise ValueError(f"main table of {self.node.path} has no sort key name; pass sort_key_name=")
        if add_runtime_layer:
            RuntimeLayer.of(self).add_to(function)
        for name, value in (
            (ENV_TABLE, self.main_table.table_name),
            (ENV_METADATA_TABLE, self.table.table_name),
            (ENV_PARTITION_KEY, self.partition_key.name),
            (ENV_SORT_KEY, self.sort_key_name),
            (ENV_STRATEGY, self.strategy),
        ):
            function.add_environment(name, value)
        self.grant_read_write(function)
