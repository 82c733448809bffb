"""``cdk-ts archive-status`` on moto: open, pending, compacted and late partitions, from flags or the function."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime

import boto3

from cdk_ts.console.__main__ import main
from cdk_ts_runtime._compaction import ArchiveCompactor
from tests.support.compaction import archive, compaction_settings, sample_changes
from tests.support.streams import BUCKET


def test_it_lists_each_partition_with_its_state_and_the_late_objects_waiting(stream_table, capsys):
    s3 = boto3.client("s3", region_name="us-east-1")
    records = sample_changes(*stream_table)
    archive(s3, records[:7])
    ArchiveCompactor(compaction_settings(), s3_client=s3).run(now=datetime(2026, 3, 2, 1, 20, tzinfo=UTC))
    archive(s3, records[7:])  # 00:00 on 2 March: still open
    archive(s3, records[3:4])  # a redelivery in a new object of the compacted 23:00

    code = main(["archive-status", "--bucket", BUCKET, "--at", "2026-03-02T01:30:00Z", "--since", "2026-03-01",
                 "--json"])

    assert code == 0
    answer = json.loads(capsys.readouterr().out)
    states = {(p["hour"], p["state"], p["late_objects"], p["compacted_rows"]) for p in answer["partitions"]}
    assert states == {("22", "compacted", 0, 3), ("23", "late", 1, 3), ("00", "open", 0, None)}
    assert answer["summary"]["late_objects"] == 1 and answer["summary"]["attention"] == []


def test_it_reads_the_settings_from_the_compaction_function_and_prints_text(stream_table, capsys):
    s3 = boto3.client("s3", region_name="us-east-1")
    archive(s3, sample_changes(*stream_table))
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as bundle:
        bundle.writestr("index.py", "def handler(event, context):\n    return {}\n")
    role = boto3.client("iam").create_role(RoleName="compaction", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    boto3.client("lambda").create_function(
        FunctionName="compaction", Runtime="python3.13", Role=role, Handler="index.handler",
        Code={"ZipFile": code.getvalue()},
        Environment={"Variables": {"CDK_TS_COMPACTION_SETTINGS": json.dumps(compaction_settings(
            granularity="day").as_json())}},
    )

    exit_code = main(["archive-status", "--function", "compaction", "--at", "2026-03-02T12:00:00Z",
                      "--since", "2026-03-01"])

    text = capsys.readouterr().out
    assert exit_code == 0
    assert "(per day, grace 1:00:00)" in text
    assert [line.split()[2] for line in text.splitlines()[2:4]] == ["pending", "open"]  # 1 March closed, 2 March not


def test_an_unknown_function_is_a_usage_error(aws, capsys):
    assert main(["archive-status", "--function", "nope"]) == 2
    assert "no Lambda function 'nope'" in capsys.readouterr().err


def test_a_since_before_the_raw_layers_reach_is_refused_naming_it_before_any_listing(aws, capsys):
    # a typo in the year: without the guard, a thousand years of days, each listed per table
    assert main(["archive-status", "--bucket", BUCKET, "--at", "2026-03-02T01:30:00Z", "--since", "1026-03-01"]) == 2
    assert "since 1026-03-01 is before 2016-03-01 (without a raw retention, at most 3653 days back" in (
        capsys.readouterr().err)
