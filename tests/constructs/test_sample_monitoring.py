"""The sample app's operations alarms and dashboard."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App
from aws_cdk.assertions import Match, Template
from cdk_nag import NIST80053R5Checks

import app as sample_app
from tests.support.nag import new_app, unacknowledged_findings


@pytest.fixture(scope="module")
def sample():
    app = App()
    sample_app.build_app(app, checks=False)
    stack = app.node.find_child(sample_app.STACK_NAME)
    return stack, Template.from_stack(stack)


def test_rotation_failures_alarm_watches_the_rotation_functions_errors(sample):
    stack, template = sample
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "Errors",
            "Namespace": "AWS/Lambda",
            "Dimensions": [{"Name": "FunctionName", "Value": stack.resolve(stack.telemetry.function.function_name)}],
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
        },
    )


def test_next_table_missing_alarm_uses_the_metric_the_rotation_publishes(sample):
    _stack, template = sample
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Namespace": "cdk-ts",
            "MetricName": "NextPeriodTableMissing",
            "Dimensions": [{"Name": "TablePrefix", "Value": "telemetry"}],
            "Statistic": "Maximum",
            "Threshold": 0,
        },
    )


def test_throttles_alarm_queries_dynamodb_throttled_requests(sample):
    _stack, template = sample
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Metrics": [Match.object_like({"Expression": Match.string_like_regexp("ThrottledRequests")})],
            "Threshold": 0,
        },
    )


def test_every_monitored_construct_has_its_default_alarms_on_the_dashboard(sample):
    stack, _template = sample
    expected = [
        stack.telemetry.rotation_failures_alarm,
        stack.telemetry.next_table_missing_alarm,
        stack.telemetry.throttles_alarm,
        stack.telemetry.schedule_dead_letters_alarm,
        stack.telemetry.function_dead_letters_alarm,
        stack.telemetry_archiver.iterator_age_alarm,
        stack.telemetry_archiver.dead_letter_alarm,
        stack.device_log_archiver.iterator_age_alarm,
        stack.device_log_archiver.dead_letter_alarm,
        stack.telemetry_archiver.compaction.dead_letter_alarm,
        stack.telemetry_archiver.compaction.errors_alarm,
    ]
    assert None not in expected
    shown = stack.monitoring.alarms
    assert all(any(alarm is s for s in shown) for alarm in expected)


def test_one_dashboard_graphs_throttles_of_every_period_table(sample):
    _stack, template = sample
    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    # unquoted: a SEARCH term in double quotes matches the whole table name only, never a period table
    assert "ThrottledRequests" in body and "TableName=telemetry'" in body
    assert "IteratorAge" in body and "PutRequests" in body  # failure records arriving in the failure buckets


def test_every_alarm_notifies_the_one_encrypted_alarm_topic(sample):
    stack, template = sample
    topic = stack.resolve(stack.alarm_topic.topic_arn)
    alarms = template.find_resources("AWS::CloudWatch::Alarm")
    assert len(alarms) >= 9
    without = [name for name, alarm in alarms.items() if alarm["Properties"].get("AlarmActions") != [topic]]
    assert without == []
    template.has_resource_properties("AWS::SNS::Topic", {"KmsMasterKeyId": Match.any_value()})
    template.resource_count_is("AWS::SNS::Subscription", 0)


def test_the_alarm_email_context_subscribes_that_address():
    app = App(context={"alarm_email": "oncall@example.com"})
    sample_app.build_app(app, checks=False)
    template = Template.from_stack(app.node.find_child(sample_app.STACK_NAME))
    template.has_resource_properties("AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "oncall@example.com"})


def test_nist_800_53_r5_finds_no_alarm_without_an_action():
    app = new_app()
    sample_app.build_app(app, checks=False)
    findings = unacknowledged_findings(app, NIST80053R5Checks)
    assert findings, "the NIST pack reports other rules here; an empty list would mean it did not run"
    assert [f for f in findings if "CloudWatchAlarmAction" in f] == []
