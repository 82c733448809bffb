"""One access-log bucket per stack, delivery granted by bucket policy whatever the app's feature flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match, Template

from cdk_ts import (
    DeviceLogTable,
    StreamArchiver,
    TimestreamTable,
    access_logs_bucket,
    secure_bucket,
    stack_access_logs_bucket,
)
from tests.support.iam import policy_statements
from tests.support.nag import new_app

REPO = Path(__file__).resolve().parents[2]
_LOGGING = "logging.s3.amazonaws.com"


@pytest.fixture(scope="module")
def bare_app_stack():
    # given an app WITHOUT the sample's cdk.json feature flags (no serverAccessLogsUseBucketPolicy)
    app = new_app()
    stack = Stack(app, "Bare")
    for name in ("One", "Two"):
        log = DeviceLogTable(stack, f"{name}Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        StreamArchiver(stack, f"{name}Archiver", source=log)
    TimestreamTable(stack, "Series")
    return stack, Template.from_stack(stack)


def _buckets(template: Template) -> dict:
    return template.find_resources("AWS::S3::Bucket")


def test_every_cdk_ts_bucket_in_a_stack_logs_into_one_shared_bucket(bare_app_stack):
    stack, template = bare_app_stack
    logs = stack_access_logs_bucket(stack)  # the same one, not a second
    logs_id = stack.get_logical_id(logs.node.default_child)
    logging = [b["Properties"]["LoggingConfiguration"] for b in _buckets(template).values()
               if "LoggingConfiguration" in b["Properties"]]
    # two archive buckets, two failure buckets, one rejected-records bucket
    assert len(logging) == 5
    assert all(config["DestinationBucketName"] == {"Ref": logs_id} for config in logging)
    assert len({config["LogFilePrefix"] for config in logging}) == 5


def test_no_bucket_uses_an_acl_and_delivery_is_granted_by_policy_per_source(bare_app_stack):
    _stack, template = bare_app_stack
    for bucket in _buckets(template).values():
        assert "AccessControl" not in bucket["Properties"]
        assert bucket["Properties"]["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    statements = [
        s for s in policy_statements(template, "AWS::S3::BucketPolicy") if s.get("Principal") == {"Service": _LOGGING}
    ]
    assert len(statements) == 5
    assert all(s["Action"] == "s3:PutObject" and "aws:SourceArn" in s["Condition"]["ArnLike"] for s in statements)


def test_a_bucket_passed_as_access_logs_bucket_is_used_instead(bare_app_stack):
    stack = Stack(new_app(), "Own")
    mine = access_logs_bucket(stack, "MyLogs")
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "Archiver", source=log, access_logs_bucket=mine)
    template = Template.from_stack(stack)
    assert stack.node.try_find_child("CdkTsAccessLogs") is None
    template.has_resource_properties("AWS::S3::Bucket", {
        "LoggingConfiguration": {"DestinationBucketName": {"Ref": stack.get_logical_id(mine.node.default_child)},
                                 "LogFilePrefix": Match.any_value()},
    })


@pytest.mark.slow  # cfn-lint over one stack in a subprocess: ~7 s
def test_the_bare_app_template_is_cfn_lint_clean_without_w3045(bare_app_stack, tmp_path):
    _stack, template = bare_app_stack
    path = tmp_path / "Bare.template.json"
    path.write_text(json.dumps(template.to_json()))
    # Without the sample's flags CDK itself writes DependsOn that W3005 calls redundant, and W3697 is about
    # Timestream's maintenance mode: neither concerns buckets. Errors and W3045 (a bucket ACL) must not appear.
    result = subprocess.run(
        [str(Path(sys.executable).with_name("cfn-lint")), "--config-file", str(REPO / ".cfnlintrc.yaml"),
         "--ignore-checks", "W3697", "W3005", "--", str(path)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert "W3045" not in result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def _warnings(stack: Stack) -> list[str]:
    """Every warning annotation in ``stack``, as the CDK CLI would print it after synth."""
    return [str(m.entry.data) for m in Annotations.from_stack(stack).find_warning("*", Match.any_value())]


def test_synth_warns_of_no_log_permission_it_could_not_add(bare_app_stack):
    # CDK warns "Unable to add necessary logging permissions to imported target bucket" when a bucket logs into
    # one it did not create; cdk-ts's buckets log into a bucket of this app, granted by policy
    stack, _template = bare_app_stack
    assert [w for w in _warnings(stack) if "logging permissions" in w] == []


def test_a_secure_bucket_logging_into_an_imported_bucket_still_gets_cdks_warning():
    # the check above can fail: the warning is CDK's answer for a log bucket nobody here can grant on
    stack = Stack(new_app(), "Imported")
    theirs = s3.Bucket.from_bucket_name(stack, "Theirs", "their-logs")
    secure_bucket(stack, "Data", server_access_logs_bucket=theirs)
    assert [w for w in _warnings(stack) if "Unable to add necessary logging permissions" in w]
    mine = access_logs_bucket(stack, "Mine")
    secure_bucket(stack, "More", server_access_logs_bucket=mine, server_access_logs_prefix="more/")
    assert len([w for w in _warnings(stack) if "logging permissions" in w]) == 1
