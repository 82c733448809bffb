"""Rotation, construct side: one DynamoDB table per period, created, resized and expired by a scheduled function.

The public names are here: ``RotatingTimeSeriesTables`` (creates the function, schedules and alarms),
``RotatingTimeSeriesTablesBase`` (what any period tables of one prefix can do: grants, ``bind``, metrics;
``from_table_prefix`` returns one for tables another stack rotates) and typed dicts of their keywords,
``RotationOptions`` and ``PeriodTableOptions`` (the layout). The ``_``-prefixed modules are the machinery:
settings checked at synth, the function, schedules and deploy-time run (``_runs``), IAM, lock table, strings
and their limits, cron fields, the metric factory (``_metrics``) and the alarms and graph made from it
(``_monitoring``). The runtime side is ``cdk_ts_runtime._rotation`` (run by
``handlers/rotation.handler``); writers and readers use ``cdk_ts_runtime.PeriodRouter``.
"""

from __future__ import annotations

from cdk_ts.rotation.base import PeriodTableOptions, RotatingTimeSeriesTablesBase
from cdk_ts.rotation.options import RotationOptions
from cdk_ts.rotation.tables import RotatingTimeSeriesTables

__all__ = [
    "PeriodTableOptions",
    "RotatingTimeSeriesTablesBase",
    "RotatingTimeSeriesTables",
    "RotationOptions",
]
