"""Table rotation: the rotator (create, resize, reconcile), tier changes, expiry, and the run report."""

from cdk_ts_runtime.rotation.report import RotationRunError, RunReport
from cdk_ts_runtime.rotation.rotator import OPERATIONS, RotationWindowError, TableRotator, scheduled_time

__all__ = ["OPERATIONS", "RotationRunError", "RotationWindowError", "RunReport", "TableRotator", "scheduled_time"]
