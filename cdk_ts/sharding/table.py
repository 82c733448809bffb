"""ShardMetadataTable: per-key shard counts behind dynamic write sharding (``cdk_ts_runtime.ShardedTable``)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts._capacity import capacity_keywords, table_capacity_options
from cdk_ts._defaults import table_protection
from cdk_ts._import_checks import check_key
from cdk_ts._insights import main_table_problem, name_throttled_keys_of, throttled_keys_rule_of
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._table_names import check_imported_table_name, check_table_name
from cdk_ts._validation import Problems, attribute_problem, refuses_unknown_keywords
from cdk_ts.protocols import HasTable
from cdk_ts.sharding.base import ShardMetadataTableBase
from cdk_ts.sharding.imported import _ImportedShardMetadataTable
from cdk_ts_runtime._errors import WrongTypeError
from cdk_ts_runtime._sharding import STRATEGIES, ShardStrategy, StrategyName

_ATTRIBUTE_TYPES = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}


class ShardMetadataTable(ShardMetadataTableBase):
    """Metadata table for dynamic write sharding of ``main_table``; its key matches the main table's partition key.

    ``main_table`` is any ``ITable``/``ITableV2`` or a construct exposing ``.table``. The key schema
    is read from a ``Table`` or ``TableV2`` defined in the app; for an imported table pass
    ``partition_key`` and ``sort_key_name``. The main table needs a sort key (``ShardedTable`` reads
    by it). On-demand by default: the metadata table must never be the bottleneck of the writes it
    spreads. Exposes ``table`` (the metadata table) and ``main_table``. Give it a ``table_name`` when
    another stack or app will import it (``from_table_name``).

    Keyword arguments of the constructor:

    :param main_table: the table whose hot keys are sharded, an ``ITable``/``ITableV2`` or a construct
        exposing ``.table`` (such as ``DeviceLogTable``). Its partition key must be a String (shards are
        stored as ``{key}_{n}``).
    :param table_name: the metadata table's name, 3-255 characters of ``[A-Za-z0-9_.-]``, so that another
        stack or app can import it with ``ShardMetadataTable.from_table_name`` by a name known in advance.
        Default: None — CloudFormation generates a unique name (read it from ``table.table_name``).
    :param partition_key: the main table's partition key (the metadata table uses the same name and
        type). Default: None — read from ``main_table``'s schema (a ``Table`` or ``TableV2`` with a single
        partition key); required for an imported table.
    :param sort_key_name: the main table's sort key name, which ``bind`` passes to ``ShardedTable``.
        Default: None — read from ``main_table``'s schema; required for an imported table.
    :param strategy: how writers pick a shard, ``ShardStrategy.RANDOM`` (uniform) or
        ``ShardStrategy.COMPUTED`` (``md5(key + sort key) % N + 1``, so a point read touches one shard);
        the values ``"random"``/``"computed"`` work too. Default: ``ShardStrategy.RANDOM``.
    :param encryption_key: the KMS key the metadata table is encrypted with.
        Default: None — an AWS owned key.
    :param point_in_time_recovery: enable point-in-time recovery on the metadata table.
        Default: True.
    :param removal_policy: what happens to the metadata table when it leaves the stack.
        Default: ``RemovalPolicy.RETAIN`` — kept, so readers still find every shard of the main table.
    :param throttled_keys_insights: turn on CloudWatch Contributor Insights in ``THROTTLED_KEYS`` mode on the
        MAIN table, so the keys DynamoDB throttles are named, the ones worth sharing out (docs/monitoring.md, "Hot keys
        named"). Possible for a ``dynamodb.Table`` defined in this app (a ``DeviceLogTable``'s included);
        insights it already has, in either mode, are kept; this construct's dashboard row then graphs the main
        table's top throttled key (``throttled_keys_rule`` reads the rule name at deploy time).
        Default: False — no Contributor Insights rules.
    :param max_read_request_units: the metadata table's on-demand maximum of read request units per second,
        a cost guardrail. Default: None — no cap.
    :param max_write_request_units: the metadata table's on-demand maximum of write request units per second.
        Default: None — no cap.
    :param warm_read_units_per_second: reads per second the metadata table serves at once (warm throughput:
        raised, never lowered). Default: None — DynamoDB's own (12,000 on a new on-demand table).
    :param warm_write_units_per_second: writes per second the metadata table serves at once.
        Default: None — DynamoDB's own (4,000 on a new on-demand table).
    :param table_class: the metadata table's class, ``TableClass.STANDARD`` or
        ``TableClass.STANDARD_INFREQUENT_ACCESS`` (or its name). Default: None — Standard.
    :raises ValueError: naming this construct's path and every problem at once, an unknown keyword (with
        the closest valid one), an unknown strategy, a ``table_name`` DynamoDB would refuse, a partition key
        that cannot be read or is not a String, no sort key, or a cap or warm value below 1.
    :raises WrongTypeError: (a ``TypeError``) when ``main_table`` is not a table or a construct with ``.table``.
    """

    @refuses_unknown_keywords
    def __init__(
        self, scope: Construct, construct_id: str, *,
        main_table: dynamodb.ITable | dynamodb.ITableV2 | HasTable,
        table_name: str | None = None,
        partition_key: dynamodb.Attribute | None = None,
        sort_key_name: str | None = None,
        strategy: ShardStrategy | StrategyName = ShardStrategy.RANDOM,
        encryption_key: kms.IKey | None = None,
        point_in_time_recovery: bool = True,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        throttled_keys_insights: bool = False,
        max_read_request_units: int | None = None,
        max_write_request_units: int | None = None,
        warm_read_units_per_second: int | None = None,
        warm_write_units_per_second: int | None = None,
        table_class: dynamodb.TableClass | str | None = None,
    ) -> None:
        """Create the metadata table for ``main_table`` (keywords in the class docstring)."""
        capacity = capacity_keywords(locals())
        problems = Problems(scope, construct_id)
        _check_strategy(problems, strategy)
        check_table_name(problems, "table_name", table_name)
        table = _table_of(problems, main_table)
        partition_key, sort_key_name = _main_table_keys(problems, table, partition_key, sort_key_name)
        options, _caps = table_capacity_options(problems, capacity, on_demand=True)
        if throttled_keys_insights:
            _check_insights(problems, table)
        problems.raise_if_any()
        super().__init__(
            scope, construct_id, main_table=main_table, partition_key=partition_key, sort_key_name=sort_key_name,
            strategy=strategy,
        )
        self.table = dynamodb.Table(
            self,
            "Table",
            table_name=table_name,
            partition_key=dynamodb.Attribute(name=partition_key.name, type=partition_key.type),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,  # never the bottleneck of the writes it spreads
            **table_protection(encryption_key, point_in_time_recovery),
            removal_policy=removal_policy,
            **options,
        )
        if throttled_keys_insights:
            name_throttled_keys_of(table)
            self.throttled_keys_rule = throttled_keys_rule_of(table)

    @classmethod
    def from_table_name(
        cls, scope: Construct, construct_id: str, *,
        table_name: str,
        main_table: dynamodb.ITable | dynamodb.ITableV2 | HasTable,
        partition_key: dynamodb.Attribute,
        sort_key_name: str,
        strategy: ShardStrategy | StrategyName = ShardStrategy.RANDOM,
        encryption_key: kms.IKey | None = None,
    ) -> ShardMetadataTableBase:
        """A metadata table another stack or app created, for the same grants, ``bind`` and metrics; creates nothing.

        The metadata table is found by ``table_name`` alone: the ``table_name`` the owning
        ``ShardMetadataTable`` was given (or its ``table.table_name``, exported from the owning stack when it was
        generated), imported as ``{construct_id}/Table``. The main table is the one passed here, found as it
        was imported: ``dynamodb.Table.from_table_name`` or ``DeviceLogTable.from_table_name`` by its own
        name, so its grants (a device log's GSIs included) are its own. Neither name is looked up at synth
        time: a wrong name shows when the function first reads or writes.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param table_name: the metadata table's name (the owning ``ShardMetadataTable``'s ``table_name``).
        :param main_table: the sharded table, an ``ITable``/``ITableV2`` (``Table.from_table_name`` for one
            deployed elsewhere) or a construct exposing ``.table`` (``DeviceLogTable.from_table_name``).
        :param partition_key: the main table's partition key (a String).
        :param sort_key_name: the main table's sort key name.
        :param strategy: the strategy the owning construct was given.
            Default: ``ShardStrategy.RANDOM``.
        :param encryption_key: the metadata table's KMS key, so grants include it.
            Default: None — an AWS owned key.
        :raises ValueError: naming the construct path, for an unknown strategy, a ``table_name`` DynamoDB would
            refuse, a partition key that is not a String, or an empty ``sort_key_name``.
        :raises TypeError: naming the construct path, when ``main_table`` is not a table or a construct with
            ``.table``.
        """
        problems = Problems(scope, construct_id)
        _table_of(problems, main_table)
        _check_strategy(problems, strategy)
        check_imported_table_name(problems, "table_name", table_name)
        check_key(problems, "encryption_key", encryption_key)
        _check_partition_key(problems, partition_key)
        problems.check(
            isinstance(sort_key_name, str) and bool(sort_key_name.strip()),
            f"sort_key_name {sort_key_name!r} names no attribute; pass the main table's sort key name",
        )
        problems.raise_if_any()
        return _ImportedShardMetadataTable(
            scope, construct_id, table_name=table_name, encryption_key=encryption_key, main_table=main_table,
            partition_key=partition_key, sort_key_name=sort_key_name, strategy=strategy,
        )


def _check_strategy(problems: Problems, strategy: object) -> None:
    """Record a strategy that is not one of ``STRATEGIES``."""
    problems.check(strategy in STRATEGIES, f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")


def _check_partition_key(problems: Problems, partition_key: object) -> None:
    """Record a partition key that is not a ``dynamodb.Attribute`` of type String (shards are ``{key}_{n}``)."""
    if problems.check((problem := attribute_problem("partition_key", partition_key)) is None, str(problem)):
        problems.check(
            partition_key.type == dynamodb.AttributeType.STRING,
            f"partition key {partition_key.name!r} is {partition_key.type.name}; shards are stored as "
            "'{key}_{n}', so the main table's partition key must be a String",
        )


def _table_of(problems: Problems, main_table: object) -> dynamodb.ITable | dynamodb.ITableV2:
    """The table ``main_table`` is or exposes as ``.table``; a ``TypeError`` naming the path for anything else."""
    table = main_table.table if isinstance(main_table, HasTable) else main_table
    if not hasattr(table, "table_name"):
        raise WrongTypeError(
            f"{problems.path}: main_table {main_table!r} is not a DynamoDB table or a construct with .table"
        )
    return table


def _main_table_keys(
    problems: Problems, table: dynamodb.ITable | dynamodb.ITableV2, partition_key: dynamodb.Attribute | None,
    sort_key_name: str | None,
) -> tuple[dynamodb.Attribute | None, str | None]:
    """The main table's partition key and sort key name, given or read from its schema, with their problems."""
    schema_partition, schema_sort = _schema_keys(table)
    partition_key = partition_key or schema_partition
    if problems.check(
        partition_key is not None,
        f"cannot read the partition key of main_table {path_of(table)} (an imported table, or a key of "
        "several attributes); pass partition_key=dynamodb.Attribute(...)",
    ):
        _check_partition_key(problems, partition_key)
    sort_key_name = sort_key_name or schema_sort
    problems.check(
        bool(sort_key_name),
        f"main_table {path_of(table)} has no sort key that can be read; ShardedTable needs the sort key name: "
        "pass sort_key_name= (for an imported table), or shard a table that has a sort key",
    )
    return partition_key, sort_key_name


def _check_insights(problems: Problems, table: dynamodb.ITable | dynamodb.ITableV2) -> None:
    """Record why Contributor Insights cannot be turned on for the main table, if it cannot."""
    why_not = main_table_problem(table)
    problems.check(
        why_not is None, f"throttled_keys_insights cannot name the keys of main_table {path_of(table)}: {why_not}"
    )


def _schema_keys(table: object) -> tuple[dynamodb.Attribute | None, str | None]:
    """The partition key and sort key name of a ``Table`` or ``TableV2`` defined in the app.

    Read from the CloudFormation resource (``TableV2`` offers no ``schema()``, ``Table.schema()`` is
    deprecated); (None, None) for an imported table, None for a key of several attributes.
    """
    resource = getattr(getattr(table, "node", None), "default_child", None)
    if not isinstance(resource, dynamodb.CfnTable | dynamodb.CfnGlobalTable):
        return None, None
    stack = stack_of(resource)
    key_schema = stack.resolve(resource.key_schema) or []
    types = {d["attributeName"]: d["attributeType"] for d in stack.resolve(resource.attribute_definitions) or []}
    hash_keys = [k["attributeName"] for k in key_schema if k["keyType"] == "HASH"]
    range_keys = [k["attributeName"] for k in key_schema if k["keyType"] == "RANGE"]
    partition_key = (
        dynamodb.Attribute(name=hash_keys[0], type=_ATTRIBUTE_TYPES[types[hash_keys[0]]])
        if len(hash_keys) == 1 else None
    )
    return partition_key, range_keys[0] if len(range_keys) == 1 else None
