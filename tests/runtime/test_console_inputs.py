"""The console as a user runs it, given bad input: a usage error naming what was wrong, never a traceback.

The numeric flags are found on the parsers themselves, so a new flag is covered without editing this file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from cdk_ts._cli import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, quiet_on_closed_pipe
from cdk_ts.console.__main__ import main as console_main
from cdk_ts.console.__main__ import parser as console_parser
from cdk_ts.plan.__main__ import main as plan_main
from cdk_ts.plan.__main__ import parser as plan_parser

ROOT = Path(__file__).resolve().parents[2]
BAD_NUMBERS = ["nan", "inf", "-inf", "-1", "1e999", "ten"]


def _numeric_flags(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """``(subcommand path, flag)`` of every option whose value is converted to a number."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _numeric_flags(sub, (*prefix, name))
        elif action.option_strings and action.type not in (None, str, Path) and action.choices is None:
            found.append((prefix, action.option_strings[-1]))
    return found


CONSOLE_FLAGS = _numeric_flags(console_parser())


def no_aws(monkeypatch):
    """A Region and an endpoint where nothing listens: a test that reached AWS would fail with exit 3."""
    from cdk_ts.testing._engines import free_port

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
PLAN_FLAGS = _numeric_flags(plan_parser())


def test_the_parsers_have_numeric_flags_to_check():
    # a guard on the discovery: were it to find nothing, the tests below would pass vacuously
    assert (("status",), "--retain-periods") in CONSOLE_FLAGS
    assert {flag for _path, flag in PLAN_FLAGS} >= {"--writes-per-second", "--item-size", "--hot-key-share"}


def _usage_error(run, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        run()
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("value", BAD_NUMBERS)
@pytest.mark.parametrize(("path", "flag"), CONSOLE_FLAGS, ids=[f"{' '.join(p)} {f}" for p, f in CONSOLE_FLAGS])
def test_a_bad_number_on_a_console_flag_is_a_usage_error_naming_the_flag(path, flag, value, capsys):
    operation = ["reconcile", "--dry-run"] if path == ("rotate",) else []
    err = _usage_error(lambda: console_main([*path, *operation, "--table-prefix", "x_y", f"{flag}={value}"]), capsys)
    assert f"argument {flag}:" in err


@pytest.mark.parametrize("value", BAD_NUMBERS)
@pytest.mark.parametrize(("path", "flag"), PLAN_FLAGS, ids=[f for _p, f in PLAN_FLAGS])
def test_a_bad_number_on_a_plan_flag_is_a_usage_error_naming_the_flag(path, flag, value, capsys):
    required = ["--writes-per-second", "10", "--item-size", "100"]
    for entry in (["plan", *required, f"{flag}={value}"],):
        err = _usage_error(lambda argv=entry: console_main(argv), capsys)
        assert f"argument {flag}:" in err
    err = _usage_error(lambda: plan_main([*required, f"{flag}={value}"]), capsys)
    assert f"argument {flag}:" in err


@pytest.mark.parametrize(
    "at",
    ["0999-12-31T23:59:59Z", "0001-01-01", "9999-12-31T23:00:00-05:00", "10000-01-01"],
    ids=["year-999", "year-1", "past-9999-in-utc", "five-digit-year"],
)
def test_a_time_out_of_range_is_a_usage_error_naming_at(at, capsys):
    code = console_main(["status", "--table-prefix", "x_y", "--at", at])
    err = capsys.readouterr().err
    assert code == 2 and "--at" in err and "Traceback" not in err


def test_a_time_whose_next_period_has_no_name_is_a_usage_error(capsys, monkeypatch):
    no_aws(monkeypatch)
    code = console_main(["status", "--table-prefix", "x_y", "--at", "9999-12-31T12:00:00Z"])
    err = capsys.readouterr().err
    assert code == 2 and "outside the years 1000-9999" in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["cdk_ts.console", "plan"], ["cdk_ts.plan"]], ids=["cdk-ts plan", "cdk-ts-plan"])
def test_a_reader_that_goes_away_ends_the_command_quietly(command):
    # given a reader that closed its end of the pipe before the command wrote (as `| head -0` does)
    process = subprocess.Popen(
        [sys.executable, "-m", *command, "--writes-per-second", "100", "--item-size", "200"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    process.stdout.close()
    # when it writes, then it ends with a shell's SIGPIPE status and says nothing
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == EXIT_CLOSED_PIPE, stderr
    assert stderr == ""


def test_ctrl_c_ends_quietly_with_a_shells_status(capsys):
    def interrupted() -> int:
        raise KeyboardInterrupt

    assert quiet_on_closed_pipe(interrupted) == EXIT_INTERRUPTED
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("config", "named"),
    [('{"create_lead_seconds": 100000000000000000000}', "create_lead_seconds"),
     ('{"wait_for_new_tables_seconds": 1e300}', "wait_for_new_tables_seconds")],
    ids=["lead", "wait"],
)
def test_a_duration_past_what_a_date_can_hold_is_a_usage_error_not_an_overflow(config, named, capsys, monkeypatch):
    no_aws(monkeypatch)
    code = console_main(["status", "--table-prefix", "x_y", "--rotation-config", config, "--at", "2026-01-01"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert named in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("variable", "value"),
    [("AWS_ENDPOINT_URL", "not a url"), ("AWS_DEFAULT_REGION", "us east")],
    ids=["endpoint", "region"],
)
def test_an_aws_variable_botocore_refuses_is_named_with_its_value(variable, value, capsys, monkeypatch):
    no_aws(monkeypatch)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv(variable, value)
    code = console_main(["status", "--table-prefix", "x_y", "--at", "2026-01-01"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{variable}={value!r}" in err and "Traceback" not in err


def test_a_plot_that_cannot_be_written_is_a_usage_error(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    code = plan_main(["--writes-per-second", "10", "--item-size", "100", "--plot", str(tmp_path / "no" / "such.png")])
    err = capsys.readouterr().err
    assert code == 2 and "--plot" in err and "cannot be written" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["status", "rotate"])
def test_the_period_help_lists_the_periods_a_rotation_takes_and_only_those(command, capsys):
    from cdk_ts_runtime import RotationPeriod

    with pytest.raises(SystemExit):
        console_main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    listed = help_text.rsplit("--period PERIOD", 1)[1].split(" --", 1)[0]  # the option's line, not the usage
    assert "hourly" not in listed
    assert all(period.value in listed for period in RotationPeriod), listed
