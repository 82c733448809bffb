"""Entry point of the rotation function: scheduled ``{"Operation", "time"}`` events and the deploy-time run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import boto3

from cdk_ts_runtime._periods import scheduled_time
from cdk_ts_runtime._retries import CONTROL_PLANE, METRICS
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.rotator import TableRotator
from cdk_ts_runtime._stream_consumer import StreamConsumer
from cdk_ts_runtime.handlers import custom_resource

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery


def now() -> datetime:
    """The clock the rotation's time window is checked against (UTC)."""
    return datetime.now(UTC)


def build_rotator(env: Mapping[str, str], context: object = None) -> TableRotator:
    """The rotator for this function's environment, with boto3 clients created now (at call time).

    Control-plane clients keep the SDK's standard retries (``_retries.CONTROL_PLANE``). Metrics are EMF lines on
    stdout (no CloudWatch call); a CloudWatch client, with short timeouts (``_retries.METRICS``) so an
    unreachable endpoint never holds up table creation, is made only to read consumed capacity for right-sizing.
    With the Lambda ``context``, the run stops starting changes before the function's time runs out.

    :param env: the function's environment, usually ``os.environ``.
    :param context: the Lambda context, whose remaining time bounds the run.
        Default: None — no time limit (a run outside Lambda).
    """
    config = RotationConfig.from_env(env)
    uses_scaling = any(t.auto_scaling for t in (config.current, config.previous, config.older))
    consumer = StreamConsumer.from_env(env)
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return TableRotator.from_env(
        env,
        dynamodb=boto3.client("dynamodb", config=CONTROL_PLANE),
        autoscaling=boto3.client("application-autoscaling", config=CONTROL_PLANE) if uses_scaling else None,
        lambda_client=boto3.client("lambda", config=CONTROL_PLANE) if consumer else None,
        cloudwatch=(
            boto3.client("cloudwatch", config=METRICS)
            if config.current.right_sizing else None
        ),
        stream_consumer=consumer,
        clock=lambda: now(),
        time_left=(lambda: remaining() / 1000) if callable(remaining) else None,
    )


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Run the event's ``Operation`` at its scheduled ``time``; CloudFormation requests go to the custom resource."""
    if custom_resource.is_request(event):
        return custom_resource.handle(event, context, lambda: build_rotator(os.environ, context))
    rotator = build_rotator(os.environ, context)
    return rotator.run(event.get("Operation", ""), scheduled_time(event, clock=lambda: now()))
