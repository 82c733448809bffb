"""Alarm actions: alarm_topic and add_alarm_action reach every alarm a construct makes, before or after."""

from __future__ import annotations

from aws_cdk import App, Stack
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template

from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, StreamArchiver


def alarm_actions(stack: Stack) -> dict[str, list]:
    alarms = Template.from_stack(stack).find_resources("AWS::CloudWatch::Alarm")
    return {name: alarm["Properties"].get("AlarmActions", []) for name, alarm in alarms.items()}


def test_alarm_topic_is_the_action_of_every_alarm_of_each_construct():
    stack = Stack(App(), "Test")
    topic = sns.Topic(stack, "Topic")
    tables = RotatingTimeSeriesTables(
        stack, "Tables", table_prefix="telemetry", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES, alarm_topic=topic
    )
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    StreamArchiver(stack, "TablesArchive", source=tables, alarm_topic=topic)
    StreamArchiver(stack, "LogArchive", source=log, alarm_topic=topic)
    actions = alarm_actions(stack)
    assert len(actions) == 4 + 4 + 4  # rotation: 4; each archiver: iterator age, failed batches, delivery, errors
    assert all(value == [stack.resolve(topic.topic_arn)] for value in actions.values()), actions


def test_without_a_topic_alarms_have_no_action():
    stack = Stack(App(), "Test")
    RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry")
    assert set(map(len, alarm_actions(stack).values())) == {0}


def test_add_alarm_action_reaches_alarms_made_before_and_after():
    stack = Stack(App(), "Test")
    first, second = sns.Topic(stack, "First"), sns.Topic(stack, "Second")
    tables = RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry", alarm_topic=first)
    tables.add_alarm_action(cloudwatch_actions.SnsAction(second))
    expected = [stack.resolve(first.topic_arn), stack.resolve(second.topic_arn)]
    assert all(value == expected for value in alarm_actions(stack).values())
    typed = (
        tables.rotation_failures_alarm,
        tables.next_table_missing_alarm,
        tables.schedule_dead_letters_alarm,
        tables.future_tables_alarm,
    )
    resolved = {stack.resolve(a.alarm_arn)["Fn::GetAtt"][0] for a in typed}
    assert resolved == set(alarm_actions(stack))
