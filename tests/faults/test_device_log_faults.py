"""DeviceLogRepository: warning logs are WARNING states only; bad dates are ValueErrors; nothing is overwritten."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from cdk_ts_runtime import CdkTsError
from cdk_ts_runtime._device_log import DeviceLogRepository, LogEntryExistsError, normalise_date
from tests.support.device_log import create_device_log_table


@pytest.fixture
def device_states(any_dynamodb, unique_name):
    create_device_log_table(any_dynamodb, unique_name)
    repo = DeviceLogRepository(unique_name, dynamodb_client=any_dynamodb, page_size=2)
    states = ["WARNING", "WARNING1", "WARNING10", "WARNINGS_CLEARED", "WARNING_ACK", "NORMAL", "WARNING2"]
    for hour, state in enumerate(states):
        repo.create_log_entry_for_specific_device("d-1", state, f"2026-03-01T{hour:02d}:00:00")
    repo.create_log_entry_for_specific_device("d-2", "WARNING", "2026-03-01T12:00:00")
    return repo


def test_warning_logs_of_a_device_are_warning_and_numbered_warnings_only(device_states):
    found = device_states.get_warning_logs_for_specific_device("d-1")
    assert [(i["State"], i["Date"][11:13]) for i in found] == [
        ("WARNING2", "06"), ("WARNING10", "02"), ("WARNING1", "01"), ("WARNING", "00"),
    ]
    assert len(device_states.get_logs_for_specific_device("d-1", "WARNINGS_CLEARED")) == 1  # still stored


@pytest.mark.parametrize(
    "value",
    [
        "2026-02-30",
        "2026-13-01",
        "10000-01-01",
        "0000-01-01T00:00:00",
        datetime(1, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1))),
        datetime(9999, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-1))),
        "yesterday",
        20260301,
    ],
)
def test_dates_out_of_range_are_value_errors(value):
    with pytest.raises(ValueError, match="date"):
        normalise_date(value)


def test_a_bad_date_writes_nothing(device_states):
    before = device_states.get_logs_for_specific_device("d-1", "NORMAL")
    with pytest.raises(ValueError):
        device_states.create_log_entry_for_specific_device("d-1", "NORMAL", "2026-02-30")
    assert device_states.get_logs_for_specific_device("d-1", "NORMAL") == before


@pytest.fixture
def empty_log(any_dynamodb, unique_name):
    create_device_log_table(any_dynamodb, unique_name)
    return DeviceLogRepository(unique_name, dynamodb_client=any_dynamodb)


def stored(log):
    """Every item of the table as plain strings (Scan): what is there, whatever the error said."""
    items = log.dynamodb.scan(TableName=log.table_name, ConsistentRead=True)["Items"]
    return sorted(({k: next(iter(v.values())) for k, v in i.items()} for i in items), key=lambda i: i["State#Date"])


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("2026-03-10T12:00:00", "2026-03-10T12:00:00"),
        ("2026-03-10T12:00:00", "2026-03-10T14:00:00+02:00"),  # the same moment, another zone
        ("2026-03-10T12:00:00.5", "2026-03-10T12:00:00.500000Z"),  # the same fraction, more digits
        ("2026-03-10T12:00:00", datetime(2026, 3, 10, 12, tzinfo=UTC)),
    ],
    ids=["same-text", "other-zone", "trailing-zeros", "datetime"],
)
def test_a_second_entry_for_the_same_moment_is_refused_and_the_first_kept(empty_log, first, again):
    kept = empty_log.create_log_entry_for_specific_device("d-1", "WARNING1", first, operator="Ann", note="first")

    with pytest.raises(LogEntryExistsError, match="exists already and was left as it is") as raised:
        empty_log.create_log_entry_for_specific_device("d-1", "WARNING1", again, operator="Bob", note="second")

    assert isinstance(raised.value, CdkTsError)
    assert raised.value.key == {"DeviceID": "d-1", "State#Date": kept["State#Date"]}
    assert stored(empty_log) == [kept]
    assert [i["Operator"] for i in empty_log.get_logs_for_operator_between_two_dates("Ann", "2026", "2026")] == ["Ann"]
    assert empty_log.get_logs_for_operator_between_two_dates("Bob", "2026", "2026") == []


def test_overwrite_true_replaces_the_entry_and_its_index_entries(empty_log):
    empty_log.create_log_entry_for_specific_device("d-1", "WARNING1", "2026-03-10T12:00:00", operator="Ann", note="a")

    replaced = empty_log.create_log_entry_for_specific_device(
        "d-1", "WARNING1", "2026-03-10T12:00:00", operator="Bob", note="b", overwrite=True
    )

    assert stored(empty_log) == [replaced]
    assert replaced["note"] == "b"
    assert empty_log.get_logs_for_operator_between_two_dates("Ann", "2026", "2026") == []
    assert [i["note"] for i in empty_log.get_logs_for_operator_between_two_dates("Bob", "2026", "2026")] == ["b"]


def test_a_new_entry_never_replaces_one_written_by_an_earlier_version(empty_log):
    # an item as earlier versions wrote it: whole-second key, written without a condition
    old = {"DeviceID": "d-1", "State#Date": "NORMAL#2026-03-10T12:00:00", "State": "NORMAL",
           "Date": "2026-03-10T12:00:00", "note": "old"}
    empty_log.dynamodb.put_item(TableName=empty_log.table_name, Item={k: {"S": v} for k, v in old.items()})

    with pytest.raises(LogEntryExistsError):
        empty_log.create_log_entry_for_specific_device("d-1", "NORMAL", "2026-03-10T12:00:00.000", note="new")
    new = empty_log.create_log_entry_for_specific_device("d-1", "NORMAL", "2026-03-10T12:00:00.001", note="new")

    assert stored(empty_log) == [old, new]
