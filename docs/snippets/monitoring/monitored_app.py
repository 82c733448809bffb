from aws_cdk import App, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions

from cdk_ts import MonitoringDashboard, RotatingTimeSeriesTables, RotationMetric, StreamArchiver

app = App()
stack = Stack(app, "Monitored")
key = kms.Key(stack, "AlarmTopicKey", enable_key_rotation=True)
key.add_to_resource_policy(iam.PolicyStatement(  # CloudWatch may publish to an encrypted topic only with this
    principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
    actions=["kms:Decrypt", "kms:GenerateDataKey*"],
    resources=["*"],
))
topic = sns.Topic(stack, "Alarms", master_key=key, enforce_ssl=True)
topic.add_subscription(subscriptions.EmailSubscription("you@example.com"))

tables = RotatingTimeSeriesTables(stack, "Readings", table_prefix="readings", retain_periods=30,
                                  stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
archiver = StreamArchiver(stack, "Archive", source=tables)

# alarms: opt-in, typed, one call per construct
for construct in (tables, archiver):
    construct.add_default_alarms(alarm_topic=topic)
assert tables.throttles_alarm is not None and archiver.iterator_age_alarm is not None
archiver.add_alarm_action(cloudwatch_actions.SnsAction(topic))  # any IAlarmAction, before or after

# metrics: your own alarm or graph, with the defaults overridden where you need to
tables.metric_rotation_errors(period=Duration.hours(1)).create_alarm(
    stack, "RotationErrorsPerHour", threshold=2, evaluation_periods=1,
).add_alarm_action(cloudwatch_actions.SnsAction(topic))
hourly_throttles = tables.metric_throttled_requests(period=Duration.hours(1))
hourly_failed_tables = tables.metric(RotationMetric.FAILED_TABLES, period=Duration.hours(1))

# one dashboard for the deployment
dashboard = MonitoringDashboard(stack, "Operations", dashboard_name="readings-operations")
dashboard.monitor(tables, archiver)
dashboard.dashboard.add_widgets(
    cloudwatch.GraphWidget(title="Per hour", left=[hourly_throttles], right=[hourly_failed_tables])
)
app.synth()
