"""EventBridge cron fields for "a lead before" and "a delay after" every period boundary (UTC)."""

from __future__ import annotations

from datetime import timedelta

from cdk_ts_runtime.errors import ValidationError
from cdk_ts_runtime.periods import MIN_PERIOD_LENGTH, RotationPeriod

_WEEK_DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_BOUNDARY_MONTHS = {
    RotationPeriod.MONTHLY: "*",
    RotationPeriod.QUARTERLY: "1,4,7,10",
    RotationPeriod.YEARLY: "1",
}
_LAST_MONTHS = {
    RotationPeriod.MONTHLY: "*",
    RotationPeriod.QUARTERLY: "3,6,9,12",
    RotationPeriod.YEARLY: "12",
}
_DAY = timedelta(days=1)
#: The shortest missing-table alarm lead: a one-minute datapoint, then the alarm's evaluation.
MIN_ALARM_LEAD = timedelta(minutes=3)
DEFAULT_ALARM_LEAD = timedelta(minutes=5)
_MONTH_SAFE_DAYS = 28  # every month has a day 28, so 1 + delay days always exists


def validate_offset(name: str, period: RotationPeriod, offset: timedelta) -> None:
    """A lead or delay must be whole minutes, at least one, and shorter than the period."""
    if offset < timedelta(minutes=1) or offset % timedelta(minutes=1):
        raise ValidationError(f"{name} {offset} must be a whole number of minutes, at least 1")
    if offset >= MIN_PERIOD_LENGTH[period]:
        raise ValidationError(
            f"{name} {offset} must be shorter than a {period.value} period ({MIN_PERIOD_LENGTH[period]})"
        )


def before_boundary(period: RotationPeriod, lead: timedelta, name: str = "create_lead") -> dict[str, str]:
    """Cron fields firing ``lead`` before each boundary (e.g. 23:45 on the last day for a 15-minute lead).

    ``name`` is the setting an error names.
    """
    validate_offset(name, period, lead)
    minutes_before = int(lead / timedelta(minutes=1))
    if period is RotationPeriod.DAILY:
        minute_of_day = 1440 - minutes_before
        return {"minute": str(minute_of_day % 60), "hour": str(minute_of_day // 60)}
    if period is RotationPeriod.WEEKLY:
        minute_of_week = 7 * 1440 - minutes_before  # counted from Monday 00:00
        day, minute_of_day = divmod(minute_of_week, 1440)
        return {"minute": str(minute_of_day % 60), "hour": str(minute_of_day // 60), "week_day": _WEEK_DAYS[day]}
    if lead >= _DAY:
        raise ValidationError(
            f"{name} {lead} must be under 1 day for a {period.value} rotation: EventBridge cron can name the "
            "last day of a month but not a day before it. Reconcile runs still create the next table inside a "
            "longer lead window."
        )
    minute_of_day = 1440 - minutes_before
    return {
        "minute": str(minute_of_day % 60),
        "hour": str(minute_of_day // 60),
        "day": "L",
        "month": _LAST_MONTHS[period],
    }


def default_alarm_lead(create_lead: timedelta) -> timedelta:
    """5 minutes, or a minute less than ``create_lead`` when that is shorter (never under :data:`MIN_ALARM_LEAD`)."""
    return max(MIN_ALARM_LEAD, min(DEFAULT_ALARM_LEAD, create_lead - timedelta(minutes=1)))


def check_alarm_lead(alarm_lead: timedelta, create_lead: timedelta, *, given: bool = True) -> None:
    """The missing-table alarm lead leaves the alarm time to fire, and comes after the create_new run.

    A NextPeriodTableMissing datapoint is evaluated over a one-minute period, so the alarm changes state a
    minute or two after it is published: with less than :data:`MIN_ALARM_LEAD` it could fire after the
    boundary. It must also be shorter than ``create_lead``: the retry it schedules runs after create_new.
    ``given`` is False for the default, so the error names ``create_lead``, the value to change.
    """
    if not given and alarm_lead >= create_lead:
        raise ValidationError(
            f"create_lead {create_lead} leaves no time to retry a refused create and alarm before the boundary: "
            f"use a create_lead of at least {MIN_ALARM_LEAD + timedelta(minutes=1)}"
        )
    if alarm_lead < MIN_ALARM_LEAD:
        raise ValidationError(
            f"missing_table_alarm_lead {alarm_lead} must be at least {MIN_ALARM_LEAD}: the alarm needs a minute's "
            "datapoint and an evaluation to fire before the boundary"
        )
    if alarm_lead >= create_lead:
        raise ValidationError(
            f"missing_table_alarm_lead {alarm_lead} must be shorter than create_lead {create_lead}: the next table "
            "is not missing before create_new runs; lengthen create_lead or shorten the alarm lead"
        )


def after_boundary(period: RotationPeriod, delay: timedelta) -> dict[str, str]:
    """Cron fields firing ``delay`` after each boundary (e.g. 00:15 on the first day for 15 minutes)."""
    validate_offset("resize_delay", period, delay)
    minutes_after = int(delay / timedelta(minutes=1))
    day, minute_of_day = divmod(minutes_after, 1440)
    fields = {"minute": str(minute_of_day % 60), "hour": str(minute_of_day // 60)}
    if period is RotationPeriod.DAILY:
        return fields
    if period is RotationPeriod.WEEKLY:
        return {**fields, "week_day": _WEEK_DAYS[day]}
    if day + 1 > _MONTH_SAFE_DAYS:
        raise ValidationError(
            f"resize_delay {delay} must be under {_MONTH_SAFE_DAYS} days for a {period.value} rotation"
        )
    return {**fields, "day": str(day + 1), "month": _BOUNDARY_MONTHS[period]}
