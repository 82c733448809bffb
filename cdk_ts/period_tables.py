"""Deprecated: moved to :mod:`cdk_ts.rotation.base` (import ``RotatingTimeSeriesTablesBase`` from ``cdk_ts``)."""

from __future__ import annotations

from cdk_ts._deprecated import warn_moved
from cdk_ts.rotation.base import (
    KEY_TYPES,
    LAYOUT_KEYWORDS,
    METRIC_NAMESPACE,
    PeriodTableOptions,
    PeriodTablesBase,
    layout_period,
    literal_prefix,
    table_layout,
)

__all__ = [
    "KEY_TYPES",
    "LAYOUT_KEYWORDS",
    "METRIC_NAMESPACE",
    "PeriodTableOptions",
    "PeriodTablesBase",
    "layout_period",
    "literal_prefix",
    "table_layout",
]

warn_moved("cdk_ts.period_tables", "cdk_ts.rotation")
