"""Deprecated: moved to :mod:`cdk_ts.rotation.tables` (import ``RotatingTimeSeriesTables`` from ``cdk_ts``)."""

from __future__ import annotations

from cdk_ts._deprecated import warn_moved
from cdk_ts.rotation.tables import DEPLOY_TIME_RUN_TIMEOUT, RUN_TIMEOUT, TABLE_QUOTA, RotatingTimeSeriesTables

__all__ = ["DEPLOY_TIME_RUN_TIMEOUT", "RUN_TIMEOUT", "TABLE_QUOTA", "RotatingTimeSeriesTables"]

warn_moved("cdk_ts.rotating_tables", "cdk_ts.rotation")
