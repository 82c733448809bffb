"""Times as the tests write them: UTC datetimes and the millisecond sort values of the default layout."""

from __future__ import annotations

from datetime import UTC, datetime

from cdk_ts_runtime import TableLayout


def utc(*args) -> datetime:
    """``datetime(*args)`` in UTC: ``utc(2026, 3, 1, 23, 45)``."""
    return datetime(*args, tzinfo=UTC)


def ms(when: datetime) -> int:
    """``when`` as a Number sort key of the default layout holds it: milliseconds since the epoch."""
    return TableLayout("x").sort_value(when)
