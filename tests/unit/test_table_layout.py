"""TableLayout travels to functions as CDK_TS_* environment variables and comes back unchanged."""

import pytest

from cdk_ts_runtime.periods import RotationPeriod
from cdk_ts_runtime.table_layout import TableLayout


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
