"""An environment variable that does not parse names itself, with the value it holds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdk_ts_runtime import TableLayout, ValidationError
from cdk_ts_runtime._inputs import MAX_JSON_DEPTH, json_depth, json_setting
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG, RotationConfig
from cdk_ts_runtime._sharding import (
    ENV_METADATA_TABLE,
    ENV_PARTITION_KEY,
    ENV_SORT_KEY,
    ENV_STRATEGY,
    ENV_TABLE,
    ShardedTable,
)
from cdk_ts_runtime._stream_consumer import STREAM_CONSUMER_ENV, StreamConsumer
from tests.support.examples import examples

PREFIX = {"CDK_TS_TABLE_PREFIX": "readings"}


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"CDK_TS_PERIOD": "hourly"}, "CDK_TS_PERIOD='hourly'"),
        ({"CDK_TS_TIME_UNIT": "fortnights"}, "CDK_TS_TIME_UNIT='fortnights'"),
        ({"CDK_TS_SORT_KEY_TYPE": "B"}, "CDK_TS_SORT_KEY_TYPE='B'"),
        ({"CDK_TS_TABLE_PREFIX": "no spaces"}, "CDK_TS_TABLE_PREFIX='no spaces'"),
        ({"CDK_TS_PARTITION_KEY": "at", "CDK_TS_SORT_KEY": "at"}, "CDK_TS_PARTITION_KEY='at', CDK_TS_SORT_KEY='at'"),
    ],
)
def test_a_layout_variable_that_does_not_parse_names_itself(env, named):
    with pytest.raises(ValueError, match=rf"^environment variable {named}: "):
        TableLayout.from_env({**PREFIX, **env})


@pytest.mark.parametrize(
    ("raw", "says"),
    [("{not json", "is not JSON"), ('{"retain_periods": "seven"}', "retain_periods 'seven'"), ("[1]", "JSON object")],
)
def test_a_rotation_config_that_does_not_parse_names_its_variable(raw, says):
    with pytest.raises(ValueError, match=rf"{ENV_ROTATION_CONFIG}.*{says}"):
        RotationConfig.from_env({ENV_ROTATION_CONFIG: raw})


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("{not json", "is not JSON"),
        ('{"function_name": "f", "batch_size": 0}', "batch_size 0"),
        ('{"batchsize": 5}', "batchsize"),
        ("[]", "JSON object"),
    ],
)
def test_a_stream_consumer_that_does_not_parse_names_its_variable(raw, says):
    with pytest.raises(ValueError, match=rf"^environment variable {STREAM_CONSUMER_ENV}.*{says}"):
        StreamConsumer.from_env({STREAM_CONSUMER_ENV: raw})


def test_a_sharding_strategy_that_does_not_parse_names_its_variable():
    env = {ENV_TABLE: "t", ENV_METADATA_TABLE: "m", ENV_PARTITION_KEY: "pk", ENV_SORT_KEY: "sk"}
    env[ENV_STRATEGY] = "roundrobin"
    with pytest.raises(ValueError, match=rf"^environment variable {ENV_STRATEGY}='roundrobin' is not one of"):
        ShardedTable.from_env(env)


_JSON_TEXT = st.recursive(
    st.just("1") | st.just('"[{\\\\\\"]"') | st.just("null"),
    lambda inner: st.lists(inner, max_size=2).map(lambda items: "[" + ",".join(items) + "]")
    | st.lists(inner, max_size=2).map(lambda items: "{" + ",".join(f'"k{i}":{v}' for i, v in enumerate(items)) + "}"),
    max_leaves=12,
)


@settings(max_examples=examples(80), deadline=None)
@given(inner=_JSON_TEXT, extra_depth=st.integers(min_value=0, max_value=50_000))
def test_json_of_any_depth_in_a_setting_is_read_or_refused_naming_the_variable(inner, extra_depth):
    # an operator's JSON setting reaches a recursive decoder: any depth is read, or refused by name, never a crash
    text = "[" * extra_depth + inner + "]" * extra_depth
    expected_depth = extra_depth + _reference_depth(json.loads(inner))
    assert json_depth(text) == expected_depth
    if expected_depth > MAX_JSON_DEPTH:
        with pytest.raises(ValidationError, match=f"environment variable {ENV_ROTATION_CONFIG} nests JSON deeper"):
            RotationConfig.from_env({ENV_ROTATION_CONFIG: text})
    else:
        assert json_setting("--x", text) == json.loads(text)


def _reference_depth(value) -> int:
    """How deep ``value`` (decoded JSON) nests, as the decoder saw it."""
    if isinstance(value, list):
        return 1 + max(map(_reference_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_reference_depth, value.values()), default=0)
    return 0
