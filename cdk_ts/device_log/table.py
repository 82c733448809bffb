"""DeviceLogTable: the device-status log table with its two GSIs, ready for DeviceLogRepository."""

from __future__ import annotations

from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts._capacity import capacity_keywords, table_capacity_options
from cdk_ts._defaults import table_protection
from cdk_ts._import_checks import check_arn, check_key
from cdk_ts._insights import throttled_keys_options, throttled_keys_rule_of
from cdk_ts._lookups import path_of
from cdk_ts._table_names import check_imported_table_name, check_table_name
from cdk_ts._validation import Problems, refuses_unknown_keywords
from cdk_ts.device_log.base import DeviceLogTableBase
from cdk_ts.device_log.imported import _ImportedDeviceLogTable
from cdk_ts_runtime._device_log import GSI_BY_OPERATOR, GSI_BY_SUPERVISOR

_STRING = dynamodb.AttributeType.STRING
#: Each GSI: its name, partition key, sort key, and the constructor keyword of its projection.
_INDEXES = (
    (GSI_BY_OPERATOR, "Operator", "Date", "gsi1_projection"),
    (GSI_BY_SUPERVISOR, "EscalatedTo", "State#Date", "gsi2_projection"),
)


class DeviceLogTable(DeviceLogTableBase):
    """Device status log: ``DeviceID`` + ``State#Date``, GSI1 by ``Operator``/``Date``, sparse GSI2 by ``EscalatedTo``.

    Both GSIs are created with the table (CloudFormation cannot add two GSIs in one update). Pass
    ``existing_table`` to use a table created elsewhere; it must follow the same model, with index
    names GSI1 and GSI2 (import it with ``global_indexes=["GSI1", "GSI2"]`` so grants cover them).
    The table is exposed as ``table``. For a table another stack or app deployed, ``from_table_name``.

    Keyword arguments of the constructor:

    :param existing_table: a table defined elsewhere that follows the same model (index names GSI1 and
        GSI2); the table options below must then be left unset. Default: None — a new table is created.
    :param table_name: the table's name, 3-255 characters of ``[A-Za-z0-9_.-]``.
        Default: None — CloudFormation generates a unique name.
    :param billing_mode: on-demand or provisioned capacity for the table and both GSIs.
        Default: ``BillingMode.PAY_PER_REQUEST`` — on-demand, no capacity planning.
    :param read_capacity: provisioned RCU of the table and of each GSI; required (>= 1) with
        ``BillingMode.PROVISIONED``, not allowed otherwise. Default: None — on-demand.
    :param write_capacity: provisioned WCU of the table and of each GSI; same rules as ``read_capacity``.
        Default: None — on-demand.
    :param gsi1_projection: attributes GSI1 (by ``Operator``/``Date``) carries.
        Default: ``ProjectionType.ALL`` — whole items, so GSI1 queries need no second read.
    :param gsi2_projection: attributes GSI2 (by ``EscalatedTo``) carries.
        Default: ``ProjectionType.ALL``.
    :param gsi_non_key_attributes: the non-key attributes an ``INCLUDE`` projection carries (required
        with ``INCLUDE``). Default: None — none; only needed for ``INCLUDE`` projections.
    :param encryption_key: the KMS key the table is encrypted with.
        Default: None — an AWS owned key.
    :param point_in_time_recovery: enable point-in-time recovery.
        Default: True.
    :param stream: the stream view type (``NEW_AND_OLD_IMAGES`` for a ``StreamArchiver``).
        Default: None — no stream, so nothing to archive.
    :param time_to_live_attribute: the attribute holding each entry's expiry (epoch seconds).
        Default: None — no TTL; entries are kept until deleted.
    :param removal_policy: what happens to the table when it leaves the stack.
        Default: ``RemovalPolicy.RETAIN`` — the table and its data are kept.
    :param deletion_protection: enable DynamoDB deletion protection.
        Default: False.
    :param throttled_keys_insights: turn on CloudWatch Contributor Insights in ``THROTTLED_KEYS`` mode on the
        table and both GSIs, so the keys DynamoDB throttles are named (docs/monitoring.md, "Hot keys named");
        the table's dashboard row then graphs its top throttled key (``throttled_keys_rule`` reads the rule name
        at deploy time). Default: False — no Contributor Insights rules (each rule is billed).
    :param max_read_request_units: on-demand cap on read request units per second of the table and of each
        GSI (DynamoDB's ``OnDemandThroughput``), a cost guardrail; needs on-demand billing. Default: None — no cap.
    :param max_write_request_units: on-demand cap on write request units per second of the table and of each
        GSI; needs on-demand billing. Default: None — no cap.
    :param warm_read_units_per_second: warm throughput of the table for reads, available at once (can be
        raised, never lowered). Default: None — DynamoDB's own (12,000 on a new on-demand table).
    :param warm_write_units_per_second: warm throughput of the table for writes.
        Default: None — DynamoDB's own (4,000 on a new on-demand table).
    :param table_class: ``TableClass.STANDARD`` or ``TableClass.STANDARD_INFREQUENT_ACCESS``, or its name as a
        string (as ``CapacityTier`` takes it). Default: None — Standard.
    :raises ValueError: naming this construct's path and every problem at once, an unknown keyword (with
        the closest valid one), table options given with ``existing_table``, capacity or caps that do not
        match ``billing_mode``, a cap or warm value below 1, an ``INCLUDE`` projection without
        ``gsi_non_key_attributes``, or a ``table_name`` DynamoDB would refuse.
    """

    @refuses_unknown_keywords
    def __init__(
        self, scope: Construct, construct_id: str, *,
        existing_table: dynamodb.ITable | None = None,
        table_name: str | None = None,
        billing_mode: dynamodb.BillingMode = dynamodb.BillingMode.PAY_PER_REQUEST,
        read_capacity: int | None = None,
        write_capacity: int | None = None,
        gsi1_projection: dynamodb.ProjectionType = dynamodb.ProjectionType.ALL,
        gsi2_projection: dynamodb.ProjectionType = dynamodb.ProjectionType.ALL,
        gsi_non_key_attributes: list[str] | None = None,
        encryption_key: kms.IKey | None = None,
        point_in_time_recovery: bool = True,
        stream: dynamodb.StreamViewType | None = None,
        time_to_live_attribute: str | None = None,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        deletion_protection: bool = False,
        throttled_keys_insights: bool = False,
        max_read_request_units: int | None = None,
        max_write_request_units: int | None = None,
        warm_read_units_per_second: int | None = None,
        warm_write_units_per_second: int | None = None,
        table_class: dynamodb.TableClass | str | None = None,
    ) -> None:
        """Create the table and its two GSIs, or wrap ``existing_table`` (keywords in the class docstring)."""
        capacity = capacity_keywords(locals())
        problems = Problems(scope, construct_id)
        provisioned = billing_mode == dynamodb.BillingMode.PROVISIONED
        if existing_table is not None:
            _validate_existing(problems, existing_table, {
                "table_name": table_name, "read_capacity": read_capacity, "write_capacity": write_capacity,
                "encryption_key": encryption_key, "stream": stream, "time_to_live_attribute": time_to_live_attribute,
                "throttled_keys_insights": throttled_keys_insights or None,
                **capacity,
            })
        else:
            check_table_name(problems, "table_name", table_name)
            _validate_capacity(problems, provisioned, read_capacity, write_capacity)
            _validate_projections(problems, gsi1_projection, gsi2_projection, gsi_non_key_attributes)
            options, caps = table_capacity_options(problems, capacity, on_demand=not provisioned)
        problems.raise_if_any()
        super().__init__(scope, construct_id)
        if existing_table is not None:
            self.table = existing_table  # its stream view type is unknown here: its stream ARN tells
            return
        self.stream_view_type = stream
        self.encryption_key = encryption_key
        provisioned_units = {"read_capacity": read_capacity, "write_capacity": write_capacity} if provisioned else {}
        table = self._create_table(
            table_name=table_name, billing_mode=billing_mode, stream=stream,
            time_to_live_attribute=time_to_live_attribute, removal_policy=removal_policy,
            deletion_protection=deletion_protection, **table_protection(encryption_key, point_in_time_recovery),
            **throttled_keys_options(throttled_keys_insights), **provisioned_units, **options,
        )
        _add_indexes(
            table, {"gsi1_projection": gsi1_projection, "gsi2_projection": gsi2_projection}, gsi_non_key_attributes,
            {**throttled_keys_options(throttled_keys_insights), **provisioned_units, **caps},
        )
        self.table: dynamodb.ITable = table
        if throttled_keys_insights:
            self.throttled_keys_rule = throttled_keys_rule_of(table)

    def _create_table(self, **props: Any) -> dynamodb.Table:
        """The table with the model's keys (``DeviceID`` + ``State#Date``) and ``props`` (the constructor's options)."""
        return dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name="DeviceID", type=_STRING),
            sort_key=dynamodb.Attribute(name="State#Date", type=_STRING),
            **props,
        )

    @classmethod
    def from_table_name(
        cls, scope: Construct, construct_id: str, *,
        table_name: str,
        encryption_key: kms.IKey | None = None,
        table_stream_arn: str | None = None,
    ) -> DeviceLogTableBase:
        """A device log table another stack or app created, with the same grants, ``bind`` and metrics; creates nothing.

        Imports the table as ``{construct_id}/Table`` (``Table.from_table_attributes`` with its indexes GSI1 and
        GSI2, so grants cover them).

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param table_name: the table's name (the owning ``DeviceLogTable``'s ``table_name``, or its
            ``table.table_name`` exported from the owning stack).
        :param encryption_key: the table's KMS key, so grants include it.
            Default: None — an AWS owned key.
        :param table_stream_arn: the table's stream ARN, for ``grant_stream_read`` and a ``StreamArchiver``.
            Default: None — no stream.
        :raises ValueError: naming the construct path, for a ``table_name`` DynamoDB would refuse (an ARN
            included), an ``encryption_key`` that is not a ``kms.IKey``, or a ``table_stream_arn`` that is not a
            stream's ARN.
        """
        problems = Problems(scope, construct_id)
        check_imported_table_name(problems, "table_name", table_name)
        check_key(problems, "encryption_key", encryption_key)
        check_arn(problems, "table_stream_arn", table_stream_arn, service="dynamodb", resource="/stream/")
        problems.raise_if_any()
        return _ImportedDeviceLogTable(
            scope, construct_id, table_name=table_name, encryption_key=encryption_key,
            table_stream_arn=table_stream_arn,
        )


def _validate_existing(problems: Problems, existing_table: dynamodb.ITable, options: dict[str, object]) -> None:
    """Record the table options given with ``existing_table``, which only its own definition can apply."""
    given = [name for name, value in options.items() if value is not None]
    problems.check(
        not given,
        f"{', '.join(given)} cannot be applied to existing_table {path_of(existing_table)}; "
        "configure the existing table where it is defined",
    )


def _validate_capacity(problems: Problems, provisioned: bool, read: int | None, write: int | None) -> None:
    """Record provisioned units that do not match the billing mode."""
    for name, value in (("read_capacity", read), ("write_capacity", write)):
        if provisioned:
            problems.check(
                value is not None and value >= 1, f"{name} {value!r} must be >= 1 with billing_mode PROVISIONED"
            )
        else:
            problems.check(value is None, f"{name} {value!r} needs billing_mode=dynamodb.BillingMode.PROVISIONED")


def _validate_projections(
    problems: Problems, gsi1: dynamodb.ProjectionType, gsi2: dynamodb.ProjectionType, non_key: list[str] | None
) -> None:
    """Record an ``INCLUDE`` projection without the attributes it includes."""
    for name, projection in (("gsi1_projection", gsi1), ("gsi2_projection", gsi2)):
        problems.check(
            projection != dynamodb.ProjectionType.INCLUDE or bool(non_key),
            f"{name} INCLUDE needs gsi_non_key_attributes",
        )


def _add_indexes(
    table: dynamodb.Table, projections: dict[str, dynamodb.ProjectionType], non_key: list[str] | None,
    options: dict[str, Any],
) -> None:
    """GSI1 and GSI2, in that order, each with ``options`` (insights, provisioned units, on-demand caps)."""
    for index, partition, sort, keyword in _INDEXES:
        projection = projections[keyword]
        table.add_global_secondary_index(
            index_name=index,
            partition_key=dynamodb.Attribute(name=partition, type=_STRING),
            sort_key=dynamodb.Attribute(name=sort, type=_STRING),
            projection_type=projection,
            non_key_attributes=non_key if projection == dynamodb.ProjectionType.INCLUDE else None,
            **options,
        )
