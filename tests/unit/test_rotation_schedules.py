from datetime import timedelta

import pytest

from cdk_ts.rotation._schedules import after_boundary, before_boundary, check_alarm_lead
from cdk_ts_runtime.periods import RotationPeriod

MIN = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("period", "lead", "expected"),
    [
        (RotationPeriod.DAILY, 15 * MIN, {"minute": "45", "hour": "23"}),
        (RotationPeriod.DAILY, 90 * MIN, {"minute": "30", "hour": "22"}),
        (RotationPeriod.WEEKLY, 15 * MIN, {"minute": "45", "hour": "23", "week_day": "SUN"}),
        (RotationPeriod.WEEKLY, timedelta(days=2), {"minute": "0", "hour": "0", "week_day": "SAT"}),
        (RotationPeriod.MONTHLY, 15 * MIN, {"minute": "45", "hour": "23", "day": "L", "month": "*"}),
        (RotationPeriod.QUARTERLY, 15 * MIN, {"minute": "45", "hour": "23", "day": "L", "month": "3,6,9,12"}),
        (RotationPeriod.YEARLY, 60 * MIN, {"minute": "0", "hour": "23", "day": "L", "month": "12"}),
    ],
)
def test_create_schedule_fires_the_lead_before_every_boundary(period, lead, expected):
    assert before_boundary(period, lead) == expected


@pytest.mark.parametrize(
    ("period", "delay", "expected"),
    [
        (RotationPeriod.DAILY, 15 * MIN, {"minute": "15", "hour": "0"}),
        (RotationPeriod.WEEKLY, 15 * MIN, {"minute": "15", "hour": "0", "week_day": "MON"}),
        (RotationPeriod.WEEKLY, timedelta(days=1, hours=2), {"minute": "0", "hour": "2", "week_day": "TUE"}),
        (RotationPeriod.MONTHLY, 15 * MIN, {"minute": "15", "hour": "0", "day": "1", "month": "*"}),
        (RotationPeriod.QUARTERLY, 15 * MIN, {"minute": "15", "hour": "0", "day": "1", "month": "1,4,7,10"}),
        (RotationPeriod.YEARLY, timedelta(days=2), {"minute": "0", "hour": "0", "day": "3", "month": "1"}),
    ],
)
def test_resize_schedule_fires_the_delay_after_every_boundary(period, delay, expected):
    assert after_boundary(period, delay) == expected


@pytest.mark.parametrize(
    ("period", "lead", "message"),
    [
        (RotationPeriod.DAILY, timedelta(days=1), "must be shorter than a daily period"),
        (RotationPeriod.WEEKLY, timedelta(days=8), "must be shorter than a weekly period"),
        (RotationPeriod.DAILY, timedelta(seconds=30), "whole number of minutes, at least 1"),
        (RotationPeriod.DAILY, timedelta(minutes=5, seconds=30), "whole number of minutes"),
        (RotationPeriod.MONTHLY, timedelta(days=2), "must be under 1 day for a monthly rotation"),
    ],
)
def test_bad_leads_are_rejected_with_the_value_and_the_rule(period, lead, message):
    with pytest.raises(ValueError, match=message):
        before_boundary(period, lead)


def test_delays_past_the_28th_cannot_be_scheduled_for_quarters():
    with pytest.raises(ValueError, match="resize_delay 30 days, 0:00:00 must be under 28 days for a quarterly"):
        after_boundary(RotationPeriod.QUARTERLY, timedelta(days=30))


def test_the_missing_table_alarm_lead_is_named_in_its_own_errors():
    with pytest.raises(ValueError, match="missing_table_alarm_lead 0:05:30 must be a whole number of minutes"):
        before_boundary(RotationPeriod.DAILY, timedelta(minutes=5, seconds=30), "missing_table_alarm_lead")


@pytest.mark.parametrize(
    ("alarm_lead", "create_lead", "message"),
    [
        (timedelta(minutes=2), timedelta(minutes=15), "must be at least 0:03:00"),
        (timedelta(minutes=15), timedelta(minutes=15), "must be shorter than create_lead 0:15:00"),
        (timedelta(hours=1), timedelta(minutes=15), "must be shorter than create_lead"),
    ],
)
def test_the_alarm_lead_leaves_time_to_fire_and_follows_create_new(alarm_lead, create_lead, message):
    with pytest.raises(ValueError, match=message):
        check_alarm_lead(alarm_lead, create_lead)
    check_alarm_lead(timedelta(minutes=3), create_lead)  # the shortest, accepted
