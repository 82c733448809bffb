"""Entry point of the StreamArchiver function: a DynamoDB Streams batch with ReportBatchItemFailures."""

from __future__ import annotations

import os
from typing import Any

from cdk_ts_runtime.archiver import StreamRecordArchiver


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Archive the event's ``Records``; returns ``batchItemFailures`` for Lambda to retry from."""
    return StreamRecordArchiver.from_env(os.environ).archive(event.get("Records", []))
