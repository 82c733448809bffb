"""Alarms are opt-in (add_default_alarms or alarm_topic=); alarm_topic and add_alarm_action reach every alarm."""

from __future__ import annotations

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template

from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, StreamArchiver

STREAM = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES


def alarm_actions(stack: Stack) -> dict[str, list]:
    alarms = Template.from_stack(stack).find_resources("AWS::CloudWatch::Alarm")
    return {name: alarm["Properties"].get("AlarmActions", []) for name, alarm in alarms.items()}


def logical_ids(stack: Stack, alarms) -> set[str]:
    return {stack.resolve(a.alarm_arn)["Fn::GetAtt"][0] for a in alarms}


def test_constructs_create_no_alarms_until_asked():
    stack = Stack(App(), "Test")
    tables = RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry", stream=STREAM)
    archiver = StreamArchiver(stack, "Archive", source=tables)
    assert alarm_actions(stack) == {}
    assert tables.alarms == {} and archiver.alarms == {}
    assert tables.rotation_failures_alarm is None and archiver.iterator_age_alarm is None


def test_alarm_topic_creates_the_default_alarms_with_the_topic_as_their_action():
    stack = Stack(App(), "Test")
    topic = sns.Topic(stack, "Topic")
    tables = RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry", stream=STREAM, alarm_topic=topic)
    log = DeviceLogTable(stack, "Log", stream=STREAM)
    StreamArchiver(stack, "TablesArchive", source=tables, alarm_topic=topic)
    StreamArchiver(stack, "LogArchive", source=log, alarm_topic=topic)
    actions = alarm_actions(stack)
    # rotation: errors, next table missing, undelivered runs, failed runs kept, future tables, lock held, throttles;
    # each archiver: iterator age, failed batches, delivery failures, errors
    assert len(actions) == 7 + 4 + 4
    assert all(value == [stack.resolve(topic.topic_arn)] for value in actions.values()), actions


def test_add_default_alarms_returns_the_typed_attributes_by_name():
    stack = Stack(App(), "Test")
    tables = RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry", stream=STREAM)
    archiver = StreamArchiver(stack, "Archive", source=tables)
    rotation = tables.add_default_alarms()
    archive = archiver.add_default_alarms()
    assert rotation == {
        "rotation_failures": tables.rotation_failures_alarm,
        "next_table_missing": tables.next_table_missing_alarm,
        "schedule_dead_letters": tables.schedule_dead_letters_alarm,
        "function_dead_letters": tables.function_dead_letters_alarm,
        "future_tables": tables.future_tables_alarm,
        "lock_held": tables.lock_held_alarm,
        "throttles": tables.throttles_alarm,
    }
    assert archive == {
        "iterator_age": archiver.iterator_age_alarm,
        "dead_letter_queue": archiver.dead_letter_alarm,
        "failure_delivery": archiver.failure_delivery_alarm,
        "errors": archiver.errors_alarm,
    }
    assert logical_ids(stack, [*rotation.values(), *archive.values()]) == set(alarm_actions(stack))
    # without a topic or action, nobody is told
    assert set(map(len, alarm_actions(stack).values())) == {0}


def test_a_second_call_creates_nothing_and_adds_a_new_topic_once():
    stack = Stack(App(), "Test")
    first, second = sns.Topic(stack, "First"), sns.Topic(stack, "Second")
    tables = RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry")
    alarms = tables.add_default_alarms(alarm_topic=first)
    again = tables.add_default_alarms(alarm_topic=first)
    tables.add_default_alarms(alarm_topic=second)
    assert again == alarms
    actions = alarm_actions(stack)
    assert len(actions) == 7
    expected = [stack.resolve(first.topic_arn), stack.resolve(second.topic_arn)]
    assert all(value == expected for value in actions.values()), actions


def test_add_alarm_action_reaches_alarms_made_before_and_after():
    stack = Stack(App(), "Test")
    early, late = sns.Topic(stack, "Early"), sns.Topic(stack, "Late")
    archiver = StreamArchiver(stack, "Archive", source=DeviceLogTable(stack, "Log", stream=STREAM))
    archiver.add_alarm_action(cloudwatch_actions.SnsAction(early))  # before the alarms exist
    archiver.add_default_alarms()
    archiver.add_alarm_action(cloudwatch_actions.SnsAction(late))  # after
    expected = [stack.resolve(early.topic_arn), stack.resolve(late.topic_arn)]
    actions = alarm_actions(stack)
    assert len(actions) == 4
    assert all(value == expected for value in actions.values()), actions


@pytest.mark.parametrize("threshold_hours", [1, 6])
def test_iterator_age_threshold_sets_the_alarm_threshold(threshold_hours):
    stack = Stack(App(), "Test")
    archiver = StreamArchiver(
        stack, "Archive", source=DeviceLogTable(stack, "Log", stream=STREAM),
        iterator_age_threshold=Duration.hours(threshold_hours),
    )
    archiver.add_default_alarms()
    Template.from_stack(stack).has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "IteratorAge", "Threshold": threshold_hours * 3_600_000}
    )
