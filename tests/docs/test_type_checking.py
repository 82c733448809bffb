"""Editors and type checkers resolve the public API: mypy accepts the documented calls and names the bad ones."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_captured

# mypy over cdk_ts, cdk_ts_runtime and aws-cdk-lib's stubs: about a minute cold, then ten seconds with the cache the
# first run leaves, so one test makes both checks in turn (pytest-xdist 3.8's xdist_group does not hold with pytest
# 9.2, so two tests could not be kept on one worker); `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

USER_CODE = '''\
from aws_cdk import App, Stack
from aws_cdk.aws_dynamodb import TableClass

from cdk_ts import CapacityTier, DeviceLogTable, RotatingTimeSeriesTables, RotationMetric, ShardMetadataTable

stack = Stack(App(), "S")
log = DeviceLogTable(stack, "Log", max_read_request_units=100, table_class="STANDARD")
ShardMetadataTable(stack, "Shards", main_table=log, warm_write_units_per_second=5000)
provisioned = CapacityTier.provisioned(10, 10, warm_read_units_per_second=1000, right_size=True)
on_demand = CapacityTier.on_demand(max_read_request_units=100, table_class=TableClass.STANDARD_INFREQUENT_ACCESS)
flag: bool = on_demand.on_demand
tables = RotatingTimeSeriesTables(stack, "T", table_prefix="m", current_tier=on_demand, previous_tier=provisioned)
RotatingTimeSeriesTables.from_table_prefix(stack, "I", table_prefix="m", period="weekly", time_unit="s")
reveal_type(on_demand)
reveal_type(tables.metric(RotationMetric.FAILED_TABLES))
DeviceLogTable(stack, "Bad", max_read_request_unit=100)
CapacityTier.provisioned(10, 10, warm_read_units_per_second="x")
CapacityTier.on_demand(max_read_units=5)
RotatingTimeSeriesTables(stack, "Bad", table_prefix="b", periode="weekly")
RotatingTimeSeriesTables.from_table_prefix(stack, "Bad2", table_prefix="b", time_unit=1000)
'''


def test_mypy_accepts_the_documented_calls_and_cdk_ts_testing_and_names_the_bad_calls(tmp_path):
    cache = tmp_path / "cache"
    documented_calls_type_check_and_bad_ones_are_named(tmp_path, cache)
    cdk_ts_testing_type_checks_on_its_own(cache)


def documented_calls_type_check_and_bad_ones_are_named(tmp_path: Path, cache: Path) -> None:
    """mypy reads the documented calls' types and names each misspelt or mistyped option."""
    user_code = tmp_path / "app.py"
    user_code.write_text(USER_CODE)
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(ROOT), str(ROOT / "lambdas")])}
    result = run_captured(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
         "--cache-dir", cache, "--no-error-summary", user_code],
        env=env, cwd=tmp_path, timeout=600,
    )
    reported = re.findall(r"app\.py:(\d+): (error|note): (.*)", result.stdout)
    revealed = {int(line): text for line, kind, text in reported if text.startswith("Revealed type")}
    errors = {int(line): text for line, kind, text in reported if kind == "error"}
    assert revealed == {
        14: 'Revealed type is "cdk_ts_runtime._rotation.config.CapacityTier"',
        15: 'Revealed type is "aws_cdk.aws_cloudwatch.Metric"',
    }, result.stdout
    assert sorted(errors) == [16, 17, 18, 19, 20], result.stdout  # the documented calls above line 16 type-check
    assert 'Unexpected keyword argument "max_read_request_unit" for "DeviceLogTable"' in errors[16]
    assert 'Argument "warm_read_units_per_second" to "provisioned"' in errors[17]
    assert 'Unexpected keyword argument "max_read_units"' in errors[18]
    assert 'Unexpected keyword argument "periode" for "RotatingTimeSeriesTables"' in errors[19]
    assert 'Argument "time_unit" to "from_table_prefix"' in errors[20]


def cdk_ts_testing_type_checks_on_its_own(cache: Path) -> None:
    """cdk_ts.testing ships typed (py.typed): its own modules check clean; what they import is checked elsewhere."""
    result = run_captured(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
         "--cache-dir", cache, "cdk_ts/testing", "cdk_ts/console/local.py"],
        cwd=ROOT, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
