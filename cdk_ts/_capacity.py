"""On-demand caps, warm throughput and table class for the fixed tables (DeviceLogTable, ShardMetadataTable)."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts._validation import Problems


def table_capacity_options(
    problems: Problems,
    *,
    on_demand: bool,
    max_read_request_units: int | None,
    max_write_request_units: int | None,
    warm_read_units_per_second: int | None,
    warm_write_units_per_second: int | None,
    table_class: dynamodb.TableClass | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validated ``dynamodb.Table`` props for the table, and the caps each GSI gets too.

    Maximum throughput is an on-demand setting (DynamoDB's ``OnDemandThroughput``); warm throughput and
    table class apply to either billing mode.

    :param problems: where invalid values are recorded (the caller raises them with its other problems).
    :param on_demand: the table bills per request.
    :param max_read_request_units: the on-demand read cap (>= 1), or None.
    :param max_write_request_units: the on-demand write cap (>= 1), or None.
    :param warm_read_units_per_second: warm reads per second (>= 1), or None.
    :param warm_write_units_per_second: warm writes per second (>= 1), or None.
    :param table_class: the table class, or None for DynamoDB's default (Standard).
    """
    values = {
        "max_read_request_units": max_read_request_units,
        "max_write_request_units": max_write_request_units,
        "warm_read_units_per_second": warm_read_units_per_second,
        "warm_write_units_per_second": warm_write_units_per_second,
    }
    for name, value in values.items():
        problems.check(
            value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1),
            f"{name} {value!r} must be a whole number >= 1 (or None)",
        )
    caps = {k: v for k, v in values.items() if k.startswith("max_") and v is not None}
    if not on_demand:
        for name, value in caps.items():
            problems.add(f"{name} {value!r} is an on-demand cap; it needs billing_mode PAY_PER_REQUEST")
    problems.check(
        table_class is None or isinstance(table_class, dynamodb.TableClass),
        f"table_class {table_class!r} must be a dynamodb.TableClass",
    )
    props: dict[str, Any] = dict(caps)
    if warm_read_units_per_second or warm_write_units_per_second:
        props["warm_throughput"] = dynamodb.WarmThroughput(
            read_units_per_second=warm_read_units_per_second, write_units_per_second=warm_write_units_per_second
        )
    if table_class is not None:
        props["table_class"] = table_class
    return props, caps
