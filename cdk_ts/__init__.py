"""cdk-ts: AWS CDK constructs for DynamoDB time-series and IoT data patterns."""

from lambdas.periods import RotationPeriod

__all__ = ["RotationPeriod"]
