"""Metric methods with their documented defaults, and MonitoringDashboard built from them."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Match, Template

from cdk_ts import (
    ArchiverMetric,
    DeviceLogTable,
    FailureDestination,
    MonitoringDashboard,
    RotatingTimeSeriesTables,
    RotationMetric,
    ShardMetadataTable,
    StreamArchiver,
)

STREAM = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES


@pytest.fixture
def stack():
    return Stack(App(), "Test")


def dashboard_body(stack: Stack) -> str:
    (dashboard,) = Template.from_stack(stack).find_resources("AWS::CloudWatch::Dashboard").values()
    return json.dumps(stack.resolve(dashboard["Properties"]["DashboardBody"]))


def test_throttled_requests_searches_the_prefix_of_this_rotation_only(stack):
    eu = RotatingTimeSeriesTables(stack, "Eu", table_prefix="readings_eu")
    us = RotatingTimeSeriesTables(stack, "Us", table_prefix="readings_us")
    eu_search, us_search = eu.metric_throttled_requests(), us.metric_throttled_requests()
    assert "TableName=readings_eu'" in eu_search.expression and "readings_us" not in eu_search.expression
    assert "TableName=readings_us'" in us_search.expression
    assert 'MetricName="ThrottledRequests"' in eu_search.expression
    assert eu_search.expression.endswith("'Sum', 300)") and eu_search.period.to_minutes() == 5


def test_metric_props_override_the_documented_defaults(stack):
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics")
    assert tables.metric_throttled_requests(period=Duration.minutes(1)).expression.endswith("'Sum', 60)")
    missing = tables.metric_next_table_missing()
    assert (missing.statistic, missing.period.to_minutes(), missing.namespace) == ("Maximum", 5, "cdk-ts")
    assert tables.metric_next_table_missing(statistic="Sum").statistic == "Sum"
    assert tables.metric_rotation_errors().statistic == "Sum"
    assert tables.metric_rotation_errors(period=Duration.hours(1)).period.to_hours() == 1
    published = [tables.metric(name) for name in RotationMetric]
    assert [m.metric_name for m in published] == [
        "NextPeriodTableMissing", "FuturePeriodTables", "ForeignLookalikeTables", "FailedTables", "TtlDriftTables",
        "LockHeldRuns",
    ]
    assert all(m.dimensions == {"TablePrefix": "metrics"} and m.statistic == "Maximum" for m in published)
    assert tables.metric("FailedTables", statistic="Sum").statistic == "Sum"


def test_metric_refuses_a_name_the_rotation_does_not_publish(stack):
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics")
    with pytest.raises(ValueError, match=r"T: metric 'FailedTable' is not published .*FailedTables"):
        tables.metric("FailedTable")


def test_archiver_metrics_name_its_function_and_failure_destination(stack):
    log = DeviceLogTable(stack, "Log", stream=STREAM)
    s3_archiver = StreamArchiver(stack, "ToS3", source=log)
    sqs_archiver = StreamArchiver(stack, "ToSqs", source=log, failure_destination=FailureDestination.SQS)
    age = s3_archiver.metric_iterator_age()
    assert (age.metric_name, age.statistic, age.period.to_minutes()) == ("IteratorAge", "Maximum", 5)
    assert stack.resolve(age.dimensions["FunctionName"]) == stack.resolve(s3_archiver.function.function_name)
    assert s3_archiver.metric_dead_letters().metric_name == "PutRequests"
    assert sqs_archiver.metric_dead_letters().metric_name == "ApproximateNumberOfMessagesVisible"
    assert s3_archiver.metric_failure_delivery_failures().metric_name == "DestinationDeliveryFailures"
    assert s3_archiver.metric_errors(statistic="Maximum").statistic == "Maximum"


def test_the_throttles_alarm_is_one_metrics_insights_query(stack):
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics")
    tables.add_default_alarms()
    Template.from_stack(stack).has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Metrics": [Match.object_like({
                "Expression": Match.string_like_regexp(r'^SELECT SUM\(ThrottledRequests\) FROM SCHEMA\("AWS/DynamoDB"'),
                "Period": 300,
            })],
            "EvaluationPeriods": 3,
            "Threshold": 0,
            "TreatMissingData": "notBreaching",
        },
    )


def test_dashboard_graphs_each_construct_and_shows_their_alarms(stack):
    topic = sns.Topic(stack, "Topic")
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics", stream=STREAM)
    archiver = StreamArchiver(stack, "Archive", source=tables)
    for construct in (tables, archiver):
        construct.add_default_alarms(alarm_topic=topic)
    dashboard = MonitoringDashboard(stack, "Ops", dashboard_name="ops")
    dashboard.monitor(tables, archiver)
    Template.from_stack(stack).has_resource_properties("AWS::CloudWatch::Dashboard", {"DashboardName": "ops"})
    body = dashboard_body(stack)
    assert "TableName=metrics'" in body and "NextPeriodTableMissing" in body and "FailedTables" in body
    assert "IteratorAge" in body and "PutRequests" in body and "DestinationDeliveryFailures" in body
    shown = dashboard.alarms
    assert len(shown) == 7 + 4
    for alarm in (tables.throttles_alarm, archiver.iterator_age_alarm):
        # the alarm's own ARN (Fn::GetAtt), not one rebuilt for an emulator
        assert json.dumps(stack.resolve(alarm.alarm_arn)) in body
    assert body.count('"Arn"]}') == len(shown)


def test_dashboard_without_alarms_has_no_alarm_widget(stack):
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics")
    dashboard = MonitoringDashboard(stack, "Ops")
    dashboard.monitor(tables)
    assert dashboard.alarms == []
    assert "alarms" not in dashboard_body(stack)


def test_dashboard_refuses_what_it_cannot_monitor_and_adds_nothing(stack):
    log = DeviceLogTable(stack, "Log")
    bucket = s3.Bucket(stack, "Plain")
    dashboard = MonitoringDashboard(stack, "Ops")
    with pytest.raises(TypeError, match="Test/Plain cannot be monitored here"):
        dashboard.monitor(log, bucket)
    assert "throttled requests" not in dashboard_body(stack)


def test_fixed_tables_graph_their_own_throttles(stack):
    log = DeviceLogTable(stack, "Log")
    shards = ShardMetadataTable(stack, "Shards", main_table=log)
    dashboard = MonitoringDashboard(stack, "Ops")
    dashboard.monitor(log, shards)
    body = dashboard_body(stack)
    for construct in (log, shards):
        assert f"{construct.node.id}: throttled requests" in body
        assert json.dumps(stack.resolve(construct.table.table_name)) in body
    assert "ThrottledRequests" in body and "alarms" not in body
    metric = log.metric_throttled_requests(period=Duration.minutes(1))
    assert metric.to_metric_config().math_expression.period == 60


def test_archiver_emf_metrics_name_its_function_in_the_rotations_namespace(stack):
    archiver = StreamArchiver(stack, "Archive", source=DeviceLogTable(stack, "Log", stream=STREAM))
    archived = archiver.metric(ArchiverMetric.ARCHIVED_RECORDS)
    assert (archived.namespace, archived.metric_name, archived.statistic) == ("cdk-ts", "ArchivedRecords", "Sum")
    assert stack.resolve(archived.dimensions["FunctionName"]) == stack.resolve(archiver.function.function_name)
    assert archiver.metric("UnreadableRecords", statistic="Maximum").statistic == "Maximum"
    with pytest.raises(ValueError, match="'ArchivedBytes' is not written by the archiver"):
        archiver.metric("ArchivedBytes")
