"""Entry point of the StreamArchiver function: a DynamoDB Streams batch with ReportBatchItemFailures, or a replay."""

from __future__ import annotations

import os
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._archiver import (
    DONE_PREFIX,
    ENV_FAILURE_BUCKET,
    FAILURE_PREFIX,
    StreamRecordArchiver,
    event_records,
)
from cdk_ts_runtime._errors import ValidationError

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Archive the event's ``Records``, or replay failure records.

    A stream batch returns ``batchItemFailures`` for Lambda to retry from. ``{"Operation": "replay"}``
    (optional ``Bucket``, default ``$CDK_TS_ARCHIVE_FAILURE_BUCKET``; ``Prefix``, default ``aws/lambda/``;
    ``DonePrefix``, default ``done/``) returns the replay report of
    :meth:`~cdk_ts_runtime._archiver.StreamRecordArchiver.replay`.
    """
    if not isinstance(event, dict):
        raise ValidationError(f"the event is {type(event).__name__}, not a DynamoDB Streams event or a replay request")
    archiver = StreamRecordArchiver.from_env(os.environ)
    if event.get("Operation") == "replay":
        bucket = event.get("Bucket") or _environment.read(os.environ, ENV_FAILURE_BUCKET)
        if not bucket:
            raise ValidationError(f"replay needs a Bucket in the event or {ENV_FAILURE_BUCKET} in the environment")
        return archiver.replay(
            bucket, event.get("Prefix", FAILURE_PREFIX), done_prefix=event.get("DonePrefix", DONE_PREFIX)
        )
    if "Operation" in event:
        raise ValidationError(f"unknown Operation {event['Operation']!r}; the archiver knows 'replay'")
    return archiver.archive(event_records(event))
