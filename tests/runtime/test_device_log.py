"""DeviceLogRepository on moto, moto_server and dynalite with the use case's sample data: all seven patterns."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from cdk_ts_runtime._device_log import DeviceLogRepository, normalise_date
from tests.support.device_log import create_device_log_table
from tests.support.requests import RequestCounter

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "device_state_log.json"


def sample_items():
    if not SAMPLE.exists():
        pytest.fail(f"sample data {SAMPLE} is missing: the project keeps its own copy in tests/data/")
    return json.loads(SAMPLE.read_text())["items"]


@pytest.fixture
def repository(any_dynamodb, unique_name):
    create_device_log_table(any_dynamodb, unique_name)
    repo = DeviceLogRepository(unique_name, dynamodb_client=any_dynamodb, page_size=2)
    for item in sample_items():
        repo.create_log_entry_for_specific_device(
            item["DeviceID"],
            item["State"],
            item["Date"],
            operator=item.get("Operator"),
            escalated_to=item.get("EscalatedTo"),
        )
    return repo


def dates(items):
    return [(i["DeviceID"], i["State"], i["Date"]) for i in items]


def test_1_create_writes_the_model_attributes_and_keeps_gsi2_sparse(repository):
    item = repository.create_log_entry_for_specific_device("d#1", "NORMAL", "2020-04-24T14:40:00+02:00", operator="Liz")
    assert item == {
        "DeviceID": "d#1",
        "State#Date": "NORMAL#2020-04-24T12:40:00",
        "State": "NORMAL",
        "Date": "2020-04-24T12:40:00",
        "Operator": "Liz",
    }
    stored = repository.dynamodb.get_item(
        TableName=repository.table_name,
        Key={"DeviceID": {"S": "d#1"}, "State#Date": {"S": "NORMAL#2020-04-24T12:40:00"}},
    )
    assert "EscalatedTo" not in stored["Item"]


def test_2_logs_of_one_state_newest_first(repository):
    repository.create_log_entry_for_specific_device("d#12345", "WARNING10", "2020-04-25T00:00:00", operator="Liz")
    assert dates(repository.get_logs_for_specific_device("d#12345", "WARNING1")) == [
        ("d#12345", "WARNING1", "2020-04-24T14:50:00"),
        ("d#12345", "WARNING1", "2020-04-24T14:45:00"),
        ("d#12345", "WARNING1", "2020-04-24T14:40:00"),
    ]


def test_3_every_warning_level_newest_first(repository):
    assert dates(repository.get_warning_logs_for_specific_device("d#54321")) == [
        ("d#54321", "WARNING2", "2020-04-11T09:25:00"),
        ("d#54321", "WARNING3", "2020-04-11T05:55:00"),
        ("d#54321", "WARNING3", "2020-04-11T05:50:00"),
    ]


def test_4_operator_between_two_dates_with_date_only_bounds_covering_whole_days(repository):
    assert dates(repository.get_logs_for_operator_between_two_dates("Liz", "2020-04-11", "2020-04-24")) == [
        ("d#12345", "NORMAL", "2020-04-24T14:55:00"),
        ("d#12345", "WARNING1", "2020-04-24T14:50:00"),
        ("d#12345", "WARNING1", "2020-04-24T14:45:00"),
        ("d#12345", "WARNING1", "2020-04-24T14:40:00"),
        ("d#54321", "NORMAL", "2020-04-11T06:00:00"),
        ("d#54321", "WARNING3", "2020-04-11T05:55:00"),
    ]
    assert dates(
        repository.get_logs_for_operator_between_two_dates("Sue", "2020-04-11T09:25:00", "2020-04-11T09:30:00")
    ) == [
        ("d#54321", "NORMAL", "2020-04-11T09:30:00"),
        ("d#54321", "WARNING2", "2020-04-11T09:25:00"),
    ]


def test_5_6_7_escalated_logs_for_a_supervisor(repository):
    escalated = [("d#11223", "WARNING4", "2020-04-27T16:15:00")]
    assert dates(repository.get_escalated_logs_for_supervisor("Sara")) == escalated
    assert dates(repository.get_escalated_logs_with_specific_status_for_supervisor("Sara", "WARNING4")) == escalated
    assert repository.get_escalated_logs_with_specific_status_for_supervisor("Sara", "WARNING1") == []
    assert (
        dates(
            repository.get_escalated_logs_with_specific_status_for_supervisor_for_date("Sara", "WARNING4", "2020-04-27")
        )
        == escalated
    )
    assert (
        repository.get_escalated_logs_with_specific_status_for_supervisor_for_date("Sara", "WARNING4", "2020-04-26")
        == []
    )


@pytest.mark.parametrize(
    "day",
    [
        datetime(2020, 4, 27, tzinfo=UTC),  # midnight: the old answer was entries of that second only
        datetime(2020, 4, 27, 23, 59, 59, tzinfo=UTC),
        datetime(2020, 4, 28, 1, 30, tzinfo=timezone(timedelta(hours=2))),  # 23:30 on the 27th in UTC
        datetime(2020, 4, 27, 10, tzinfo=timezone(timedelta(hours=-5))),  # 15:00 on the 27th in UTC
    ],
    ids=["utc-midnight", "utc-last-second", "utc+2-next-day", "utc-5"],
)
def test_7_a_datetime_means_its_whole_utc_day(repository, day):
    escalated = [("d#11223", "WARNING4", "2020-04-27T16:15:00")]
    assert dates(
        repository.get_escalated_logs_with_specific_status_for_supervisor_for_date("Sara", "WARNING4", day)
    ) == escalated


def test_7_a_datetime_whose_utc_day_differs_reads_that_utc_day(repository):
    # 00:30 on the 28th at UTC+02:00 is 22:30 on the 27th in UTC; 20:00 on the 27th at UTC-05:00 is the 28th
    plus_two = datetime(2020, 4, 28, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    minus_five = datetime(2020, 4, 27, 20, tzinfo=timezone(timedelta(hours=-5)))
    by_day = repository.get_escalated_logs_with_specific_status_for_supervisor_for_date
    assert dates(by_day("Sara", "WARNING4", plus_two)) == [("d#11223", "WARNING4", "2020-04-27T16:15:00")]
    assert by_day("Sara", "WARNING4", minus_five) == []


def test_7_a_naive_datetime_is_refused_not_answered_with_nothing(repository):
    with pytest.raises(ValueError, match="has no time zone, so its day is ambiguous"):
        repository.get_escalated_logs_with_specific_status_for_supervisor_for_date(
            "Sara", "WARNING4", datetime(2020, 4, 27, 16, 15)
        )


def test_escalating_an_entry_puts_it_in_gsi2(repository):
    updated = repository.escalate("d#54321", "WARNING3", "2020-04-11T05:55:00", "Sara")
    assert updated["EscalatedTo"] == "Sara"
    assert dates(repository.get_escalated_logs_for_supervisor("Sara")) == [
        ("d#11223", "WARNING4", "2020-04-27T16:15:00"),
        ("d#54321", "WARNING3", "2020-04-11T05:55:00"),
    ]
    with pytest.raises(LookupError, match="no log entry"):
        repository.escalate("d#54321", "WARNING3", "2020-04-11T05:56:00", "Sara")


def test_each_pattern_is_one_query_per_page_never_a_scan_or_filter(repository):
    for minute in range(7):
        repository.create_log_entry_for_specific_device(
            "d#busy", "WARNING1", f"2020-05-01T00:0{minute}:00", operator="Ann"
        )
    counter = RequestCounter(repository.dynamodb)

    items = repository.get_logs_for_specific_device("d#busy", "WARNING1")

    assert len(items) == 7
    assert set(counter.calls) == {"Query"}
    assert 4 <= counter.calls["Query"] <= 5  # 7 items in pages of 2 (+1 empty page where an engine reports one)
    for _operation, params in counter.params:
        assert "KeyConditionExpression" in params and "FilterExpression" not in params
    counter.reset()
    for call in (
        lambda: repository.get_warning_logs_for_specific_device("d#54321"),
        lambda: repository.get_logs_for_operator_between_two_dates("Liz", "2020-04-01", "2020-04-30"),
        lambda: repository.get_escalated_logs_for_supervisor("Sara"),
        lambda: repository.get_escalated_logs_with_specific_status_for_supervisor("Sara", "WARNING4"),
        lambda: repository.get_escalated_logs_with_specific_status_for_supervisor_for_date(
            "Sara", "WARNING4", "2020-04-27"
        ),
    ):
        call()
    assert set(counter.calls) == {"Query"}
    assert all("FilterExpression" not in p for _o, p in counter.params)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda r: r.create_log_entry_for_specific_device("", "NORMAL", "2020-04-24"),
            "device_id '' must be a non-empty",
        ),
        (
            lambda r: r.create_log_entry_for_specific_device("d", "WARN#1", "2020-04-24"),
            "state 'WARN#1' may not contain",
        ),
        (
            lambda r: r.create_log_entry_for_specific_device("d", "NORMAL", "24/04/2020"),
            "date '24/04/2020' is not ISO-8601",
        ),
        (
            lambda r: r.create_log_entry_for_specific_device("d", "NORMAL", "2020-04-24", Date="x"),
            "set by the repository",
        ),
        (
            lambda r: r.get_logs_for_operator_between_two_dates("Liz", "2020-04-25", "2020-04-24"),
            "start '2020-04-25' is after end",
        ),
        (lambda r: r.get_escalated_logs_for_supervisor(""), "supervisor '' must be a non-empty"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_value(call, message):
    repository = DeviceLogRepository("t", dynamodb_client=object())
    with pytest.raises(ValueError, match=message):
        call(repository)


def test_dates_are_normalised_to_utc_keeping_the_fraction_given():
    assert normalise_date("2020-04-24T14:40:00.123456Z") == "2020-04-24T14:40:00.123456"
    assert normalise_date("2020-04-24T16:40:00.500+02:00") == "2020-04-24T14:40:00.5"
    assert normalise_date("2020-04-24T16:40:00+02:00") == "2020-04-24T14:40:00"
    assert normalise_date("2020-04-24") == "2020-04-24T00:00:00"
    assert normalise_date("2020-04-24", end_of_day=True) == "2020-04-24T23:59:59.999999999"


def test_from_env_names_the_missing_variable():
    with pytest.raises(KeyError, match="CDK_TS_DEVICE_LOG_TABLE_NAME"):
        DeviceLogRepository.from_env({})
    assert DeviceLogRepository.from_env({"CDK_TS_DEVICE_LOG_TABLE_NAME": "logs"}).table_name == "logs"
