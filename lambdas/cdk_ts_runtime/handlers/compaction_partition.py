"""Entry point of ArchiveCompaction's function: one SQS message of the partition queue, one partition compacted."""

from __future__ import annotations

import logging
import os
from typing import Any

from cdk_ts_runtime._compaction_fanout import PartitionMessage
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime.handlers.compaction import compactor

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery

logger = logging.getLogger(__name__)


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Compact the partition of each SQS message (the event source mapping sends one at a time).

    Returns ``batchItemFailures`` (the event source mapping's ``ReportBatchItemFailures``): a failed
    partition's message returns to the queue, then goes to its dead-letter queue; on a FIFO queue the
    messages after a failed one are returned too, so their order holds.
    """
    records = event.get("Records") if isinstance(event, dict) else None
    if not isinstance(records, list):
        raise ValidationError("the event is not an SQS event (no 'Records' list)")
    worker = compactor(CompactionSettings.from_env(os.environ))
    failures: list[dict[str, str]] = []
    for record in records:
        if failures:
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        try:
            message = PartitionMessage.parse(record["body"])
            worker.compact_partition(message.partition, now=message.planned_at)
        except Exception as error:  # noqa: BLE001 - the message's retry and dead-letter queue decide, not this loop
            logger.error("partition not compacted: %s: %s", type(error).__name__, error,
                         extra={"messageId": record.get("messageId"), "error": str(error)})
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
