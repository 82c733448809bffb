"""cdk-ts: AWS CDK constructs for DynamoDB time-series and IoT data patterns.

Constructs are imported on first use, so ``cdk_ts.plan`` (pure Python) does not start the
aws_cdk runtime. The runtime clients users' functions import live in ``cdk_ts_runtime``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cdk_ts_runtime.periods import RotationPeriod
from cdk_ts_runtime.rotation_config import AutoScaling, CapacityTier

if TYPE_CHECKING:  # editors and type checkers see the real classes; at run time they load lazily
    from cdk_ts.device_log import DeviceLogTable
    from cdk_ts.monitoring import MonitoringDashboard
    from cdk_ts.rotating_tables import RotatingTimeSeriesTables
    from cdk_ts.runtime_layer import RuntimeLayer
    from cdk_ts.sharding import ShardMetadataTable
    from cdk_ts.stream_archiver import TTL_DELETIONS_ONLY, FailureDestination, StreamArchiver
    from cdk_ts.timestream import TimestreamTable

_LAZY = {
    "DeviceLogTable": "cdk_ts.device_log",
    "MonitoringDashboard": "cdk_ts.monitoring",
    "RotatingTimeSeriesTables": "cdk_ts.rotating_tables",
    "RuntimeLayer": "cdk_ts.runtime_layer",
    "ShardMetadataTable": "cdk_ts.sharding",
    "StreamArchiver": "cdk_ts.stream_archiver",
    "FailureDestination": "cdk_ts.stream_archiver",
    "TTL_DELETIONS_ONLY": "cdk_ts.stream_archiver",
    "TimestreamTable": "cdk_ts.timestream",
}

__version__ = "0.2.0"
__all__ = [
    "TTL_DELETIONS_ONLY",
    "AutoScaling",
    "CapacityTier",
    "DeviceLogTable",
    "FailureDestination",
    "MonitoringDashboard",
    "RotatingTimeSeriesTables",
    "RotationPeriod",
    "RuntimeLayer",
    "ShardMetadataTable",
    "StreamArchiver",
    "TimestreamTable",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'cdk_ts' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
