"""TableLayout travels to functions as CDK_TS_* environment variables and comes back unchanged."""

import pytest

from cdk_ts_runtime import RotationPeriod, TableLayout


def test_every_field_travels_in_its_documented_variable():
    layout = TableLayout(
        "events", RotationPeriod.WEEKLY, partition_key="device", partition_key_type="S",
        sort_key="at", sort_key_type="S", time_unit="iso",
    )

    env = layout.to_env()

    assert env == {
        "CDK_TS_TABLE_PREFIX": "events",
        "CDK_TS_PERIOD": "weekly",
        "CDK_TS_PARTITION_KEY": "device",
        "CDK_TS_PARTITION_KEY_TYPE": "S",
        "CDK_TS_SORT_KEY": "at",
        "CDK_TS_SORT_KEY_TYPE": "S",
        "CDK_TS_TIME_UNIT": "iso",
    }
    assert TableLayout.from_env(env) == layout


def test_unset_variables_mean_the_layout_defaults():
    assert TableLayout.from_env({"CDK_TS_TABLE_PREFIX": "readings"}) == TableLayout("readings")


def test_a_missing_prefix_names_the_variable_and_the_fix():
    with pytest.raises(KeyError, match=r"CDK_TS_TABLE_PREFIX is not set; bind the function"):
        TableLayout.from_env({"CDK_TS_PERIOD": "daily"})


def test_time_unit_defaults_to_the_sort_key_type():
    assert TableLayout("metrics").time_unit == "ms"
    assert TableLayout("metrics", sort_key_type="S").time_unit == "iso"
    assert TableLayout.from_env({"CDK_TS_TABLE_PREFIX": "metrics", "CDK_TS_SORT_KEY_TYPE": "S"}).time_unit == "iso"


@pytest.mark.parametrize(
    ("unit", "last_of_the_day"),
    [
        ("ns", 1_767_225_599_999_999_999),  # 2025-12-31T23:59:59.999999999Z
        ("us", 1_767_225_599_999_999),
        ("ms", 1_767_225_599_999),
    ],
)
def test_a_time_one_unit_before_midnight_belongs_to_the_day_it_ends(unit, last_of_the_day):
    # integer arithmetic: no float or round-half-even step can carry it into the next day
    from decimal import Decimal

    layout = TableLayout("readings", time_unit=unit)
    for value in (last_of_the_day, Decimal(last_of_the_day)):
        assert layout.time_of(value).date().isoformat() == "2025-12-31"
        assert layout.time_of(value + 1).isoformat() == "2026-01-01T00:00:00+00:00"


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), "Infinity", "NaN", "sNaN"])
def test_a_sort_key_that_is_not_a_finite_time_is_refused_naming_key_value_and_unit(value):
    from decimal import Decimal

    layout = TableLayout("readings", sort_key="ts", time_unit="ns")
    value = Decimal(value) if isinstance(value, str) else value
    with pytest.raises(ValueError, match=r"sort_value .* of sort key 'ts' is not a finite time in ns"):
        layout.time_of(value)


def test_a_number_outside_the_calendar_names_key_value_and_unit():
    layout = TableLayout("readings", sort_key="ts", time_unit="s")
    with pytest.raises(ValueError, match=r"sort key 'ts' value 10000000000000 read as s since the epoch is outside"):
        layout.time_of(10**13)
