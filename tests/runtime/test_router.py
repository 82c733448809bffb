"""PeriodRouter against moto, moto_server and dynalite: routing, parallel range queries, batched writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from cdk_ts_runtime import BatchWriteError, PeriodRouter, TableLayout
from cdk_ts_runtime._periods import label, parse_table_name, shift
from tests.support.requests import RequestCounter
from tests.support.router import create_tables
from tests.support.times import ms, utc


class TestRouting:
    router = PeriodRouter("telemetry")

    def test_table_for_a_datetime_or_an_epoch_millisecond_sort_value(self):
        assert self.router.table_for(utc(2026, 3, 1, 23, 59, 59)) == "telemetry_2026-03-01"
        assert self.router.table_for(ms(utc(2026, 3, 2))) == "telemetry_2026-03-02"

    def test_tables_between_is_inclusive_and_crosses_month_ends(self):
        assert self.router.tables_between(utc(2024, 2, 28, 12), utc(2024, 3, 1)) == [
            "telemetry_2024-02-28",
            "telemetry_2024-02-29",
            "telemetry_2024-03-01",
        ]

    def test_weekly_tables_between(self):
        router = PeriodRouter("metrics", "weekly")
        assert router.tables_between(utc(2026, 12, 30), utc(2027, 1, 5)) == ["metrics_2026-W53", "metrics_2027-W01"]

    def test_reversed_range_is_an_error(self):
        with pytest.raises(ValueError, match="start 2026-03-02T00:00:00\\+00:00 is after end"):
            self.router.tables_between(utc(2026, 3, 2), utc(2026, 3, 1))

    def test_items_need_both_keys(self):
        with pytest.raises(ValueError, match="item has no 'sk'"):
            self.router.put_item({"pk": 1, "value": 2})

    def test_measure_names_may_not_collide_with_keys(self):
        with pytest.raises(ValueError, match="collide with the table's key attributes"):
            self.router.measurement_item(1, utc(2026, 3, 1), {"sk": 5})

    def test_string_sort_keys_hold_iso_times(self):
        router = PeriodRouter("events", sort_key="at", sort_key_type="S")
        assert router.table_for("2026-03-01T23:00:00+00:00") == "events_2026-03-01"
        assert router.measurement_item("d1", utc(2026, 3, 1, 8), {"t": 1})["at"] == "2026-03-01T08:00:00+00:00"

    def test_from_env_reads_the_layout_the_construct_binds(self):
        env = TableLayout("metrics", "monthly", partition_key="device", partition_key_type="S").to_env()
        router = PeriodRouter.from_env(env)
        assert router.table_for(utc(2026, 3, 9)) == "metrics_2026-03"
        assert router.layout.partition_key == "device"


@pytest.fixture
def three_days(any_dynamodb, unique_name):
    """Period tables for 1-3 March (4 March has none), on each DynamoDB implementation."""
    router = PeriodRouter(unique_name, dynamodb_client=any_dynamodb, page_size=3, sleep=lambda _s: None)
    create_tables(any_dynamodb, router.layout, router.tables_between(utc(2026, 3, 1), utc(2026, 3, 3)))
    return router


def test_put_then_query_across_three_tables_follows_every_page(three_days):
    router = three_days
    times = [utc(2026, 3, 1) + timedelta(hours=5 * i) for i in range(14)]  # 1 March 00:00 .. 3 March 17:00
    for i, when in enumerate(times):
        router.put_item({"pk": 7, "sk": ms(when), "reading": Decimal(i) / 4})
        router.put_item({"pk": 8, "sk": ms(when), "reading": Decimal(-i)})
    counter = RequestCounter(router.dynamodb)

    items = router.query(7, utc(2026, 3, 1), utc(2026, 3, 4, 23))

    assert [i["sk"] for i in items] == [ms(t) for t in times]
    assert [i["reading"] for i in items] == [Decimal(i) / 4 for i in range(14)]
    assert {i["pk"] for i in items} == {7}
    assert counter.calls["Query"] > 4  # 3 tables, 3-item pages: several pages per table, plus the missing 4th


def test_query_bounds_are_inclusive_and_can_be_newest_first(three_days):
    router = three_days
    for hour in range(0, 24, 6):
        router.put_item({"pk": 1, "sk": ms(utc(2026, 3, 2, hour)), "h": hour})
    items = router.query(1, utc(2026, 3, 2, 6), utc(2026, 3, 2, 18), newest_first=True)
    assert [i["h"] for i in items] == [18, 12, 6]


def test_numbers_round_trip_exactly(three_days):
    router = three_days
    values = {"tiny": Decimal("0.1"), "big": 12345678901234567890123, "float_input": 21.5, "neg": Decimal("-1E-20")}
    router.put_measurements(3, utc(2026, 3, 1, 12), values, site="plant-a")
    (item,) = router.query(3, utc(2026, 3, 1), utc(2026, 3, 1, 23))
    assert item["tiny"] == Decimal("0.1")
    assert item["big"] == Decimal(12345678901234567890123)
    assert item["float_input"] == Decimal("21.5")
    assert item["neg"] == Decimal("-1E-20")
    assert item["site"] == "plant-a"


def test_batched_writes_send_at_most_25_per_call_one_table_per_call(three_days):
    router = three_days
    counter = RequestCounter(router.dynamodb)
    items = [{"pk": 5, "sk": ms(utc(2026, 3, 1) + timedelta(minutes=70 * i)), "i": i} for i in range(60)]

    assert router.put_items(items) == 60

    assert counter.calls["BatchWriteItem"] == 3
    calls = [p["RequestItems"] for op, p in counter.params if op == "BatchWriteItem"]
    assert [len(c) for c in calls] == [1, 1, 1]  # one table per call: a failing table costs only its items
    assert sorted(len(requests) for c in calls for requests in c.values()) == [18, 21, 21]  # 70-minute steps
    assert [i["i"] for i in router.query(5, utc(2026, 3, 1), utc(2026, 3, 3, 23, 59))] == list(range(60))


def test_a_repeated_key_in_one_batch_keeps_the_last_item(three_days):
    router = three_days
    with router.batch_writer() as writer:
        writer.put({"pk": 2, "sk": ms(utc(2026, 3, 1, 1)), "v": "first"})
        writer.put({"pk": 2, "sk": ms(utc(2026, 3, 1, 1)), "v": "second"})
    assert [i["v"] for i in router.query(2, utc(2026, 3, 1), utc(2026, 3, 1, 2))] == ["second"]


class _Accepted:
    status_code = 200
    headers: dict = {}


def hold_back_requests(client, how_many, times):
    """Make DynamoDB 'not process' the last ``how_many`` requests of the next ``times`` BatchWriteItem calls.

    The held-back requests are removed before the call is sent and returned as UnprocessedItems, as
    DynamoDB does under throttling: they are really not written until the router retries them. A
    call whose every request is held back is answered without reaching the server.
    """
    state = {"calls": 0, "held": {}, "all_held": False}

    def before(params, **_kwargs):
        state["held"], state["all_held"] = {}, False
        if state["calls"] >= times:
            return
        state["calls"] += 1
        for table, requests in params["RequestItems"].items():
            keep = max(0, len(requests) - how_many)
            if requests[keep:]:
                state["held"][table] = requests[keep:]
                params["RequestItems"][table] = requests[:keep]
        params["RequestItems"] = {t: r for t, r in params["RequestItems"].items() if r}
        if not params["RequestItems"]:
            state["all_held"] = True
            params["RequestItems"] = state["held"]  # keep the request valid; it is never sent

    def short_circuit(**_kwargs):
        if state["all_held"]:
            return _Accepted(), {"UnprocessedItems": state["held"]}
        return None

    def after(parsed, **_kwargs):
        if state["held"]:
            parsed["UnprocessedItems"] = state["held"]

    client.meta.events.register("provide-client-params.dynamodb.BatchWriteItem", before)
    client.meta.events.register("before-call.dynamodb.BatchWriteItem", short_circuit)
    client.meta.events.register("after-call.dynamodb.BatchWriteItem", after)
    return state


def test_unprocessed_items_are_retried_with_backoff_until_written(three_days):
    router = three_days
    delays = []
    router.sleep = delays.append
    hold_back_requests(router.dynamodb, how_many=5, times=2)
    items = [{"pk": 9, "sk": ms(utc(2026, 3, 2) + timedelta(minutes=i)), "i": i} for i in range(20)]

    router.put_items(items)

    assert [i["i"] for i in router.query(9, utc(2026, 3, 2), utc(2026, 3, 2, 1))] == list(range(20))
    assert len(delays) == 2
    assert all(0 <= d <= router.backoff_cap_seconds for d in delays)


def test_items_never_processed_are_raised_not_dropped(three_days):
    router = three_days
    router.max_batch_attempts = 3
    hold_back_requests(router.dynamodb, how_many=2, times=100)
    items = [{"pk": 4, "sk": ms(utc(2026, 3, 3) + timedelta(minutes=i)), "i": i} for i in range(30)]

    with pytest.raises(BatchWriteError) as raised:
        router.put_items(items)

    written = {i["i"] for i in router.query(4, utc(2026, 3, 3), utc(2026, 3, 3, 1))}
    unwritten = {i["i"] for i in raised.value.items}
    assert written | unwritten == set(range(30))
    assert not written & unwritten
    assert raised.value.attempts == 3


@pytest.mark.parametrize("unit", ["us", "ns"])
def test_a_write_one_unit_before_midnight_goes_to_the_day_it_ends(unit):
    router = PeriodRouter("readings", time_unit=unit, dynamodb_client=object())
    per_second = {"us": 10**6, "ns": 10**9}[unit]
    midnight = int(utc(2026, 1, 1).timestamp()) * per_second
    assert router.table_for(midnight - 1) == router.table_for(utc(2025, 12, 31, 23, 59))
    assert router.table_for(Decimal(midnight - 1)) == router.table_for(utc(2025, 12, 31, 23, 59))
    assert router.table_for(midnight) == router.table_for(utc(2026, 1, 1))


def test_a_sort_key_that_is_not_a_finite_time_is_refused_before_any_request():
    router = PeriodRouter("readings", time_unit="ns", dynamodb_client=object())
    with pytest.raises(ValueError, match=r"sort_value Decimal\('NaN'\) of sort key 'sk' is not a finite time in ns"):
        router.put_item({"pk": 1, "sk": Decimal("NaN")})


@pytest.mark.parametrize(("unit", "per_second"), [("s", 1), ("ms", 10**3), ("us", 10**6), ("ns", 10**9)])
def test_a_datetime_end_covers_its_last_unit_of_the_sort_key(any_dynamodb, unique_name, unit, per_second):
    # given items in the first and last unit of one microsecond, and in the next microsecond
    router = PeriodRouter(unique_name, time_unit=unit, dynamodb_client=any_dynamodb)
    create_tables(any_dynamodb, router.layout, [router.table_for(utc(2026, 3, 2))])
    end = utc(2026, 3, 2, 12, 0, 0, 500_001)
    first = router.layout.sort_value(end)
    last_of_end = ((int(end.timestamp()) * 10**6 + end.microsecond + 1) * per_second - 1) // 10**6
    after = last_of_end + 1
    for value in sorted({first, last_of_end, after}):
        router.put_item({"pk": 1, "sk": value})
    # when the end bound is that microsecond, as a datetime
    found = [item["sk"] for item in router.query(1, utc(2026, 3, 2), end)]
    # then every item of the unit that holds the end's last instant is in, the next unit's are not
    assert found == sorted({first, last_of_end})
    assert (after in found) is False
    if unit == "ns":  # the whole microsecond, to its last nanosecond
        assert last_of_end - first == 999


@pytest.mark.parametrize(
    ("when", "period"),
    [(utc(999, 12, 31, 23, 59), "daily"), (utc(1, 1, 1), "daily"), (utc(999, 12, 31), "weekly"),
     (utc(999, 6, 1), "yearly")],
)
def test_times_before_the_year_1000_are_refused_never_routed_to_a_name_the_rotation_cannot_parse(when, period):
    router = PeriodRouter("readings", period=period, dynamodb_client=object())
    with pytest.raises(ValueError, match=r"^when .* outside the years 1000-9999"):
        router.table_for(when)
    with pytest.raises(ValueError, match=r"^when .* outside the years 1000-9999"):
        router.table_for(router.layout.sort_value(when))  # the same time as a sort-key value
    assert router.table_for(utc(1000, 1, 1)) == f"readings_{label(period, utc(1000, 1, 1))}"


def test_the_first_week_of_the_year_1000_is_routed_though_it_starts_in_999():
    # 1000-01-01 is a Wednesday: its ISO week 1000-W01 starts on 999-12-30
    router = PeriodRouter("readings", period="weekly", dynamodb_client=object())
    assert router.tables_between(utc(1000, 1, 1), utc(1000, 1, 8)) == ["readings_1000-W01", "readings_1000-W02"]
    with pytest.raises(ValueError, match="outside the years 1000-9999"):
        shift("weekly", utc(1000, 1, 1), -1)


@pytest.mark.parametrize("period", ["daily", "weekly", "monthly", "quarterly", "yearly"])
def test_the_last_period_of_the_year_9999_is_routed_and_nothing_overflows(period):
    router = PeriodRouter("readings", period=period, dynamodb_client=object())
    last = datetime.max.replace(tzinfo=UTC)
    name = router.table_for(last)
    assert parse_table_name("readings", period, name) is not None
    assert router.tables_between(last - timedelta(days=1), last)[-1] == name
    with pytest.raises(ValueError, match="outside the years 1000-9999"):
        shift(period, last, 1)


@pytest.mark.parametrize(
    ("start", "end", "named"),
    [
        (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC), "start"),
        (utc(2026, 1, 1), datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))), "end"),
        (utc(2026, 1, 1), 10**30, "end"),
        (-(10**30), utc(2026, 1, 1), "start"),
    ],
)
def test_a_query_range_outside_the_years_a_table_name_holds_is_a_clear_error_naming_the_bound(start, end, named):
    router = PeriodRouter("readings", dynamodb_client=object())
    with pytest.raises(ValueError, match=rf"^{named}"):
        router.query(1, start, end)
