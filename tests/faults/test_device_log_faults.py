"""DeviceLogRepository: a device's warning logs are its WARNING states only; a bad date is a ValueError."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from cdk_ts_runtime.device_log import DeviceLogRepository, normalise_date
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
