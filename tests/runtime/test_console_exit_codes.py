"""docs/console.md's exit-code table, held by every ``cdk-ts`` command given bad input, and errors that name the input.

Each command runs in-process (``cdk_ts.console.__main__.main``), so a traceback would be an exception escaping the
test. AWS is a closed local port: a command that reached it when it should have refused first exits 3, not 2.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts.console import ROTATION_HANDLER
from cdk_ts.console.__main__ import main as console_main
from cdk_ts.testing._engines import free_port
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._periods import RotationPeriod
from cdk_ts_runtime._rotation.config import RotationConfig
from tests.support.examples import examples
from tests.support.functions import create_settings_function

ROOT = Path(__file__).resolve().parents[2]
#: A row of the exit-code table: | 2 | usage or configuration error: ... |
_ROW = re.compile(r"^\| (\d+) \| (.+) \|$", re.MULTILINE)


def documented_codes() -> dict[int, str]:
    """docs/console.md's exit codes and what each means."""
    return {int(code): meaning for code, meaning in _ROW.findall((ROOT / "docs" / "console.md").read_text())}


@pytest.fixture
def closed_aws(monkeypatch):
    """Credentials, no Region, and an endpoint where nothing listens; boto3's default session restored after."""
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    for variable in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(ROOT / "no-such-aws-config"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of ``cdk-ts ARGV`` (argparse's own usage errors exit through SystemExit)."""
    try:
        code = console_main(list(argv))
    except SystemExit as exited:
        code = exited.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    return code, out, err


#: Bad input for every command, and what the error must name (a flag, as the user typed it).
BAD_INPUT = {
    "status --period": (["status", "--table-prefix", "t_x", "--period", "hourly"], "--period 'hourly'"),
    "status no rotation": (["status"], "--table-prefix"),
    "status --rotation-config": (["status", "--table-prefix", "t_x", "--rotation-config", '{"retain_periodz": 3}'],
                                 "--rotation-config"),
    "status --archive-bucket": (["status", "--table-prefix", "t_x", "--archive-bucket", "b"],
                                "--archive-bucket 'b': archive_bucket needs retain_periods"),
    "status --retain-periods": (["status", "--table-prefix", "t_x", "--retain-periods", "1"], "--retain-periods"),
    "status no Region": (["status", "--table-prefix", "t_x"], "--region"),
    "rotate --dry-run --at": (["rotate", "--dry-run", "create_new", "--table-prefix", "t_x", "--at", "soon"],
                              "--at 'soon'"),
    "rotate without --dry-run": (["rotate", "create_new", "--table-prefix", "t_x"], "--dry-run"),
    "archive-status --since": (["archive-status", "--bucket", "b", "--since", "yesterday"], "--since 'yesterday'"),
    "archive-status --prefix": (["archive-status", "--bucket", "b", "--prefix", "raw", "--region", "eu-west-1"],
                                "--prefix 'raw'"),
    "archive-status no Region": (["archive-status", "--bucket", "b"], "--region"),
    "replay": (["replay", "--archive-bucket", "x"], "--bucket"),
    "plan": (["plan", "--writes-per-second", "ten", "--item-size", "200"], "--writes-per-second"),
    "local --port negative": (["local", "--port", "-1"], "--port"),
    "local --port out of range": (["local", "--port", "65536"], "--port"),
    "local --set": (["local", "--set", "write_units_per_second"], "--set"),
}


def test_the_table_documents_every_code_the_commands_use():
    assert set(documented_codes()) == {0, 1, 2, 3, 130, 141}
    assert documented_codes()[2].startswith("usage or configuration error")


@pytest.mark.parametrize(("argv", "named"), BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_every_command_given_bad_input_exits_2_naming_the_input(argv, named, closed_aws, capsys):
    code, _out, err = run(capsys, *argv)
    assert code == 2, err
    assert named in err, err
    assert "AWS error" not in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["status", "--table-prefix", "t_x", "--region", "eu-west-1"],
    ["rotate", "--dry-run", "reconcile", "--table-prefix", "t_x", "--region", "eu-west-1"],
    ["archive-status", "--bucket", "b", "--region", "eu-west-1"],
    ["replay", "--bucket", "failures", "--archive-bucket", "x", "--region", "eu-west-1"],
], ids=["status", "rotate", "archive-status", "replay"])
def test_every_command_that_calls_aws_takes_region_and_exits_3_when_aws_fails(argv, closed_aws, capsys):
    code, out, err = run(capsys, *argv)
    assert code == 3, err
    assert err.startswith(f"cdk-ts {argv[0]}: AWS error: EndpointConnectionError") and out == ""
    if argv[0] != "replay":  # replay makes its one S3 client with the Region; the others use boto3's session
        assert boto3.DEFAULT_SESSION.region_name == "eu-west-1"


def test_local_refuses_a_port_another_program_holds_and_prints_no_banner(capsys):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out, err = run(capsys, "local", "--port", str(port), "--json")
    assert code == 2 and out == ""
    assert err == f"cdk-ts local: error: --port {port} is in use by another program: stop it, pick another port, " \
                  "or leave --port out for a free one\n"


@pytest.mark.server
def test_local_refuses_a_port_another_cdk_ts_local_holds_and_prints_no_banner(rules_proxy, capsys):
    # a --json reader must never read a banner for a server that is not this command's
    port = int(rules_proxy.endpoint_url.rsplit(":", 1)[1])
    code, out, err = run(capsys, "local", "--port", str(port), "--json")
    assert code == 2 and out == ""
    assert f"--port {port} is in use by a DynamoDB endpoint (another cdk-ts local" in err


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(period=st.text(max_size=12).filter(lambda text: text.strip() and not text.startswith("-")))
def test_any_period_flag_that_is_not_a_period_is_named_as_the_flag(period, closed_aws, capsys):
    try:
        RotationPeriod.parse(period)
        return  # a period after all (any case, spaces): not this test's input
    except ValueError:
        pass
    code, _out, err = run(capsys, "status", "--table-prefix", "t_x", "--period", period)
    assert code == 2, err
    assert err.startswith(f"cdk-ts status: error: --period {period!r}"), err
    assert "CDK_TS_PERIOD" not in err


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_SETTING_NAMES = st.sampled_from(sorted(RotationConfig.__dataclass_fields__)) | st.text(max_size=10)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=st.dictionaries(_SETTING_NAMES, _JSON, max_size=3) | _JSON)
def test_any_rotation_config_flag_is_refused_naming_the_flag_or_accepted_whole(config, closed_aws, capsys):
    # a malformed setting (not an object, a misspelt key, a wrong type) is a usage error naming the flag,
    # never "AWS error"; only a config RotationConfig takes goes on to AWS (here: a closed port, exit 3)
    text = json.dumps(config)
    code, _out, err = run(capsys, "status", "--table-prefix", "t_x", "--region", "eu-west-1",
                          f"--rotation-config={text}", "--at", "2026-03-02T10:00:00Z")
    try:
        valid = isinstance(config, dict) and RotationConfig.from_dict(config) is not None
    except (ValidationError, TypeError, ValueError):
        valid = False
    if valid:
        assert code == 3 and "EndpointConnectionError" in err, err
    else:
        assert code == 2, err
        assert err.startswith("cdk-ts status: error: --rotation-config"), err


@pytest.mark.parametrize("depth", [33, 5_000, 200_000])
def test_rotation_config_nested_past_any_setting_is_refused_naming_the_flag(depth, closed_aws, capsys):
    code, _out, err = run(capsys, "status", "--table-prefix", "t_x", "--rotation-config", "[" * depth + "]" * depth)
    assert code == 2
    assert err.startswith("cdk-ts status: error: --rotation-config nests JSON deeper than 32 levels")


@pytest.fixture
def deployed_function(aws, monkeypatch):
    """Make a Lambda function (moto in-process, never invoked) whose environment is the given one; returns its name."""
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)

    def make(env: dict[str, str]) -> str:
        return create_settings_function(boto3.client("iam"), boto3.client("lambda"), "rotation", env,
                                        handler=ROTATION_HANDLER)

    return make


@pytest.mark.parametrize(("config", "named"), [
    ("{not json", "environment variable CDK_TS_ROTATION_CONFIG is not JSON"),
    ("[1]", "environment variable CDK_TS_ROTATION_CONFIG must be a JSON object, got list"),
    ('{"retain_periodz": 3}', "unknown rotation settings: retain_periodz"),
    ('{"retain_periods": "seven"}', "retain_periods 'seven' must be a whole number"),
    ('{"current": 5}', "capacity tier 5 must be an object"),
    ("[" * 50_000, "environment variable CDK_TS_ROTATION_CONFIG nests JSON deeper than 32 levels"),
], ids=["not JSON", "a list", "misspelt key", "wrong type", "wrong shape", "deep"])
def test_a_malformed_function_setting_is_exit_2_naming_the_function_and_its_variable(
    deployed_function, config, named, capsys
):
    function = deployed_function({"CDK_TS_TABLE_PREFIX": "readings", "CDK_TS_ROTATION_CONFIG": config})
    code, out, err = run(capsys, "status", "--function", function, "--at", "2026-03-02T10:00:00Z")
    assert code == 2 and out == "", err
    assert err.startswith(f"cdk-ts status: error: function {function!r}: "), err
    assert named in err and "AWS error" not in err
