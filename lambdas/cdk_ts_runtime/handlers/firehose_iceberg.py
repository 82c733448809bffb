"""Entry point of IcebergTableSink's Firehose transformation: DynamoDB changes in, routed Iceberg rows out."""

from __future__ import annotations

import os
from typing import Any

from cdk_ts_runtime._firehose_iceberg import FirehoseIcebergTransform

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Answer Firehose's batch: each record ``Ok`` with its row and ``otfMetadata``, or ``ProcessingFailed``."""
    return FirehoseIcebergTransform.from_env(os.environ).transform(event)
