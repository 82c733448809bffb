"""RotatingTimeSeriesTables tells someone before the boundary: the create retry, the missing-table and lock alarms."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from aws_cdk import Duration
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Match, Template

from cdk_ts.rotation._schedules import before_boundary
from cdk_ts_runtime.periods import RotationPeriod
from cdk_ts_runtime.rotation.lock import RUN_TIMEOUT_ENV
from cdk_ts_runtime.rotation_config import ENV_ROTATION_CONFIG
from tests.support.rotating_tables import build, rotation_config


@pytest.fixture(scope="module")
def alarmed():
    _app, stack, tables = build(missing_table_alarm_lead=Duration.minutes(6), run_at_deploy=False)
    topic = sns.Topic(stack, "Topic")
    tables.add_default_alarms(alarm_topic=topic)
    return stack, tables, topic, Template.from_stack(stack)


def alarm_props(stack, template, alarm):
    return template.to_json()["Resources"][stack.get_logical_id(alarm.node.default_child)]["Properties"]


def test_the_missing_table_alarm_evaluates_every_minute_and_notifies_the_alarm_actions(alarmed):
    stack, tables, topic, template = alarmed
    props = alarm_props(stack, template, tables.next_table_missing_alarm)
    assert (props["Namespace"], props["MetricName"], props["Dimensions"]) == (
        "cdk-ts", "NextPeriodTableMissing", [{"Name": "TablePrefix", "Value": "telemetry"}]
    )
    # a datapoint at the deadline is in ALARM a minute or two later: before the boundary, 6 minutes on
    assert (props["Statistic"], props["Period"], props["EvaluationPeriods"]) == ("Maximum", 60, 1)
    assert (props["Threshold"], props["ComparisonOperator"], props["TreatMissingData"]) == (
        0, "GreaterThanThreshold", "notBreaching"
    )
    assert props["AlarmActions"] == [stack.resolve(topic.topic_arn)]


def test_a_create_new_retry_runs_when_a_missing_table_starts_to_count_as_missing(alarmed):
    stack, tables, _topic, template = alarmed
    config = json.loads(stack.resolve(rotation_config(template)[ENV_ROTATION_CONFIG]))  # a literal here
    assert config["missing_table_alarm_seconds"] == 360
    retry = template.to_json()["Resources"][stack.get_logical_id(tables.create_new_retry_rule.node.default_child)]
    fields = before_boundary(RotationPeriod.DAILY, timedelta(seconds=config["missing_table_alarm_seconds"]))
    assert fields == {"minute": "54", "hour": "23"}
    assert retry["Properties"]["ScheduleExpression"] == "cron(54 23 * * ? *)"
    target = retry["Properties"]["Targets"][0]
    assert json.loads(target["InputTransformer"]["InputTemplate"].replace("<time>", '"t"'))["Operation"] == "create_new"
    assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0 and "DeadLetterConfig" in target
    assert "create_new retry" in retry["Properties"]["Description"]


def test_runs_that_keep_finding_the_lock_held_raise_an_alarm(alarmed):
    stack, tables, topic, template = alarmed
    assert tables.alarms["lock_held"] is tables.lock_held_alarm
    props = alarm_props(stack, template, tables.lock_held_alarm)
    assert (props["MetricName"], props["Statistic"], props["Period"], props["EvaluationPeriods"]) == (
        "LockHeldRuns", "Minimum", 3600, 2
    )
    assert (props["Threshold"], props["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    assert props["AlarmActions"] == [stack.resolve(topic.topic_arn)]


def test_the_function_knows_its_timeout_so_a_lock_further_ahead_counts_as_malformed(alarmed):
    _stack, _tables, _topic, template = alarmed
    template.has_resource_properties("AWS::Lambda::Function", Match.object_like({
        "Timeout": 300, "Environment": {"Variables": Match.object_like({RUN_TIMEOUT_ENV: "300"})},
    }))


def test_every_bad_lead_is_reported_with_the_other_problems():
    with pytest.raises(ValueError, match=r"(?s)missing_table_alarm_lead 0:20:00 must be shorter than create_lead.*"
                       r"reconcile_every 1 minute"):
        build(missing_table_alarm_lead=Duration.minutes(20), reconcile_every=Duration.minutes(1))


def test_a_short_create_lead_gets_an_alarm_lead_a_minute_shorter_and_a_too_short_one_is_refused():
    _app, stack, tables = build(create_lead=Duration.minutes(4), run_at_deploy=False)
    assert tables.config.missing_table_alarm_seconds == 180
    retry = Template.from_stack(stack).to_json()["Resources"][
        stack.get_logical_id(tables.create_new_retry_rule.node.default_child)
    ]
    assert retry["Properties"]["ScheduleExpression"] == "cron(57 23 * * ? *)"
    with pytest.raises(ValueError, match=r"create_lead 0:03:00 leaves no time .* at least 0:04:00"):
        build(create_lead=Duration.minutes(3))
