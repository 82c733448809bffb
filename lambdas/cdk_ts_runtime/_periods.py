"""Rotation periods: UTC boundaries, table labels and table names (pure functions, stdlib only).

A period is a half-open UTC interval ``[start, next_start)``. Every function here works on
timezone-aware datetimes; a naive datetime is rejected rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any

from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import MAX_YEAR, MIN_YEAR, whole

TABLE_NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")
TABLE_NAME_MIN, TABLE_NAME_MAX = 3, 255


class RotationPeriod(StrEnum):
    """How long one period table covers. Boundaries are UTC; weeks are ISO weeks (Monday start)."""

    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    QUARTERLY = "quarterly"
    YEARLY = "yearly"

    @classmethod
    def parse(cls, value: RotationPeriod | str) -> RotationPeriod:
        """Accept an enum member or its value (``"daily"``), case-insensitively."""
        if isinstance(value, RotationPeriod):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            choices = ", ".join(p.value for p in cls)
            raise ValidationError(f"period {value!r} is not one of: {choices}") from None


_LABEL_PATTERNS = {
    RotationPeriod.DAILY: re.compile(r"(\d{4})-(\d{2})-(\d{2})"),
    RotationPeriod.WEEKLY: re.compile(r"(\d{4})-W(\d{2})"),
    RotationPeriod.MONTHLY: re.compile(r"(\d{4})-(\d{2})"),
    RotationPeriod.QUARTERLY: re.compile(r"(\d{4})-Q([1-4])"),
    RotationPeriod.YEARLY: re.compile(r"(\d{4})"),
}

#: The longest label each period produces; constructs use it to validate prefixes.
LABEL_LENGTH = {
    RotationPeriod.DAILY: 10,
    RotationPeriod.WEEKLY: 8,
    RotationPeriod.MONTHLY: 7,
    RotationPeriod.QUARTERLY: 7,
    RotationPeriod.YEARLY: 4,
}

#: Each period's label as an IAM/S3 resource pattern: ``?`` matches exactly one character.
LABEL_GLOB = {
    RotationPeriod.DAILY: "????-??-??",
    RotationPeriod.WEEKLY: "????-W??",
    RotationPeriod.MONTHLY: "????-??",
    RotationPeriod.QUARTERLY: "????-Q?",
    RotationPeriod.YEARLY: "????",
}

#: The shortest a period can be; leads and delays must stay below it.
MIN_PERIOD_LENGTH = {
    RotationPeriod.DAILY: timedelta(days=1),
    RotationPeriod.WEEKLY: timedelta(days=7),
    RotationPeriod.MONTHLY: timedelta(days=28),
    RotationPeriod.QUARTERLY: timedelta(days=90),
    RotationPeriod.YEARLY: timedelta(days=365),
}


def require_utc(when: datetime) -> datetime:
    """Return ``when`` converted to UTC; a naive datetime is an error, not a guess."""
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValidationError(f"datetime {when.isoformat()} has no time zone; pass an aware datetime (UTC)")
    try:
        return when.astimezone(UTC)
    except OverflowError:
        raise ValidationError(f"datetime {when.isoformat()} is outside the years 1-9999 in UTC") from None


def period_start(period: RotationPeriod | str, when: datetime) -> datetime:
    """Start (inclusive, UTC midnight) of the period that contains ``when``.

    :raises ValueError: for a naive ``when``, or one in a period whose label's year is outside 1000-9999 (a
        label holds four digits; the first days of a week may lie in the year before its label's).
    """
    period = RotationPeriod.parse(period)
    day = require_utc(when).date()
    if period is RotationPeriod.DAILY:
        start = day
    elif period is RotationPeriod.WEEKLY:
        start = day - timedelta(days=day.weekday())
    elif period is RotationPeriod.MONTHLY:
        start = day.replace(day=1)
    elif period is RotationPeriod.QUARTERLY:
        start = date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)
    else:
        start = date(day.year, 1, 1)
    if not MIN_YEAR <= label_year(period, start) <= MAX_YEAR:
        raise ValidationError(
            f"when {when.isoformat()} is outside the years {MIN_YEAR}-{MAX_YEAR} that period table names hold "
            "(four-digit years)"
        )
    return datetime(start.year, start.month, start.day, tzinfo=UTC)


def shift(period: RotationPeriod | str, start: datetime, count: int) -> datetime:
    """The start of the period ``count`` periods after (negative: before) the one containing ``start``."""
    period = RotationPeriod.parse(period)
    whole("count", count, minimum=None)
    start = period_start(period, start)
    try:
        if period is RotationPeriod.DAILY:
            shifted = start + timedelta(days=count)
        elif period is RotationPeriod.WEEKLY:
            shifted = start + timedelta(weeks=count)
        else:
            months = {RotationPeriod.MONTHLY: 1, RotationPeriod.QUARTERLY: 3, RotationPeriod.YEARLY: 12}[period]
            index = start.year * 12 + (start.month - 1) + count * months
            shifted = datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)
    except (OverflowError, ValueError):
        shifted = None
    if shifted is None or not MIN_YEAR <= label_year(period, shifted) <= MAX_YEAR:
        raise ValidationError(
            f"the {period.value} period {count:+d} from the one of {start.date().isoformat()} is outside the years "
            f"{MIN_YEAR}-{MAX_YEAR} that period table names hold"
        )
    return shifted


def label_year(period: RotationPeriod | str, start: datetime) -> int:
    """The year a period's label shows: the ISO year for a week (its first days may lie in the year before)."""
    return start.isocalendar()[0] if RotationPeriod.parse(period) is RotationPeriod.WEEKLY else start.year


def next_start(period: RotationPeriod | str, when: datetime) -> datetime:
    """Start of the period after the one containing ``when`` (the next boundary)."""
    return shift(period, when, 1)


def label(period: RotationPeriod | str, when: datetime) -> str:
    """Label of the period containing ``when``: ``2026-03-01``, ``2026-W09``, ``2026-03``, ``2026-Q1``, ``2026``."""
    period = RotationPeriod.parse(period)
    start = period_start(period, when)
    if period is RotationPeriod.DAILY:
        return start.strftime("%Y-%m-%d")
    if period is RotationPeriod.WEEKLY:
        year, week, _ = start.isocalendar()
        return f"{year:04d}-W{week:02d}"
    if period is RotationPeriod.MONTHLY:
        return start.strftime("%Y-%m")
    if period is RotationPeriod.QUARTERLY:
        return f"{start.year:04d}-Q{(start.month - 1) // 3 + 1}"
    return f"{start.year:04d}"


def parse_label(period: RotationPeriod | str, text: str) -> datetime | None:
    """Start of the period a label names, or ``None`` when ``text`` is not a valid label of ``period``.

    Only the canonical form is accepted (``2026-W09``, not ``2026-W9``), so a label round-trips.
    """
    period = RotationPeriod.parse(period)
    match = _LABEL_PATTERNS[period].fullmatch(text)
    if not match:
        return None
    parts = [int(p) for p in match.groups()]
    try:
        if period is RotationPeriod.DAILY:
            start = datetime(parts[0], parts[1], parts[2], tzinfo=UTC)
        elif period is RotationPeriod.WEEKLY:
            start = datetime.fromisocalendar(parts[0], parts[1], 1).replace(tzinfo=UTC)
        elif period is RotationPeriod.MONTHLY:
            start = datetime(parts[0], parts[1], 1, tzinfo=UTC)
        elif period is RotationPeriod.QUARTERLY:
            start = datetime(parts[0], 3 * (parts[1] - 1) + 1, 1, tzinfo=UTC)
        else:
            start = datetime(parts[0], 1, 1, tzinfo=UTC)
    except ValueError:
        return None
    return start if label(period, start) == text else None


def table_name(prefix: str, period: RotationPeriod | str, when: datetime) -> str:
    """Name of the period table that holds ``when``: ``{prefix}_{label}``."""
    return f"{prefix}_{label(period, when)}"


def parse_table_name(prefix: str, period: RotationPeriod | str, name: str) -> datetime | None:
    """Period start of a table named ``{prefix}_{label}``, or ``None`` for any other name."""
    head = f"{prefix}_"
    if not name.startswith(head):
        return None
    return parse_label(period, name[len(head) :])


def validate_table_prefix(prefix: str, period: RotationPeriod | str) -> None:
    """Raise ``ValueError`` unless every ``{prefix}_{label}`` is a valid DynamoDB table name."""
    period = RotationPeriod.parse(period)
    longest = f"{prefix}_{'0' * LABEL_LENGTH[period]}"
    if not prefix or not TABLE_NAME_PATTERN.fullmatch(prefix) or len(longest) > TABLE_NAME_MAX:
        limit = TABLE_NAME_MAX - LABEL_LENGTH[period] - 1
        raise ValidationError(
            f"table_prefix {prefix!r} gives table names like {longest!r}; a {period.value} prefix needs "
            f"1-{limit} characters of [A-Za-z0-9_.-]"
        )


def table_name_glob(prefix: str, period: RotationPeriod | str) -> str:
    """An IAM resource pattern matching this rotation's table names only: ``readings_????-??-??`` for daily.

    Unlike ``readings_*`` it does not match another rotation's ``readings_eu_2026-01-01``.
    """
    return f"{prefix}_{LABEL_GLOB[RotationPeriod.parse(period)]}"


def globs_overlap(first: str, second: str) -> bool:
    """True when some name matches both patterns (made of literal characters and ``?`` only)."""
    return len(first) == len(second) and all(a == b or "?" in (a, b) for a, b in zip(first, second, strict=True))


def scheduled_time(event: Mapping[str, Any], clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> datetime:
    """The event's ``time`` (EventBridge's scheduled time) as aware UTC; the clock only when it is absent.

    What every scheduled function (the rotation, the compaction's planner) takes its reference time from, so
    retries and delays do not change which table or partition it acts on.

    :param event: the scheduled event, with ``Operation`` and ``time``.
    :param clock: returns the current time when the event has none.
        Default: the current UTC time.
    :raises ValueError: when ``time`` is not ISO-8601.
    """
    raw = event.get("time")
    if not raw:
        return clock()
    try:
        parsed = datetime.fromisoformat(str(raw))
    except ValueError:
        raise ValidationError(f"event time {raw!r} is not ISO-8601 (e.g. 2026-03-01T23:45:00Z)") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
