"""The CloudWatch metrics a rotation run publishes, named once for the publisher and for the alarms that watch them.

The rotation function writes them as CloudWatch Embedded Metric Format lines (:mod:`cdk_ts_runtime._emf`);
``RotatingTimeSeriesTables.metric(...)`` reads them back, so both sides take the names and the dimension
from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from cdk_ts_runtime._emf import EmfWriter

#: The dimension every rotation metric carries; its value is the rotation's table prefix.
TABLE_PREFIX_DIMENSION = "TablePrefix"


class RotationMetric(StrEnum):
    """A metric the rotation function publishes per table prefix (unit Count)."""

    #: 1 when the next period's table does not exist yet, 0 when it does: published by every run that ends (and by
    #: a create still being retried) less than ``missing_table_alarm_seconds`` before the boundary.
    NEXT_PERIOD_TABLE_MISSING = "NextPeriodTableMissing"
    #: Tables named like this rotation's but dated after the next period; rotation leaves them alone.
    FUTURE_PERIOD_TABLES = "FuturePeriodTables"
    #: Tables named like period tables but not tagged as this rotation's; rotation never touches them.
    FOREIGN_LOOKALIKE_TABLES = "ForeignLookalikeTables"
    #: Tables a run could not bring to their target state (the run goes on with the others).
    FAILED_TABLES = "FailedTables"
    #: Tables whose TTL is on for another attribute than ``ttl_attribute``: the rotation cannot change it.
    TTL_DRIFT_TABLES = "TtlDriftTables"
    #: 1 when a run found the rotation lock held by another run and changed nothing, 0 when it took the lock.
    LOCK_HELD_RUNS = "LockHeldRuns"


def publish(metrics: EmfWriter, table_prefix: str, values: Mapping[RotationMetric, float]) -> None:
    """Write ``values`` for ``table_prefix`` as one EMF line (unit Count, dimension ``TablePrefix``).

    :param metrics: the EMF writer, whose namespace is ``RotationConfig.metric_namespace``.
    :param table_prefix: the rotation's table prefix, the value of the ``TablePrefix`` dimension.
    :param values: the value of each metric.
    """
    metrics.publish(
        {metric.value: value for metric, value in values.items()},
        dimensions={TABLE_PREFIX_DIMENSION: table_prefix},
    )
