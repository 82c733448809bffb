from datetime import UTC, datetime, timedelta, timezone

import pytest

from cdk_ts_runtime import ValidationError
from cdk_ts_runtime._periods import (
    RotationPeriod,
    label,
    next_start,
    parse_label,
    parse_table_name,
    period_start,
    scheduled_time,
    shift,
    table_name,
    validate_table_prefix,
)
from tests.support.times import utc


@pytest.mark.parametrize(
    ("period", "when", "expected_label", "expected_start", "expected_next"),
    [
        ("daily", utc(2026, 3, 1, 12), "2026-03-01", utc(2026, 3, 1), utc(2026, 3, 2)),
        ("daily", utc(2024, 2, 29, 23, 59, 59), "2024-02-29", utc(2024, 2, 29), utc(2024, 3, 1)),
        ("daily", utc(2026, 12, 31, 23, 59), "2026-12-31", utc(2026, 12, 31), utc(2027, 1, 1)),
        ("weekly", utc(2026, 3, 1), "2026-W09", utc(2026, 2, 23), utc(2026, 3, 2)),
        ("weekly", utc(2026, 12, 31), "2026-W53", utc(2026, 12, 28), utc(2027, 1, 4)),
        ("weekly", utc(2027, 1, 3), "2026-W53", utc(2026, 12, 28), utc(2027, 1, 4)),
        ("weekly", utc(2025, 12, 29), "2026-W01", utc(2025, 12, 29), utc(2026, 1, 5)),
        ("monthly", utc(2024, 2, 29, 5), "2024-02", utc(2024, 2, 1), utc(2024, 3, 1)),
        ("monthly", utc(2026, 12, 31, 23, 59), "2026-12", utc(2026, 12, 1), utc(2027, 1, 1)),
        ("quarterly", utc(2026, 3, 31, 23, 59), "2026-Q1", utc(2026, 1, 1), utc(2026, 4, 1)),
        ("quarterly", utc(2026, 11, 22), "2026-Q4", utc(2026, 10, 1), utc(2027, 1, 1)),
        ("yearly", utc(2026, 12, 31, 23, 59), "2026", utc(2026, 1, 1), utc(2027, 1, 1)),
    ],
)
def test_label_start_and_next_boundary(period, when, expected_label, expected_start, expected_next):
    assert label(period, when) == expected_label
    assert period_start(period, when) == expected_start
    assert next_start(period, when) == expected_next
    assert parse_label(period, expected_label) == expected_start


def test_period_of_a_non_utc_time_is_taken_in_utc():
    plus_two = datetime(2026, 3, 2, 1, 0, tzinfo=UTC).astimezone(timezone(timedelta(hours=2)))
    assert label("daily", plus_two) == "2026-03-02"
    eastern_evening = datetime(2026, 3, 1, 20, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert label("daily", eastern_evening) == "2026-03-02"


def test_naive_datetimes_are_rejected():
    with pytest.raises(ValueError, match="no time zone"):
        label("daily", datetime(2026, 3, 1))


@pytest.mark.parametrize("period", list(RotationPeriod))
def test_shift_walks_consecutive_periods_both_ways(period):
    start = utc(2024, 1, 1)
    walked = [shift(period, start, n) for n in range(-30, 31)]
    assert walked == sorted(set(walked))
    for earlier, later in zip(walked, walked[1:], strict=False):
        assert next_start(period, earlier) == later
        assert shift(period, later, -1) == earlier


@pytest.mark.parametrize(
    ("period", "text"),
    [
        ("daily", "2026-02-30"),
        ("daily", "2026-3-01"),
        ("weekly", "2026-W54"),
        ("weekly", "2025-W53"),  # 2025 has 52 ISO weeks
        ("weekly", "2026-W9"),
        ("monthly", "2026-13"),
        ("quarterly", "2026-Q5"),
        ("yearly", "26"),
        ("daily", "2026-03-01x"),
    ],
)
def test_invalid_labels_do_not_parse(period, text):
    assert parse_label(period, text) is None


def test_table_names_parse_only_for_their_own_prefix_and_period():
    when = utc(2026, 3, 1)
    assert table_name("telemetry", "daily", when) == "telemetry_2026-03-01"
    assert parse_table_name("telemetry", "daily", "telemetry_2026-03-01") == when
    assert parse_table_name("telemetry", "daily", "telemetry_x_2026-03-01") is None
    assert parse_table_name("telemetry", "daily", "telemetry2_2026-03-01") is None
    assert parse_table_name("telemetry", "monthly", "telemetry_2026-03-01") is None


def test_unknown_period_is_a_clear_error():
    with pytest.raises(ValueError, match="period 'hourly' is not one of: daily, weekly"):
        RotationPeriod.parse("hourly")


@pytest.mark.parametrize("prefix", ["", "has space", "x" * 245, "ünïcode"])
def test_prefixes_that_cannot_make_valid_table_names_are_rejected(prefix):
    with pytest.raises(ValueError, match="table_prefix"):
        validate_table_prefix(prefix, "daily")


def test_longest_valid_prefix_is_accepted():
    validate_table_prefix("x" * 244, "daily")
    validate_table_prefix("x" * 250, "yearly")


@pytest.mark.parametrize("period", list(RotationPeriod))
@pytest.mark.parametrize(
    "when",
    [datetime(999, 12, 1, tzinfo=UTC), datetime.min.replace(tzinfo=UTC),
     datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5)))],
    ids=["year-999", "datetime.min", "past-9999-in-utc"],
)
def test_a_time_no_table_name_can_hold_is_refused_not_labelled(period, when):
    for name_of in (lambda: table_name("readings", period, when), lambda: period_start(period, when)):
        with pytest.raises(ValidationError, match="outside the years"):
            name_of()


@pytest.mark.parametrize("period", list(RotationPeriod))
@pytest.mark.parametrize("count", [1, 10**6, 10**30])
def test_shifting_past_the_year_9999_is_a_clear_error_not_an_overflow(period, count):
    last = datetime.max.replace(tzinfo=UTC)
    assert parse_table_name("readings", period, table_name("readings", period, last)) == period_start(period, last)
    with pytest.raises(ValidationError, match="outside the years 1000-9999"):
        shift(period, last, count)
    with pytest.raises(ValidationError, match="outside the years 1000-9999"):
        shift(period, datetime(1000, 1, 1, tzinfo=UTC), -count)


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"time": "2026-03-01T23:45:00Z"}, datetime(2026, 3, 1, 23, 45, tzinfo=UTC)),
        ({"time": "2026-03-02T01:45:00+02:00"}, datetime(2026, 3, 1, 23, 45, tzinfo=UTC)),
        ({"time": "2026-03-01T23:45:00"}, datetime(2026, 3, 1, 23, 45, tzinfo=UTC)),  # no zone: UTC
        ({"Operation": "reconcile"}, datetime(2030, 1, 1, tzinfo=UTC)),  # no time: the clock's
    ],
)
def test_a_scheduled_run_s_time_is_the_event_s_in_utc_and_the_clock_s_only_without_one(event, expected):
    assert scheduled_time(event, clock=lambda: datetime(2030, 1, 1, tzinfo=UTC)) == expected


def test_a_scheduled_time_that_is_not_iso_8601_is_refused_naming_it():
    with pytest.raises(ValidationError, match=r"event time 'yesterday' is not ISO-8601 \(e.g. 2026-03-01T23:45:00Z\)"):
        scheduled_time({"time": "yesterday"})
