"""Entry point of the rotation function: scheduled ``{"Operation", "time"}`` events and the deploy-time run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import boto3

from cdk_ts_runtime.handlers import custom_resource
from cdk_ts_runtime.rotation import TableRotator, scheduled_time
from cdk_ts_runtime.rotation_config import RotationConfig
from cdk_ts_runtime.stream_consumer import StreamConsumer
from cdk_ts_runtime.table_layout import TableLayout


def now() -> datetime:
    """The clock the rotation's time window is checked against (UTC)."""
    return datetime.now(UTC)


def build_rotator(env: Mapping[str, str]) -> TableRotator:
    """The rotator for this function's environment, with boto3 clients created now (at call time)."""
    config = RotationConfig.from_env(env)
    uses_scaling = any(t.auto_scaling for t in (config.current, config.previous, config.older))
    consumer = StreamConsumer.from_env(env)
    return TableRotator(
        TableLayout.from_env(env),
        config,
        dynamodb=boto3.client("dynamodb"),
        autoscaling=boto3.client("application-autoscaling") if uses_scaling else None,
        lambda_client=boto3.client("lambda") if consumer else None,
        cloudwatch=boto3.client("cloudwatch") if config.metric_namespace or config.current.right_sizing else None,
        stream_consumer=consumer,
        clock=lambda: now(),
    )


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Run the event's ``Operation`` at its scheduled ``time``; CloudFormation requests go to the custom resource."""
    if custom_resource.is_request(event):
        return custom_resource.handle(event, context, lambda: build_rotator(os.environ))
    return build_rotator(os.environ).run(event.get("Operation", ""), scheduled_time(event, clock=lambda: now()))
