"""``cdk-ts`` (the operator console) as a subprocess against moto_server: status, rotate --dry-run, replay, plan."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdk_ts.testing import server_client_for
from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.config import CapacityTier, RotationConfig
from cdk_ts_runtime._rotation.ownership import ownership_tags
from tests.support.functions import create_settings_function

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]
AT = "2026-03-02T10:00:00Z"


def console(server, *args, credentials=True):
    """``python -m cdk_ts.console ARGS`` (``cdk-ts``) against ``server``; without ``credentials``, none anywhere."""
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": server.endpoint_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    if not credentials:
        for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            env.pop(variable, None)
        nowhere = str(ROOT / "no-such-aws-file")
        env.update(AWS_SHARED_CREDENTIALS_FILE=nowhere, AWS_CONFIG_FILE=nowhere, AWS_EC2_METADATA_DISABLED="true")
    return subprocess.run(
        [sys.executable, "-m", "cdk_ts.console", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def create_table(dynamodb, name, layout, *, owned=True, read=300, write=1000):
    tags = ownership_tags(layout) if owned else {"owner": "someone-else"}
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "N"} for k in ("pk", "sk")],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        Tags=[{"Key": k, "Value": v} for k, v in tags.items()],
    )


def create_rotation_function(server, name, env):
    """A Lambda function holding a rotation's settings, as the construct sets them (never invoked: no Docker)."""
    create_settings_function(server_client_for(server, "iam"), server_client_for(server, "lambda"), name, env)


@pytest.fixture
def rotation(moto_server, unique_name):
    """Yesterday's table at hot capacity, an older one, an expired one and an expired look-alike; today missing."""
    prefix = f"{unique_name}_readings"
    layout = TableLayout(prefix)
    dynamodb = server_client_for(moto_server)
    for day in ("2026-03-01", "2026-02-28", "2026-02-01"):
        create_table(dynamodb, f"{prefix}_{day}", layout)
    create_table(dynamodb, f"{prefix}_2026-02-27", layout, owned=False)
    server_client_for(moto_server, "s3").create_bucket(Bucket=f"{unique_name}-archive")
    config = RotationConfig(
        previous=CapacityTier.provisioned(100, 1), older=CapacityTier.provisioned(1, 1),
        retain_periods=3, archive_bucket=f"{unique_name}-archive", archive_prefix="exports/",
    )
    function = f"{unique_name}-rotation"
    create_rotation_function(
        moto_server, function,
        {**layout.to_env(), "CDK_TS_ROTATION_CONFIG": config.to_json(), "OTHER": "kept"},
    )
    return {"prefix": prefix, "function": function, "dynamodb": dynamodb}


def test_status_from_the_function_lists_tables_tiers_ownership_and_what_is_due(moto_server, rotation):
    prefix = rotation["prefix"]
    result = console(moto_server, "status", "--function", rotation["function"], "--at", AT)

    assert result.returncode == 1, result.stderr  # the look-alike needs attention
    text = result.stdout
    assert f"Rotation {prefix} (daily) at 2026-03-02T10:00:00+00:00" in text
    assert "archive: s3://" in text and "/exports/" in text
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip().startswith(prefix)}
    assert "previous" in lines[f"{prefix}_2026-03-01"] and "provisioned 300/1000" in lines[f"{prefix}_2026-03-01"]
    assert "100/1 (next: capacity)" in lines[f"{prefix}_2026-03-01"]
    assert "LOOK-ALIKE" in lines[f"{prefix}_2026-02-27"]
    assert f"Next table: {prefix}_2026-03-03" in text and "not created yet" in text
    assert f"{prefix}_2026-02-01: no completed export at or after the period's end: the next run starts one" in text
    assert "Needs attention:" in text and "is a look-alike" in text
    assert f"current period's table {prefix}_2026-03-02 is missing" in text


def test_status_json_is_for_scripts(moto_server, rotation):
    prefix = rotation["prefix"]
    result = console(moto_server, "status", "--function", rotation["function"], "--at", AT, "--json")

    assert result.returncode == 1, result.stderr
    state = json.loads(result.stdout)
    tables = {t["name"]: t for t in state["tables"]}
    assert [tables[f"{prefix}_{d}"]["role"] for d in ("2026-03-01", "2026-02-28")] == ["previous", "older"]
    previous = tables[f"{prefix}_2026-03-01"]
    assert previous["tier"] == {
        "billing_mode": "PROVISIONED", "read_capacity": 300, "write_capacity": 1000,
        "warm_read_units_per_second": previous["tier"]["warm_read_units_per_second"],
        "warm_write_units_per_second": previous["tier"]["warm_write_units_per_second"], "table_class": "STANDARD",
    }
    assert previous["wanted"] == "100/1" and previous["steps_left"] == ["capacity"] and previous["owned"] is True
    assert tables[f"{prefix}_2026-02-27"]["owned"] is False
    assert tables[f"{prefix}_2026-02-01"]["expired"] is True
    assert tables[f"{prefix}_2026-02-01"]["export"]["proven"] is False
    assert state["next_table"] == {
        "name": f"{prefix}_2026-03-03", "present": False, "starts": "2026-03-03T00:00:00+00:00",
        "inside_create_lead": False,
    }
    assert {d["table"] for d in state["due_for_deletion"]} == {f"{prefix}_2026-02-01", f"{prefix}_2026-02-27"}
    assert len(state["attention"]) == 2


def test_status_from_flags_with_nothing_to_see_exits_0(moto_server, unique_name):
    prefix = f"{unique_name}_calm"
    create_table(server_client_for(moto_server), f"{prefix}_2026-03-02", TableLayout(prefix))
    result = console(moto_server, "status", "--table-prefix", prefix, "--period", "daily", "--at", AT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Needs attention: nothing" in result.stdout and "Due for deletion: none" in result.stdout
    assert "300/1000 (at tier)" in result.stdout


def test_rotate_dry_run_reports_the_changes_and_changes_nothing(moto_server, rotation):
    prefix, dynamodb = rotation["prefix"], rotation["dynamodb"]
    before = sorted(n for n in dynamodb.list_tables()["TableNames"] if n.startswith(prefix))

    human = console(moto_server, "rotate", "--dry-run", "reconcile", "--function", rotation["function"], "--at", AT)
    result = console(
        moto_server, "rotate", "--dry-run", "reconcile", "--function", rotation["function"], "--at", AT, "--json"
    )

    assert (human.returncode, result.returncode) == (1, 1), result.stderr  # the expired look-alike is not_owned
    report = json.loads(result.stdout)
    assert report["dry_run"] is True and report["operation"] == "reconcile"
    done = {(a["action"], a["table"]) for a in report["actions"]}
    assert {("create", f"{prefix}_2026-03-02"), ("update", f"{prefix}_2026-03-01"), ("update", f"{prefix}_2026-02-28"),
            ("export_failed", f"{prefix}_2026-02-01"), ("not_owned", f"{prefix}_2026-02-27")} <= done
    # the expired table has no point-in-time recovery: the real run's export would be refused, and the dry run says so
    [refused] = [a for a in report["actions"] if a["action"] == "export_failed"]
    assert refused["reason"].startswith("PointInTimeRecoveryUnavailableException")
    assert "Dry run of reconcile at 2026-03-02T10:00:00+00:00: nothing was changed." in human.stdout
    assert f"create                   {prefix}_2026-03-02" in human.stdout
    assert sorted(n for n in dynamodb.list_tables()["TableNames"] if n.startswith(prefix)) == before
    assert dynamodb.describe_table(TableName=f"{prefix}_2026-03-01")["Table"]["ProvisionedThroughput"][
        "ReadCapacityUnits"] == 300


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["status", "--function", "no-such-function"], "no Lambda function 'no-such-function'"),
        (["status"], "no rotation given: pass --function NAME"),
        (["status", "--table-prefix", "x_y", "--at", "yesterday"], "--at 'yesterday' is not ISO-8601"),
        (["status", "--table-prefix", "x_y", "--period", "fortnightly"], "fortnightly"),
        (["rotate", "reconcile", "--table-prefix", "x_y"], "the following arguments are required: --dry-run"),
    ],
    ids=["no-function", "no-rotation", "bad-time", "bad-period", "not-dry"],
)
def test_usage_and_configuration_errors_exit_2(moto_server, args, message):
    result = console(moto_server, *args)
    assert result.returncode == 2
    assert message in result.stderr and result.stdout == ""


def test_a_function_without_a_rotation_is_a_configuration_error(moto_server, unique_name):
    create_rotation_function(moto_server, f"{unique_name}-other", {"SOMETHING": "else"})
    result = console(moto_server, "status", "--function", f"{unique_name}-other")
    assert result.returncode == 2 and "has no CDK_TS_TABLE_PREFIX" in result.stderr


def test_status_of_a_function_bind_set_up_says_it_is_not_the_rotation_function(moto_server, unique_name):
    # given a user function that bind prepared: the tables' layout in its environment, no rotation settings
    layout = TableLayout(f"{unique_name}_readings")
    create_rotation_function(moto_server, f"{unique_name}-writer", layout.to_env())
    # when status is asked of it
    result = console(moto_server, "status", "--function", f"{unique_name}-writer", "--at", AT)
    # then no report of a rotation it does not run (no "retention: unlimited"), but what it is and the way out
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert "is not a rotation function" in result.stderr
    assert "RotatingTimeSeriesTables" in result.stderr and "--table-prefix" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow  # ~6 s measured on a shared 2-core machine
def test_plan_and_replay_moved_under_cdk_ts_and_the_old_commands_still_work(moto_server, unique_name):
    flags = ["--writes-per-second", "100", "--item-size", "200"]
    assert console(moto_server, "plan", *flags).stdout == subprocess.run(
        [sys.executable, "-m", "cdk_ts.plan", *flags], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    s3 = server_client_for(moto_server, "s3")
    s3.create_bucket(Bucket=f"{unique_name}-failures")
    replay = console(moto_server, "replay", "--bucket", f"{unique_name}-failures", "--archive-bucket", "x", "--json")
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout) == {"replayed": [], "failed": [], "records": 0}


def test_the_console_does_not_load_aws_cdk():
    check = subprocess.run(
        [sys.executable, "-c", "import sys, cdk_ts.console.__main__; print('aws_cdk' in sys.modules)"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    assert check.stdout.strip() == "False"


def test_an_aws_failure_exits_3_and_says_so(unique_name):
    from types import SimpleNamespace

    from cdk_ts.testing._engines import free_port

    closed = SimpleNamespace(endpoint_url=f"http://127.0.0.1:{free_port()}")  # nothing listens there
    result = console(closed, "status", "--table-prefix", f"{unique_name}_x")
    assert result.returncode == 3, result.stderr
    assert "cdk-ts status: AWS error: EndpointConnectionError" in result.stderr and result.stdout == ""


def test_a_function_whose_environment_does_not_parse_names_the_variable(moto_server, unique_name):
    env = {"CDK_TS_TABLE_PREFIX": "x_y", "CDK_TS_PERIOD": "hourly", "CDK_TS_ROTATION_CONFIG": "{}"}
    create_rotation_function(moto_server, f"{unique_name}-bad", env)
    result = console(moto_server, "status", "--function", f"{unique_name}-bad")
    assert result.returncode == 2, result.stderr
    assert "environment variable CDK_TS_PERIOD='hourly'" in result.stderr and "Traceback" not in result.stderr


def test_a_replay_that_cannot_reach_aws_exits_3_without_a_traceback(unique_name):
    from types import SimpleNamespace

    from cdk_ts.testing._engines import free_port

    closed = SimpleNamespace(endpoint_url=f"http://127.0.0.1:{free_port()}")  # nothing listens there
    result = console(closed, "replay", "--bucket", f"{unique_name}-failures", "--archive-bucket", "x")
    assert result.returncode == 3, result.stderr
    assert "cdk-ts replay: AWS error: EndpointConnectionError" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_replay_of_a_missing_bucket_is_one_line_and_exit_3_as_status(moto_server, unique_name):
    result = console(moto_server, "replay", "--bucket", f"{unique_name}-nowhere", "--archive-bucket", "x")
    assert result.returncode == 3, result.stderr
    assert result.stderr.splitlines() == [
        "cdk-ts replay: AWS error: NoSuchBucket: An error occurred (NoSuchBucket) when calling the ListObjectsV2 "
        f"operation: The specified bucket does not exist (--bucket {unique_name}-nowhere)"
    ]
    assert result.stdout == ""


def test_a_replay_without_credentials_is_one_line_and_exit_3_as_status(moto_server, unique_name):
    result = console(moto_server, "replay", "--bucket", f"{unique_name}-failures", "--archive-bucket", "x",
                     credentials=False)
    status = console(moto_server, "status", "--table-prefix", f"{unique_name}_x", credentials=False)
    assert (result.returncode, status.returncode) == (3, 3), result.stderr
    assert result.stderr.splitlines() == ["cdk-ts replay: AWS error: NoCredentialsError: Unable to locate credentials"]
    assert result.stdout == ""


def test_replay_prints_a_summary_for_people_and_the_report_with_json(moto_server, unique_name):
    s3 = server_client_for(moto_server, "s3")
    s3.create_bucket(Bucket=f"{unique_name}-failures")
    s3.put_object(Bucket=f"{unique_name}-failures", Key="aws/lambda/uuid/shard/2026/03/02/x", Body=b"{}")
    flags = ["--bucket", f"{unique_name}-failures", "--archive-bucket", f"{unique_name}-archive"]

    human = console(moto_server, "replay", *flags)
    scripted = console(moto_server, "replay", *flags, "--json")

    assert (human.returncode, scripted.returncode) == (1, 1), human.stderr  # the object is no failure record
    assert json.loads(scripted.stdout)["failed"] == [{
        "failure": "aws/lambda/uuid/shard/2026/03/02/x",
        "error": "ValidationError: not a DynamoDB stream failure record (no DDBStreamBatchInfo)",
    }]
    assert human.stdout.splitlines()[0] == (
        f"Replay of s3://{unique_name}-failures/aws/lambda/ into s3://{unique_name}-archive/dynamodb/: "
        "0 failure record(s) replayed (0 stream records), 1 left in place"
    )
    assert ("  left in place: aws/lambda/uuid/shard/2026/03/02/x: ValidationError: not a DynamoDB stream failure "
            "record (no DDBStreamBatchInfo)") in human.stdout.splitlines()
    assert "Found credentials" not in human.stderr  # botocore's own progress is not the replay's


def test_replay_usage_errors_name_cdk_ts_replay(moto_server):
    result = console(moto_server, "replay", "--bucket", "failures")
    assert result.returncode == 2
    assert "cdk-ts replay: error: --archive-bucket is required (or set CDK_TS_ARCHIVE_BUCKET)" in result.stderr
    assert "cdk_ts_runtime.archiver" not in result.stderr and "Traceback" not in result.stderr


def test_a_dry_run_lists_changes_by_table_in_words_not_python_lists(moto_server, rotation):
    prefix = rotation["prefix"]
    human = console(moto_server, "rotate", "--dry-run", "reconcile", "--function", rotation["function"], "--at", AT)
    lines = [line for line in human.stdout.splitlines()[1:] if line.strip()]
    tables = [line.split()[1] for line in lines]
    assert tables == sorted(tables), human.stdout
    assert "['" not in human.stdout, human.stdout
    assert f"update                   {prefix}_2026-03-01  (tier=100/1; was=300/1000; changes=ProvisionedThroughput" \
        in human.stdout
