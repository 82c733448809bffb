"""cdk-ts: AWS CDK constructs for DynamoDB time-series and IoT data patterns."""

from cdk_ts.device_log import DeviceLogTable
from cdk_ts.rotating_tables import RotatingTimeSeriesTables
from cdk_ts.sharding import ShardMetadataTable
from cdk_ts.stream_archiver import StreamArchiver
from lambdas.periods import RotationPeriod
from lambdas.rotation_config import AutoScaling, CapacityTier

__all__ = [
    "AutoScaling",
    "CapacityTier",
    "DeviceLogTable",
    "RotatingTimeSeriesTables",
    "RotationPeriod",
    "ShardMetadataTable",
    "StreamArchiver",
]
