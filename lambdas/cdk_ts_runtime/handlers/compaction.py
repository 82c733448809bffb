"""Entry points of ArchiveCompaction: the scheduled planner (EventBridge ``time``, or ``{"Since": day}``) and the
partition worker (one SQS message per partition)."""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._compaction import ArchiveCompactor
from cdk_ts_runtime._compaction_fanout import ENV_QUEUE_URL, CompactionPlanner, PartitionMessage
from cdk_ts_runtime._compaction_iceberg import ENV_ICEBERG, IcebergSink
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._rotation.rotator import scheduled_time

__all__ = ["handler", "partition_handler"]  # the entry points; the rest of this module is their machinery

logger = logging.getLogger(__name__)


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Plan (or, without a partition queue, run) the compaction of every due partition, as of the event's ``time``.

    ``Since`` (an ISO day, optional) looks further back than the lookback, e.g. after a replay of old
    failure records; a day before the raw layer's retention is refused. With a partition queue
    (``CDK_TS_COMPACTION_QUEUE_URL``, set by ``ArchiveCompaction``) each due partition becomes one message
    and this invocation compacts nothing itself; without one it compacts them all, one after another.
    """
    if not isinstance(event, dict):
        raise ValidationError(f"the event is {type(event).__name__}, not a scheduled event or {{'Since': day}}")
    settings = CompactionSettings.from_env(os.environ)
    now = scheduled_time(event)
    since = None
    if event.get("Since"):
        try:
            since = datetime.fromisoformat(str(event["Since"])).replace(tzinfo=UTC)
        except ValueError:
            raise ValidationError(f"Since {event['Since']!r} is not an ISO day (e.g. 2026-03-01)") from None
        settings.check_since(since, now)
    if _environment.read(os.environ, ENV_QUEUE_URL):
        return CompactionPlanner.from_env(os.environ, settings).plan(now=now, since=since)
    return _compactor(settings).run(now=now, since=since)


def partition_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Compact the partition of each SQS message (the event source mapping sends one at a time).

    Returns ``batchItemFailures`` (the event source mapping's ``ReportBatchItemFailures``): a failed
    partition's message returns to the queue, then goes to its dead-letter queue; on a FIFO queue the
    messages after a failed one are returned too, so their order holds.
    """
    records = event.get("Records") if isinstance(event, dict) else None
    if not isinstance(records, list):
        raise ValidationError("the event is not an SQS event (no 'Records' list)")
    compactor = _compactor(CompactionSettings.from_env(os.environ))
    failures: list[dict[str, str]] = []
    for record in records:
        if failures:
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        try:
            message = PartitionMessage.parse(record["body"])
            compactor.compact_partition(message.partition, now=message.planned_at)
        except Exception as error:  # noqa: BLE001 - the message's retry and dead-letter queue decide, not this loop
            logger.error("partition not compacted: %s: %s", type(error).__name__, error,
                         extra={"messageId": record.get("messageId"), "error": str(error)})
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}


def _compactor(settings: CompactionSettings) -> ArchiveCompactor:
    sink = IcebergSink.from_env(os.environ, settings) if _environment.read(os.environ, ENV_ICEBERG) else None
    return ArchiveCompactor(settings, sink=sink)
