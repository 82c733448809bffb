"""Sort keys as times: an item's time from its sort-key value, and the time window a sort-key condition bounds.

A sharded table whose sort key is an event time (``sort_key_time_unit``: epoch ``"s"`` or ``"ms"`` numbers, or
``"iso"`` ISO 8601 text in one format, UTC) writes each item to the shards in force at its time and reads a
window from the shards in force over it. A condition whose bound is not a time (an ISO prefix that is not a
whole year, month, day, hour, minute or second) bounds nothing: every shard is read, as before.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from cdk_ts_runtime._errors import ValidationError

TIME_UNITS = ("s", "ms", "iso")

#: ISO 8601 prefixes that name one whole span, with the span's length (months and years are measured by date).
_PREFIXES = (
    (re.compile(r"\d{4}"), "year"),
    (re.compile(r"\d{4}-\d{2}"), "month"),
    (re.compile(r"\d{4}-\d{2}-\d{2}"), timedelta(days=1)),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}"), timedelta(hours=1)),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}"), timedelta(minutes=1)),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}"), timedelta(seconds=1)),
)


def time_of(value: Any, unit: str) -> float | None:
    """Epoch seconds of a sort-key value in ``unit``; None when it is not a time of that unit."""
    if unit in ("s", "ms"):
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal) or not math.isfinite(value):
            return None
        return float(value) / (1000 if unit == "ms" else 1)
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def item_time(value: Any, unit: str, name: str) -> float:
    """Epoch seconds of an item's sort-key value; a value that is no time of ``unit`` is an error naming it."""
    at = time_of(value, unit)
    if at is None:
        shown = "ISO 8601 text" if unit == "iso" else f"an epoch number in {unit}"
        raise ValidationError(
            f"item {name}={value!r} is not {shown} (sort_key_time_unit={unit!r}); write event times, or give "
            f"the table another sort_key_time_unit"
        )
    return at


def window(condition: dict[str, Any], unit: str) -> tuple[float, float]:
    """The times ``(low, high)`` every item matching ``condition`` lies in; ``(-inf, inf)`` when unbounded."""
    if not condition:
        return -math.inf, math.inf
    ((name, value),) = condition.items()
    if name == "between":
        low, high = time_of(value[0], unit), time_of(value[1], unit)
        return (-math.inf if low is None else low), (math.inf if high is None else high)
    if name == "begins_with":
        return _prefix_span(value) if unit == "iso" else (-math.inf, math.inf)
    at = time_of(value, unit)
    if at is None:
        return -math.inf, math.inf
    if name == "eq":
        return at, at
    return (-math.inf, at) if name in ("lt", "lte") else (at, math.inf)


def _prefix_span(prefix: Any) -> tuple[float, float]:
    """The span an ISO prefix names (``2026-03`` is March), or unbounded for any other prefix."""
    for pattern, length in _PREFIXES:
        if isinstance(prefix, str) and pattern.fullmatch(prefix):
            padded = prefix + "0000-01-01T00:00:00"[len(prefix):]
            try:
                start = datetime.fromisoformat(padded).replace(tzinfo=UTC)
            except ValueError:
                return -math.inf, math.inf
            if length == "year":
                end = start.replace(year=start.year + 1) if start.year < 9999 else datetime.max.replace(tzinfo=UTC)
            elif length == "month":
                end = start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
            else:
                end = start + length
            # the prefix matches texts up to (not including) the next span's start; a second's fraction included
            return start.timestamp(), end.timestamp() - 1e-6
    return -math.inf, math.inf


def sort_value(epoch: float, unit: str) -> Any:
    """The sort-key value of ``epoch`` in ``unit``, for a key condition on a time window."""
    if unit == "s":
        return Decimal(str(math.floor(epoch)))
    if unit == "ms":
        return Decimal(str(math.floor(epoch * 1000)))
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S")
