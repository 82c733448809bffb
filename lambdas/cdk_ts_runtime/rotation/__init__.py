"""Table rotation: the rotator (create, resize, reconcile), tier changes, expiry, and the run report."""

from cdk_ts_runtime.rotation.report import RunReport
from cdk_ts_runtime.rotation.rotator import OPERATIONS, TableRotator, scheduled_time

__all__ = ["OPERATIONS", "RunReport", "TableRotator", "scheduled_time"]
