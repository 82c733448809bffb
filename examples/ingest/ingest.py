"""Example ingest function: multi-measure readings into the rotating telemetry tables, batched.

Event: ``{"readings": [{"device_id": 7, "time": "2026-03-01T12:00:00Z", "measures": {"temp": "21.5"}}, ...]}``.
Measures are stored as exact numbers (text or numbers in, Decimal out); the items a batch could not
write are returned, never dropped silently.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from cdk_ts_runtime import BatchWriteError, PeriodRouter


def _exact(value: Any) -> Any:
    """Numeric text becomes an exact Decimal; other values pass through."""
    if isinstance(value, str):
        try:
            return Decimal(value)
        except InvalidOperation:
            return value
    return value


def ingest(router: PeriodRouter, readings: list[dict[str, Any]]) -> dict[str, Any]:
    """Write every reading as one item; returns how many were written and the ones that were not."""
    unwritten: list[dict[str, Any]] = []
    try:
        with router.batch_writer() as writer:
            for reading in readings:
                when = datetime.fromisoformat(reading["time"])
                when = when if when.tzinfo else when.replace(tzinfo=UTC)
                measures = {k: _exact(v) for k, v in reading["measures"].items()}
                writer.put_measurements(reading["device_id"], when, measures)
    except BatchWriteError as error:
        unwritten = error.items
    return {"written": len(readings) - len(unwritten), "unwritten": unwritten}


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Lambda entry point; the table layout comes from ``RotatingTimeSeriesTables.bind``."""
    result = ingest(PeriodRouter.from_env(os.environ), event.get("readings", []))
    if result["unwritten"]:
        raise RuntimeError(f"{len(result['unwritten'])} reading(s) not written; the invocation is retried")
    return {"written": result["written"]}
