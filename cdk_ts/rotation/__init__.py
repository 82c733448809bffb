"""Rotation, construct side: one DynamoDB table per period, created, resized and expired by a scheduled function.

The public names are here: ``RotatingTimeSeriesTables`` (creates the function, schedules and alarms),
``PeriodTablesBase`` (what any period tables of one prefix can do: grants, ``bind``, metrics) and
``PeriodTableOptions`` (the layout keywords). ``tables`` and ``base`` hold them; the ``_``-prefixed
modules are the machinery (IAM, lock table, strings and their limits, schedules, monitoring).
The runtime side is ``cdk_ts_runtime.rotation``.
"""

from __future__ import annotations

from cdk_ts.rotation.base import PeriodTableOptions, PeriodTablesBase
from cdk_ts.rotation.tables import RotatingTimeSeriesTables

__all__ = ["PeriodTableOptions", "PeriodTablesBase", "RotatingTimeSeriesTables"]
