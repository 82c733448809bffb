"""Entry point of ArchiveCompaction's planner: a scheduled run (EventBridge ``time``) or ``{"Since": day}``.

The partitions it plans are compacted by :mod:`cdk_ts_runtime.handlers.compaction_partition`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._compaction import ArchiveCompactor
from cdk_ts_runtime._compaction_fanout import ENV_QUEUE_URL, CompactionPlanner
from cdk_ts_runtime._compaction_iceberg import ENV_ICEBERG, IcebergSink
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._periods import scheduled_time

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery


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
    return compactor(settings).run(now=now, since=since)


def compactor(settings: CompactionSettings) -> ArchiveCompactor:
    """The compactor the function's environment describes (Parquet + Glue, or the Iceberg sink)."""
    sink = IcebergSink.from_env(os.environ, settings) if _environment.read(os.environ, ENV_ICEBERG) else None
    return ArchiveCompactor(settings, sink=sink)
