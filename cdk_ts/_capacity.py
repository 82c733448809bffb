"""On-demand caps, warm throughput and table class for the fixed tables (DeviceLogTable, ShardMetadataTable)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts._validation import Problems
from cdk_ts_runtime._rotation.config import table_class_name


class TableCapacityOptions(TypedDict, total=False):
    """The capacity keywords of ``DeviceLogTable`` and ``ShardMetadataTable``, as a typed dict, each optional.

    Both constructors take each as a keyword-only parameter, documented with its default on the class
    (``max_read_request_units``, ``max_write_request_units``, ``warm_read_units_per_second``,
    ``warm_write_units_per_second``, ``table_class``). This dict type is for capacity settings several tables
    share: ``capacity: TableCapacityOptions = {"table_class": "STANDARD_INFREQUENT_ACCESS"}``, then
    ``**capacity`` in each call.
    """

    max_read_request_units: int | None
    max_write_request_units: int | None
    warm_read_units_per_second: int | None
    warm_write_units_per_second: int | None
    table_class: dynamodb.TableClass | str | None


#: The keys of :class:`TableCapacityOptions`, in the order they are documented.
CAPACITY_KEYWORDS: tuple[str, ...] = tuple(TableCapacityOptions.__annotations__)


def capacity_keywords(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The capacity keywords a constructor was given, out of its ``locals()`` (every one of them, None or not)."""
    return {name: arguments[name] for name in CAPACITY_KEYWORDS}


def table_capacity_options(
    problems: Problems, capacity: Mapping[str, Any], *, on_demand: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validated ``dynamodb.Table`` props for the table, and the caps each GSI gets too.

    :param problems: where invalid values are recorded (the caller raises them with its other problems).
    :param capacity: the capacity keywords the construct was given (``capacity_keywords``).
    :param on_demand: the table bills per request.
    """
    values = {name: capacity.get(name) for name in CAPACITY_KEYWORDS if name != "table_class"}
    for name, value in values.items():
        if not problems.check(
            value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1),
            f"{name} {value!r} must be a whole number >= 1 (or None)",
        ):
            values[name] = None  # reported; the props built below must not carry it into jsii
    caps = {k: v for k, v in values.items() if k.startswith("max_") and v is not None}
    if not on_demand:
        for name, value in caps.items():
            problems.add(f"{name} {value!r} is an on-demand cap; it needs billing_mode PAY_PER_REQUEST")
    table_class = capacity.get("table_class")
    if table_class is not None:
        try:  # one stored form, the name, shared with the runtime's CapacityTier
            table_class = dynamodb.TableClass(table_class_name(table_class))
        except ValueError as error:
            problems.add(str(error))
            table_class = None
    props: dict[str, Any] = dict(caps)
    warm_reads, warm_writes = values["warm_read_units_per_second"], values["warm_write_units_per_second"]
    if warm_reads or warm_writes:
        props["warm_throughput"] = dynamodb.WarmThroughput(
            read_units_per_second=warm_reads, write_units_per_second=warm_writes
        )
    if table_class is not None:
        props["table_class"] = table_class
    return props, caps
