"""Router and batch writer: every item is written or reported with its reason; ISO sort keys in one UTC form."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest

from cdk_ts_runtime import BatchWriteError, MissingPeriodTableError, PeriodRouter
from tests.support.conformance import NO_RETRIES
from tests.support.environment import REGION
from tests.support.requests import RequestCounter
from tests.support.router import create_tables
from tests.support.times import ms, utc
from tests.support.wire import answer_error, dynamodb_error


@pytest.fixture
def two_days(any_dynamodb, unique_name):
    """Tables for 1 and 2 March only, on moto, moto_server and dynalite."""
    router = PeriodRouter(unique_name, dynamodb_client=any_dynamodb, sleep=lambda _s: None)
    create_tables(any_dynamodb, router.layout, router.tables_between(utc(2026, 3, 1), utc(2026, 3, 2)))
    return router


def stored(router, day):
    return router.query(7, utc(2026, 3, day), utc(2026, 3, day, 23, 59, 59))


def test_a_batch_of_21_with_one_item_for_a_missing_table_writes_20_and_reports_that_one(two_days):
    # BatchWriteItem refuses the whole request when one of its tables does not exist
    # (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html), so the
    # router must keep the stray item out of the batches and report it instead.
    router = two_days
    good = [{"pk": 7, "sk": ms(utc(2026, 3, 1) + timedelta(minutes=i)), "i": i} for i in range(20)]
    stray = {"pk": 7, "sk": ms(utc(2026, 3, 5, 12)), "i": 99}  # 5 March: no table yet
    with pytest.raises(BatchWriteError) as failed:
        router.put_items([*good[:10], stray, *good[10:]])
    assert failed.value.items == [stray]
    (reason,) = failed.value.reasons
    assert f"{router.layout.table_prefix}_2026-03-05 does not exist" in reason
    assert "2026-03-05T12:00:00+00:00" in reason and "ms" in reason
    assert [item["i"] for item in stored(router, 1)] == list(range(20))


def test_seconds_given_to_a_millisecond_router_name_the_unit(two_days):
    router = two_days
    seconds = int(utc(2026, 3, 1, 12).timestamp())  # a 1970 time when read as milliseconds
    with pytest.raises(MissingPeriodTableError, match=r"_1970-01-21 does not exist.*read as ms since the epoch"):
        router.put_item({"pk": 7, "sk": seconds})
    assert stored(router, 1) == []


@pytest.mark.parametrize("code", ["AccessDeniedException", "ValidationException", "InternalServerError"])
def test_a_non_throttle_error_on_one_call_costs_only_that_calls_items(dynamodb, unique_name, code):
    router = PeriodRouter(unique_name, dynamodb_client=dynamodb, sleep=lambda _s: None)
    create_tables(dynamodb, router.layout, router.tables_between(utc(2026, 3, 1), utc(2026, 3, 2)))
    day_two = router.table_for(utc(2026, 3, 2))
    refusal = dynamodb_error(code, operation="BatchWriteItem", table=day_two)
    answer_error(dynamodb, "BatchWriteItem", refusal, when=lambda p: day_two in p["RequestItems"])
    items = [{"pk": 7, "sk": ms(utc(2026, 3, 1 + i % 2, 6) + timedelta(minutes=i)), "i": i} for i in range(40)]
    with pytest.raises(BatchWriteError) as failed:
        router.put_items(items)
    assert sorted(i["i"] for i in failed.value.items) == [i for i in range(40) if i % 2]
    assert set(failed.value.reasons) == {f"{code}: {refusal.message}"}
    assert [item["i"] for item in stored(router, 1)] == [i for i in range(40) if i % 2 == 0]


def test_throttled_items_left_after_every_retry_are_reported_and_the_rest_written(aws, unique_name):
    dynamodb = boto3.client("dynamodb", region_name=REGION, config=NO_RETRIES)  # the router's retries, not botocore's
    router = PeriodRouter(unique_name, dynamodb_client=dynamodb, sleep=lambda _s: None, max_batch_attempts=3)
    create_tables(dynamodb, router.layout, router.tables_between(utc(2026, 3, 1), utc(2026, 3, 2)))
    day_one = router.table_for(utc(2026, 3, 1))
    throttle = dynamodb_error("ProvisionedThroughputExceededException", operation="BatchWriteItem", table=day_one)
    answered = answer_error(dynamodb, "BatchWriteItem", throttle, when=lambda p: day_one in p["RequestItems"])
    counter = RequestCounter(dynamodb)
    items = [{"pk": 7, "sk": ms(utc(2026, 3, 1 + i % 2, 6) + timedelta(minutes=i)), "i": i} for i in range(10)]
    with pytest.raises(BatchWriteError, match="throttled") as failed:
        router.put_items(items)
    assert sorted(i["i"] for i in failed.value.items) == [0, 2, 4, 6, 8]
    assert counter.calls["BatchWriteItem"] == 3 + 1
    assert answered == {"answered": 3}
    assert [item["i"] for item in stored(router, 2)] == [1, 3, 5, 7, 9]


def test_iso_sort_keys_written_with_any_offset_are_found_by_a_utc_range(any_dynamodb, unique_name):
    router = PeriodRouter(unique_name, sort_key="at", sort_key_type="S", dynamodb_client=any_dynamodb)
    create_tables(any_dynamodb, router.layout, router.tables_between(utc(2026, 3, 1), utc(2026, 3, 2)))
    router.put_item({"pk": 7, "at": "2026-03-01T13:30:00+01:00", "v": 1})  # 12:30 UTC
    router.put_item({"pk": 7, "at": "2026-03-01T12:45:00Z", "v": 2})
    router.put_item({"pk": 7, "at": "2026-03-01T07:50:00-05:00", "v": 3})  # 12:50 UTC
    with router.batch_writer() as writer:
        writer.put({"pk": 7, "at": "2026-03-02T00:30:00+02:00", "v": 4})  # 1 March 22:30 UTC
    found = router.query(7, "2026-03-01T12:00:00+00:00", "2026-03-01T23:00:00Z")
    assert [item["v"] for item in found] == [1, 2, 3, 4]
    assert found[0]["at"] == "2026-03-01T12:30:00+00:00"
    assert [i["v"] for i in router.query(7, "2026-03-01T13:00:00+01:00", "2026-03-01T12:47:00Z")] == [1, 2]
