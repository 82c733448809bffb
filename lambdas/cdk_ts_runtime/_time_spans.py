"""ISO 8601 times as the spans they mean, and the sort-key text of the device log.

ISO 8601 gives a time to the precision it was written in: ``2026-03-10T12`` is the hour from 12:00 to
13:00, ``2026-W11`` a week, ``2026-03-10T12:00:00.5`` a tenth of a second. :func:`time_span` keeps that
span instead of reading every time as one second. Calendar (``2026-03-10``), ordinal (``2026-069``) and
week dates (``2026-W11-2``), basic (``20260310T1200Z``) and extended formats, reduced precision down to
the year, decimal fractions of a second and zone designators are read; what else ISO 8601 allows
(fractions of an hour or minute, ``24:00``, expanded years, durations) is refused, never guessed.

Stored text (:func:`instant_text`): ``YYYY-MM-DDTHH:MM:SS`` in UTC, then ``.`` and the fraction of
the second with trailing zeros dropped, when there is one. Without a fraction it is exactly what
earlier versions stored, and string order is time order across both: a whole second is a prefix of
its fractional moments, and ``.`` sorts before every digit, so ``…T12:00:00`` < ``…T12:00:00.123`` <
``…T12:00:01``. (A ``Z`` suffix would break this: ``…T12:00:00Z`` sorts after ``…T12:00:00.123Z``.)
"""

from __future__ import annotations

import re
from calendar import monthrange
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from cdk_ts_runtime._errors import ValidationError

#: The finest fraction of a second kept (nanoseconds): a finer one is refused rather than cut.
MAX_FRACTION_DIGITS = 9
_NANOS = 10**MAX_FRACTION_DIGITS

_DATE = re.compile(
    r"(?P<year>\d{4})(?:"
    r"-(?P<month>\d{2})(?:-(?P<day>\d{2}))?"  # 2026-03-10, 2026-03
    r"|(?P<bmonth>\d{2})(?P<bday>\d{2})"  # 20260310
    r"|-?W(?P<week>\d{2})(?:-?(?P<weekday>\d))?"  # 2026-W11-2, 2026W112, 2026-W11
    r"|-?(?P<ordinal>\d{3})"  # 2026-069, 2026069
    r")?"
)
_TIME = re.compile(
    r"(?P<hour>\d{2})(?::?(?P<minute>\d{2})(?::?(?P<second>\d{2}))?)?"
    r"(?:[.,](?P<fraction>\d+))?"
    r"(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TimeSpan:
    """The UTC span an ISO 8601 time covers, from ``start`` up to (not including) ``start + length``.

    :param start: the first second of the span, naive UTC.
    :param start_nanos: nanoseconds after ``start`` where the span begins.
    :param unit: what the value was given to, one of ``year``, ``month``, ``week``, ``day``,
        ``hour``, ``minute``, ``second`` or ``fraction``.
    :param last: the span's last second, naive UTC (``start`` itself for a second or a fraction).
    :param last_nanos: nanoseconds after ``last`` of the span's last nanosecond.
    """

    start: datetime
    start_nanos: int
    unit: str
    last: datetime
    last_nanos: int

    @property
    def is_moment(self) -> bool:
        """True when the value was given to the second or finer: it names one log entry's time."""
        return self.unit in ("second", "fraction")

    @property
    def first_text(self) -> str:
        """The stored text of the span's first moment: the lowest key the span covers."""
        return instant_text(self.start, self.start_nanos)

    @property
    def last_text(self) -> str:
        """Text that every stored time inside the span sorts at or below, and every later one above.

        The last nanosecond with all nine digits: a stored time drops trailing zeros, so it is a
        prefix of (or equal to) this padded form when it lies inside the span.
        """
        return f"{self.last.isoformat()}.{self.last_nanos:0{MAX_FRACTION_DIGITS}d}"


def instant_text(second: datetime, nanos: int = 0) -> str:
    """``YYYY-MM-DDTHH:MM:SS[.f…]`` for a naive UTC second plus nanoseconds; trailing zeros dropped.

    :param second: the second, naive UTC (microseconds are ignored).
    :param nanos: nanoseconds after ``second``.
        Default: 0 — the whole second, written without a fraction.
    """
    text = second.replace(microsecond=0).isoformat()
    return f"{text}.{nanos:0{MAX_FRACTION_DIGITS}d}".rstrip("0") if nanos else text


def time_span(value: str | datetime | date) -> TimeSpan:
    """The span ``value`` covers in UTC: a ``date`` is its day, a ``datetime`` its microsecond.

    A naive ``datetime`` and a text without a zone designator are taken as UTC.

    :param value: ISO 8601 text, a ``date`` or a ``datetime``.
    :raises ValueError: naming the value and what is wrong with it (not ISO 8601, a form that is
        not read here, out of range); a :class:`~cdk_ts_runtime.ValidationError`.
    """
    try:
        if isinstance(value, datetime):
            moment = value.astimezone(UTC).replace(tzinfo=None) if value.utcoffset() is not None else value
            nanos = moment.microsecond * 1000
            return _span(moment.replace(microsecond=0), nanos, "fraction", nanos + 999)
        if isinstance(value, date):
            return _calendar_span(value, "day")
        if isinstance(value, str):
            return _text_span(value.strip(), value)
    except OverflowError:
        raise ValidationError(f"date {value!r} is out of range once converted to UTC") from None
    raise ValidationError(f"date {value!r} is not ISO-8601 text, a date or a datetime")


def _text_span(text: str, value: str) -> TimeSpan:
    # Date parts never hold a T or a space: the first one starts the time of day.
    cut = next((i for i, char in enumerate(text) if char in "Tt "), None)
    date_text, time_text = (text, None) if cut is None else (text[:cut], text[cut + 1 :])
    match = _DATE.fullmatch(date_text)
    if not match or time_text == "":
        raise _not_iso(value)
    day, unit = _date_of(match, value)
    if time_text is None:
        return _calendar_span(day, unit)
    if unit != "day":
        raise ValidationError(f"date {value!r}: a time of day needs a whole date before it (e.g. 2026-03-10T12:00)")
    clock = _TIME.fullmatch(time_text)
    if not clock:
        raise _not_iso(value)
    return _clock_span(day, clock, value)


def _date_of(match: re.Match[str], value: str) -> tuple[date, str]:
    year = int(match["year"])
    try:
        if match["week"]:
            monday = date.fromisocalendar(year, int(match["week"]), 1)
            if match["weekday"] is None:
                return monday, "week"
            return date.fromisocalendar(year, int(match["week"]), int(match["weekday"])), "day"
        if match["ordinal"]:
            ordinal = int(match["ordinal"])
            if not 1 <= ordinal <= (366 if monthrange(year, 2)[1] == 29 else 365):
                raise ValidationError(f"day {ordinal} of {year} does not exist")
            return date(year, 1, 1) + timedelta(days=ordinal - 1), "day"
        month, day = match["month"] or match["bmonth"], match["day"] or match["bday"]
        if month is None:
            return date(year, 1, 1), "year"
        if day is None:
            return date(year, int(month), 1), "month"
        return date(year, int(month), int(day)), "day"
    except ValueError as error:
        raise ValidationError(f"date {value!r} is not a calendar date: {error}") from None


def _clock_span(day: date, clock: re.Match[str], value: str) -> TimeSpan:
    hour, minute, second = int(clock["hour"]), int(clock["minute"] or 0), int(clock["second"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValidationError(
            f"date {value!r} has no such time of day (24:00 and leap seconds are not read: use 00:00 of the next day)"
        )
    fraction = clock["fraction"]
    if fraction is not None and clock["second"] is None:
        raise ValidationError(
            f"date {value!r} has a decimal fraction of an hour or minute, which is not read: give seconds instead"
        )
    if fraction is not None and len(fraction) > MAX_FRACTION_DIGITS:
        raise ValidationError(
            f"date {value!r} has {len(fraction)} fraction digits; at most {MAX_FRACTION_DIGITS} (nanoseconds) are kept"
        )
    local = datetime(day.year, day.month, day.day, hour, minute, second)
    start = local - _offset(clock["zone"], value)
    if fraction is not None:
        nanos = int(fraction.ljust(MAX_FRACTION_DIGITS, "0"))
        return _span(start, nanos, "fraction", nanos + 10 ** (MAX_FRACTION_DIGITS - len(fraction)) - 1)
    unit = "second" if clock["second"] else "minute" if clock["minute"] else "hour"
    length = {"second": timedelta(seconds=1), "minute": timedelta(minutes=1), "hour": timedelta(hours=1)}[unit]
    return _span(start, 0, unit, int(length.total_seconds()) * _NANOS - 1)


def _offset(zone: str | None, value: str) -> timedelta:
    if zone is None or zone.upper() == "Z":
        return timedelta(0)
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:] or 0)
    if hours > 23 or minutes > 59:
        raise ValidationError(f"date {value!r} has no such UTC offset {zone!r}")
    offset = timedelta(hours=hours, minutes=minutes)
    return -offset if zone[0] == "-" else offset


def _calendar_span(first: date, unit: str) -> TimeSpan:
    start = datetime(first.year, first.month, first.day)
    if unit == "year":
        last_day = date(first.year, 12, 31)
    elif unit == "month":
        last_day = date(first.year, first.month, monthrange(first.year, first.month)[1])
    else:
        last_day = first + timedelta(days=6 if unit == "week" else 0)
    last = datetime(last_day.year, last_day.month, last_day.day, 23, 59, 59)
    return TimeSpan(start, 0, unit, last, _NANOS - 1)


def _span(start: datetime, start_nanos: int, unit: str, last_offset_nanos: int) -> TimeSpan:
    """A span from ``start`` + ``start_nanos`` whose last nanosecond is ``last_offset_nanos`` after ``start``."""
    seconds, nanos = divmod(last_offset_nanos, _NANOS)
    return TimeSpan(start, start_nanos, unit, start + timedelta(seconds=seconds), nanos)


def _not_iso(value: str) -> ValidationError:
    return ValidationError(
        f"date {value!r} is not ISO-8601 (e.g. 2020-04-24T14:40:00, 2020-04-24T14:40:00.250Z, 2020-04-24, "
        "20200424T1440Z or 2020-W17-5)"
    )
