"""Editors and type checkers resolve the public API: mypy accepts the documented calls and names the bad ones."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.support.mypy_config import config_following_only, reached_modules
from tests.support.processes import run_captured

# One mypy run over the user code and cdk_ts.testing together, reading in full the aws-cdk-lib modules they reach
# through imports and no others (tests/support/mypy_config.py), writing no cache (--cache-dir /dev/null: nothing
# reads it). Measured cold: ~65 CPU s, against ~180 s for each of the two runs before. `-m "not slow"` leaves it out.
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
    user_code = tmp_path / "app.py"
    user_code.write_text(USER_CODE)
    config = tmp_path / "mypy.ini"
    config.write_text(config_following_only(aws_cdk_modules_reached()))
    reported = mypy_reports(config, user_code, ROOT / "cdk_ts" / "testing", ROOT / "cdk_ts" / "console" / "local.py")
    documented_calls_type_check_and_bad_ones_are_named(reported.pop(user_code, []), reported)
    cdk_ts_testing_type_checks_on_its_own(reported)


def aws_cdk_modules_reached() -> set[str]:
    """The aws_cdk modules the user code, cdk_ts and cdk_ts_runtime reach through imports (all that mypy reads)."""
    sources = [*(ROOT / "cdk_ts").rglob("*.py"), *(ROOT / "lambdas").rglob("*.py")]
    reached = reached_modules([USER_CODE, *(path.read_text() for path in sources)])
    # aws_dynamodb's own type imports, found in the package's text: the reading finds what modules need
    assert {"aws_cdk.aws_dynamodb", "aws_cdk.aws_iam", "aws_cdk.aws_kms", "aws_cdk.interfaces.aws_dynamodb"} <= reached
    return reached


def mypy_reports(config: Path, *paths: Path) -> dict[Path, list[tuple[int, str, str]]]:
    """mypy over ``paths`` as a user's editor runs it (what they import followed, silently): (line, kind, text) by
    file. ``MYPYPATH`` finds cdk_ts and cdk_ts_runtime in this checkout."""
    cwd = paths[0].parent
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(ROOT), str(ROOT / "lambdas")])}
    result = run_captured(
        [sys.executable, "-m", "mypy", "--config-file", config, "--follow-imports=silent", "--ignore-missing-imports",
         "--cache-dir", os.devnull, "--no-error-summary", *paths],
        env=env, cwd=cwd, timeout=600,
    )
    assert result.returncode in (0, 1) and not result.stderr, result.stdout[-3000:] + result.stderr[-3000:]
    reported: dict[Path, list[tuple[int, str, str]]] = {}
    for path, line, kind, text in re.findall(r"^(.+?):(\d+): (error|note): (.*)$", result.stdout, re.MULTILINE):
        reported.setdefault((cwd / path).resolve(), []).append((int(line), kind, text))
    return reported


def documented_calls_type_check_and_bad_ones_are_named(reported: list[tuple[int, str, str]], others: dict) -> None:
    """mypy reads the documented calls' types and names each misspelt or mistyped option."""
    revealed = {line: text for line, kind, text in reported if text.startswith("Revealed type")}
    errors = {line: text for line, kind, text in reported if kind == "error"}
    assert revealed == {
        14: 'Revealed type is "cdk_ts_runtime._rotation.config.CapacityTier"',
        15: 'Revealed type is "aws_cdk.aws_cloudwatch.Metric"',
    }, (reported, others)
    assert sorted(errors) == [16, 17, 18, 19, 20], reported  # the documented calls above line 16 type-check
    assert 'Unexpected keyword argument "max_read_request_unit" for "DeviceLogTable"' in errors[16]
    assert 'Argument "warm_read_units_per_second" to "provisioned"' in errors[17]
    assert 'Unexpected keyword argument "max_read_units"' in errors[18]
    assert 'Unexpected keyword argument "periode" for "RotatingTimeSeriesTables"' in errors[19]
    assert 'Argument "time_unit" to "from_table_prefix"' in errors[20]


def cdk_ts_testing_type_checks_on_its_own(reported: dict[Path, list[tuple[int, str, str]]]) -> None:
    """cdk_ts.testing ships typed (py.typed): its own modules check clean; what they import is checked elsewhere."""
    errors = {path: found for path, found in reported.items() if any(kind == "error" for _, kind, _ in found)}
    assert errors == {}
