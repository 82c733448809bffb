"""cdk-ts: AWS CDK constructs for DynamoDB time-series and IoT data patterns.

Constructs are imported on first use, so ``cdk_ts.plan`` (pure Python) does not start the
aws_cdk runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

from lambdas.periods import RotationPeriod
from lambdas.rotation_config import AutoScaling, CapacityTier

_CONSTRUCTS = {
    "DeviceLogTable": "cdk_ts.device_log",
    "RotatingTimeSeriesTables": "cdk_ts.rotating_tables",
    "ShardMetadataTable": "cdk_ts.sharding",
    "StreamArchiver": "cdk_ts.stream_archiver",
    "TimestreamTable": "cdk_ts.timestream",
}

__all__ = ["AutoScaling", "CapacityTier", "RotationPeriod", *sorted(_CONSTRUCTS)]


def __getattr__(name: str) -> Any:
    if name in _CONSTRUCTS:
        return getattr(importlib.import_module(_CONSTRUCTS[name]), name)
    raise AttributeError(f"module 'cdk_ts' has no attribute {name!r}")
