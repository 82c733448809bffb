"""Entry point of the ArchiveCompaction function: a scheduled run (EventBridge ``time``) or ``{"Since": day}``."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._compaction import ArchiveCompactor
from cdk_ts_runtime._compaction_iceberg import ENV_ICEBERG, IcebergSink
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._rotation.rotator import scheduled_time

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Compact every closed partition that is due, as of the event's ``time`` (the schedule's, not the clock).

    ``Since`` (an ISO day, optional) looks further back than the lookback, e.g. after a replay of old
    failure records. Returns the run's report; a partition that failed makes the invocation fail
    (:class:`~cdk_ts_runtime._compaction.CompactionFailedError`), so Lambda retries it and then sends the
    event to the function's on-failure destination.
    """
    if not isinstance(event, dict):
        raise ValidationError(f"the event is {type(event).__name__}, not a scheduled event or {{'Since': day}}")
    settings = CompactionSettings.from_env(os.environ)
    since = None
    if event.get("Since"):
        try:
            since = datetime.fromisoformat(str(event["Since"])).replace(tzinfo=UTC)
        except ValueError:
            raise ValidationError(f"Since {event['Since']!r} is not an ISO day (e.g. 2026-03-01)") from None
    sink = IcebergSink.from_env(os.environ, settings) if _environment.read(os.environ, ENV_ICEBERG) else None
    return ArchiveCompactor(settings, sink=sink).run(now=scheduled_time(event), since=since)
