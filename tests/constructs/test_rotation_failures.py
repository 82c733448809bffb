"""RotatingTimeSeriesTables keeps the rotation function's own failures: a dead-letter queue, its alarm, its metric."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template
from cdk_nag import HIPAASecurityChecks, NIST80053R5Checks, ServerlessChecks

from cdk_ts.monitoring import MonitoringDashboard
from cdk_ts.rotation._runs import DEPLOY_TIME_RUN_TIMEOUT, RUN_TIMEOUT
from cdk_ts.rotation.tables import RotatingTimeSeriesTables
from tests.support.iam import policy_statements
from tests.support.nag import new_app, new_stack, unacknowledged_findings
from tests.support.rotating_tables import rotation_function


@pytest.fixture(scope="module")
def alarmed():
    stack = Stack(new_app(), "Test")
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics", retain_periods=3)
    tables.add_default_alarms()
    return stack, tables, Template.from_stack(stack)


def test_the_function_dead_letters_failed_asynchronous_invocations_to_its_own_queue(alarmed):
    stack, tables, template = alarmed
    queue_arn = stack.resolve(tables.function_dead_letter_queue.queue_arn)
    assert rotation_function(template)["DeadLetterConfig"] == {"TargetArn": queue_arn}
    # the schedules' queue is for undelivered events: a different queue, so each alarm says which failure it is
    assert queue_arn != stack.resolve(tables.schedule_dead_letter_queue.queue_arn)
    send = [s for s in policy_statements(template) if s["Resource"] == queue_arn]
    assert [s["Action"] for s in send] == ["sqs:SendMessage"]


def test_the_functions_queue_is_encrypted_ssl_only_and_keeps_messages_14_days(alarmed):
    stack, tables, template = alarmed
    queue_id = stack.get_logical_id(tables.function_dead_letter_queue.node.default_child)
    queue = template.to_json()["Resources"][queue_id]
    assert queue["Properties"] == {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True}
    (policy,) = template.find_resources(
        "AWS::SQS::QueuePolicy", {"Properties": {"Queues": [{"Ref": queue_id}]}}
    ).values()
    (deny,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert (deny["Effect"], deny["Condition"]) == ("Deny", {"Bool": {"aws:SecureTransport": "false"}})


def test_an_alarm_fires_on_the_first_kept_failure_and_is_a_typed_attribute(alarmed):
    stack, tables, template = alarmed
    alarm = tables.function_dead_letters_alarm
    assert alarm is not None and tables.alarms["function_dead_letters"] is alarm
    props = template.to_json()["Resources"][stack.get_logical_id(alarm.node.default_child)]["Properties"]
    assert (props["MetricName"], props["Namespace"], props["Statistic"]) == (
        "ApproximateNumberOfMessagesVisible", "AWS/SQS", "Maximum"
    )
    assert props["Dimensions"] == [
        {"Name": "QueueName", "Value": stack.resolve(tables.function_dead_letter_queue.queue_name)}
    ]
    assert (props["Threshold"], props["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert "failed on every attempt" in props["AlarmDescription"]


def test_the_alarm_is_none_until_default_alarms_are_added():
    tables = RotatingTimeSeriesTables(Stack(new_app(), "Test"), "T", table_prefix="metrics", retain_periods=3)
    assert tables.function_dead_letters_alarm is None


def test_the_metric_overrides_its_defaults_with_the_options_given(alarmed):
    _stack, tables, _template = alarmed
    metric = tables.metric_function_dead_letters(statistic="Sum", label="kept")
    assert (metric.metric_name, metric.statistic, metric.label) == ("ApproximateNumberOfMessagesVisible", "Sum", "kept")
    assert tables.metric_function_dead_letters().statistic == "Maximum"


def test_the_dashboard_graphs_the_kept_failures_and_shows_their_alarm():
    stack = Stack(new_app(), "Test")
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics", retain_periods=3)
    tables.add_default_alarms()
    dashboard = MonitoringDashboard(stack, "Dashboard")
    dashboard.monitor(tables)
    assert any(a is tables.function_dead_letters_alarm for a in dashboard.alarms)
    body = stack.resolve(dashboard.dashboard.node.default_child.dashboard_body)
    rendered = "".join(p if isinstance(p, str) else str(p) for p in body["Fn::Join"][1])
    assert "failed runs kept" in rendered


def test_the_deploy_time_run_is_answered_or_timed_out_after_every_attempt_lambda_makes(alarmed):
    # CloudFormation invokes the function asynchronously: the same dead-letter queue keeps a request that
    # failed on every attempt, and CloudFormation stops waiting after the attempts and the waits between them
    stack, tables, template = alarmed
    (resource,) = template.find_resources("Custom::CdkTsRotation").values()
    assert resource["Properties"]["ServiceToken"] == stack.resolve(tables.function.function_arn)
    attempts = 3 * RUN_TIMEOUT.to_minutes() + 1 + 2
    assert attempts <= DEPLOY_TIME_RUN_TIMEOUT.to_minutes() < 60
    assert int(resource["Properties"]["ServiceTimeout"]) == DEPLOY_TIME_RUN_TIMEOUT.to_seconds()


@pytest.mark.parametrize(
    ("pack", "rule"),
    [
        (NIST80053R5Checks, "NIST.800.53.R5-LambdaDLQ"),
        (HIPAASecurityChecks, "HIPAA.Security-LambdaDLQ"),
        (ServerlessChecks, "Serverless-LambdaDLQ"),
    ],
)
def test_cdk_nag_packs_find_no_missing_dlq_on_the_rotation_function(pack, rule):
    app, stack = new_stack()
    RotatingTimeSeriesTables(stack, "T", table_prefix="metrics", retain_periods=3)
    findings = unacknowledged_findings(app, pack)
    assert findings, f"{pack.__name__} reports other rules here; an empty list would mean it did not run"
    assert [f for f in findings if f.startswith(f"{rule} at Test/T/Rotation/")] == []


@pytest.mark.parametrize("pack", [NIST80053R5Checks, HIPAASecurityChecks])
def test_the_lock_table_and_the_unreserved_function_are_acknowledged_with_their_reasons(pack):
    app = new_app()
    RotatingTimeSeriesTables(Stack(app, "Test"), "T", table_prefix="metrics", retain_periods=3)
    findings = unacknowledged_findings(app, pack)
    assert findings
    assert [f for f in findings if "DynamoDBInBackupPlan at Test/T/LockTable/" in f] == []
    assert [f for f in findings if "LambdaConcurrency at Test/T/Rotation/" in f] == []
