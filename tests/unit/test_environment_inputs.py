"""An environment variable that does not parse names itself, with the value it holds."""

from __future__ import annotations

import pytest

from cdk_ts_runtime import TableLayout
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
