"""Device-log times mean what ISO 8601 says: moments keep their fraction, reduced precision covers its span.

Every test runs on moto, moto_server and dynalite (``any_dynamodb``): the bounds are key conditions, and
what they include is decided by the engine's string order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cdk_ts_runtime import DeviceLogRepository
from tests.support.device_log import create_device_log_table


@pytest.fixture
def log(any_dynamodb, unique_name):
    create_device_log_table(any_dynamodb, unique_name)
    return DeviceLogRepository(unique_name, dynamodb_client=any_dynamodb, page_size=3)


def stored_items(log):
    """Every item of the table, read with Scan: what was written, whatever the access patterns return."""
    pages = log.dynamodb.get_paginator("scan").paginate(TableName=log.table_name, ConsistentRead=True)
    return [{k: next(iter(v.values())) for k, v in item.items()} for page in pages for item in page["Items"]]


def put_as_earlier_versions_did(log, device, state, when, **extra):
    """An item as versions before sub-second keys wrote it: ``State#Date`` to the whole second, no condition."""
    item = {"DeviceID": device, "State#Date": f"{state}#{when}", "State": state, "Date": when, **extra}
    log.dynamodb.put_item(TableName=log.table_name, Item={k: {"S": v} for k, v in item.items()})


@pytest.mark.parametrize(
    "moments",
    [
        ["2026-03-10T12:00:00", "2026-03-10T12:00:00.1", "2026-03-10T12:00:00.25", "2026-03-10T12:00:00.999999999"],
        ["2026-03-10T12:00:00.123Z", "2026-03-10T12:00:00.12300001Z", "2026-03-10T12:00:00.1231Z"],
        ["2026-03-10T12:00:00.000001", "2026-03-10T14:00:00,5+02:00", "20260310T120000.6Z"],
        [datetime(2026, 3, 10, 12, 0, 0, m, tzinfo=UTC) for m in (0, 1, 500_000, 999_999)],
    ],
    ids=["fractions-of-one-second", "close-fractions", "mixed-forms", "datetimes"],
)
def test_entries_in_one_second_with_different_fractions_are_all_kept_in_time_order(log, moments):
    for number, moment in enumerate(moments):
        log.create_log_entry_for_specific_device("d-1", "WARNING1", moment, operator="Ann", reading=str(number))

    stored = stored_items(log)
    assert sorted(i["reading"] for i in stored) == [str(n) for n in range(len(moments))]
    assert len({i["State#Date"] for i in stored}) == len(moments)
    newest_first = [i["reading"] for i in log.get_logs_for_specific_device("d-1", "WARNING1")]
    assert newest_first == [str(n) for n in reversed(range(len(moments)))]  # the moments are given in time order
    by_operator = log.get_logs_for_operator_between_two_dates("Ann", "2026-03-10T12:00:00", "2026-03-10T12:00:00")
    assert [i["reading"] for i in by_operator] == newest_first


def test_entries_written_by_earlier_versions_come_back_from_every_pattern_among_new_ones(log):
    # given whole-second items as earlier versions stored them, and new entries in the same seconds
    put_as_earlier_versions_did(log, "d-1", "WARNING1", "2026-03-10T12:00:00", Operator="Ann", EscalatedTo="Sara")
    put_as_earlier_versions_did(log, "d-1", "WARNING1", "2026-03-10T12:00:01", Operator="Ann")
    log.create_log_entry_for_specific_device("d-1", "WARNING1", "2026-03-10T11:59:59.9", operator="Ann")
    log.create_log_entry_for_specific_device(
        "d-1", "WARNING1", "2026-03-10T12:00:00.5", operator="Ann", escalated_to="Sara"
    )
    log.create_log_entry_for_specific_device("d-1", "WARNING1", "2026-03-10T12:00:01.25", operator="Ann")
    times = ["2026-03-10T12:00:01.25", "2026-03-10T12:00:01", "2026-03-10T12:00:00.5", "2026-03-10T12:00:00",
             "2026-03-10T11:59:59.9"]

    def dates(items):
        return [i["Date"] for i in items]

    # then each access pattern returns old and new entries together, newest first
    assert dates(log.get_logs_for_specific_device("d-1", "WARNING1")) == times
    assert dates(log.get_warning_logs_for_specific_device("d-1")) == times
    assert dates(log.get_logs_for_operator_between_two_dates("Ann", "2026-03-10T12:00", "2026-03-10T12:00:01")) == (
        times[:4]
    )
    assert dates(log.get_logs_for_operator_between_two_dates("Ann", "2026-03-10T12:00:00", "2026-03-10T12:00:00")) == (
        times[2:4]
    )
    assert dates(log.get_escalated_logs_for_supervisor("Sara")) == times[2:4]
    assert dates(log.get_escalated_logs_with_specific_status_for_supervisor("Sara", "WARNING1")) == times[2:4]
    by_date = log.get_escalated_logs_with_specific_status_for_supervisor_for_date
    assert dates(by_date("Sara", "WARNING1", "2026-03-10")) == times[2:4]
    assert dates(by_date("Sara", "WARNING1", "2026-03-10T12:00:00")) == times[2:4]
    # and an old entry is still found by its whole-second time
    escalated = log.escalate("d-1", "WARNING1", "2026-03-10T12:00:01", "Sara")
    assert escalated["State#Date"] == "WARNING1#2026-03-10T12:00:01"
    assert dates(log.get_escalated_logs_for_supervisor("Sara")) == times[1:4]


# (text, the UTC span it means: first moment, length)
SPANS = [
    ("2026-03-10T12", datetime(2026, 3, 10, 12), timedelta(hours=1)),
    ("2026-03-10T12:30", datetime(2026, 3, 10, 12, 30), timedelta(minutes=1)),
    ("20260310T12Z", datetime(2026, 3, 10, 12), timedelta(hours=1)),
    ("20260310T1230Z", datetime(2026, 3, 10, 12, 30), timedelta(minutes=1)),
    ("2026-03-10T14+02:00", datetime(2026, 3, 10, 12), timedelta(hours=1)),
    ("2026-03-10T12:30-0530", datetime(2026, 3, 10, 18, 0), timedelta(minutes=1)),
    ("2026-W11-2", datetime(2026, 3, 10), timedelta(days=1)),
    ("2026W112", datetime(2026, 3, 10), timedelta(days=1)),
    ("2026-W11", datetime(2026, 3, 9), timedelta(days=7)),
    ("2026-069", datetime(2026, 3, 10), timedelta(days=1)),
    ("20260310", datetime(2026, 3, 10), timedelta(days=1)),
    ("2026-02", datetime(2026, 2, 1), timedelta(days=28)),
    ("2026-03-10T12:30:15", datetime(2026, 3, 10, 12, 30, 15), timedelta(seconds=1)),
]


def moments_around(start, length):
    """Moments just outside, at the edges of and inside [start, start + length)."""
    end = start + length
    tick = timedelta(microseconds=1)
    return {
        start - tick: False, start - timedelta(seconds=1): False, start: True, start + tick: True,
        start + length / 2: True, end - tick: True, end - timedelta(seconds=1): True, end: False, end + tick: False,
    }


@pytest.mark.parametrize(("text", "start", "length"), SPANS, ids=[s[0] for s in SPANS])
def test_a_reduced_precision_bound_covers_its_whole_span_and_nothing_else(log, text, start, length):
    moments = moments_around(start, length)
    for moment in moments:
        log.create_log_entry_for_specific_device(
            "d-1", "WARNING1", moment.replace(tzinfo=UTC), operator="Ann", escalated_to="Sara"
        )
    inside = sorted((m for m, covered in moments.items() if covered), reverse=True)

    def moments_of(items):
        return [datetime.fromisoformat(i["Date"]) for i in items]

    # as both bounds of pattern 4, as the from bound alone, as the to bound alone
    assert moments_of(log.get_logs_for_operator_between_two_dates("Ann", text, text)) == inside
    assert moments_of(log.get_logs_for_operator_between_two_dates("Ann", text, "2027")) == sorted(
        (m for m in moments if m >= start), reverse=True
    )
    assert moments_of(log.get_logs_for_operator_between_two_dates("Ann", "2025", text)) == sorted(
        (m for m in moments if m < start + length), reverse=True
    )
    # and as pattern 7's date
    by_date = log.get_escalated_logs_with_specific_status_for_supervisor_for_date("Sara", "WARNING1", text)
    assert moments_of(by_date) == inside


@pytest.mark.parametrize("text", [s[0] for s in SPANS if s[2] > timedelta(seconds=1)])
def test_an_entry_time_that_is_a_span_is_refused_and_nothing_is_written(log, text):
    with pytest.raises(ValueError, match="not the moment of a log entry: give the time to the second"):
        log.create_log_entry_for_specific_device("d-1", "WARNING1", text, operator="Ann")
    assert stored_items(log) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2026-03-10T12.5", "decimal fraction of an hour or minute"),
        ("2026-03-10T12:30,5", "decimal fraction of an hour or minute"),
        ("2026-03-10T24:00", "no such time of day"),
        ("2026-03-10T12:00:00.1234567891", "at most 9"),
        ("202603", "is not ISO-8601"),
        ("2026-W11T12", "needs a whole date"),
        ("2025-W53", "not a calendar date"),
        ("2026-366", "not a calendar date"),
        ("2026-03-10T12+24:00", "no such UTC offset"),
    ],
)
def test_iso_forms_that_are_not_read_are_refused_by_writes_and_queries(log, text, message):
    with pytest.raises(ValueError, match=message):
        log.create_log_entry_for_specific_device("d-1", "WARNING1", text)
    with pytest.raises(ValueError, match=message):
        log.get_logs_for_operator_between_two_dates("Ann", "2025", text)
    with pytest.raises(ValueError, match=message):
        log.get_escalated_logs_with_specific_status_for_supervisor_for_date("Sara", "WARNING1", text)
    assert stored_items(log) == []
