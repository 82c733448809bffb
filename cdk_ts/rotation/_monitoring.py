"""The rotation's alarms and dashboard graph, asked of its metric methods (the metrics come from ``_metrics``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from cdk_ts._alarms import AlarmBook
from cdk_ts._metrics import graph
from cdk_ts.rotation._texts import alarm_descriptions
from cdk_ts_runtime.rotation_metrics import RotationMetric

if TYPE_CHECKING:
    from cdk_ts.rotation.tables import RotatingTimeSeriesTables


def rotation_health_graph(tables: RotatingTimeSeriesTables) -> cloudwatch.GraphWidget:
    """Function errors, next table missing, undelivered runs, failed runs kept, future and failed tables, lock held."""
    return graph(
        f"Rotation of {tables.table_prefix}_* ({tables.period.value})",
        tables.metric_rotation_errors(label="rotation errors"),
        tables.metric_next_table_missing(label="next table missing"),
        tables.metric_schedule_dead_letters(label="undelivered runs"),
        tables.metric_function_dead_letters(label="failed runs kept"),
        tables.metric(RotationMetric.FUTURE_PERIOD_TABLES, label="future tables"),
        tables.metric(RotationMetric.FAILED_TABLES, label="failed tables"),
        tables.metric(RotationMetric.LOCK_HELD_RUNS, label="runs that found the lock held"),
    )


def rotation_alarms(tables: RotatingTimeSeriesTables, book: AlarmBook) -> dict[str, cloudwatch.Alarm]:
    """The rotation's recommended alarms by name, made in ``book`` (so they get its actions)."""
    described = alarm_descriptions(tables.table_prefix)
    return {
        "rotation_failures": book.above(
            "RotationFailuresAlarm", tables.metric_rotation_errors(), described["rotation_failures"]
        ),
        # One-minute periods: a datapoint published at the deadline is evaluated before the boundary.
        "next_table_missing": book.above(
            "NextTableMissingAlarm", tables.metric_next_table_missing(period=Duration.minutes(1)),
            described["next_table_missing"],
        ),
        "schedule_dead_letters": book.above(
            "ScheduleDeadLettersAlarm", tables.metric_schedule_dead_letters(), described["schedule_dead_letters"]
        ),
        "function_dead_letters": book.above(
            "FunctionDeadLettersAlarm", tables.metric_function_dead_letters(), described["function_dead_letters"]
        ),
        "future_tables": book.above(
            "FuturePeriodTablesAlarm", tables.metric(RotationMetric.FUTURE_PERIOD_TABLES), described["future_tables"]
        ),
        # Minimum over an hour is above 0 only when every run of that hour found the lock held.
        "lock_held": book.above(
            "LockHeldAlarm",
            tables.metric(RotationMetric.LOCK_HELD_RUNS, statistic="Minimum", period=Duration.hours(1)),
            described["lock_held"],
            evaluation_periods=2,
        ),
        "throttles": book.above(
            "ThrottledRequestsAlarm", tables.metric_throttled_requests_in_account(), described["throttles"],
            evaluation_periods=3,
        ),
    }
