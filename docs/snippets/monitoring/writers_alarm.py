from aws_cdk import App, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch

app = App()
stack = Stack(app, "Writers")
table_throttles = cloudwatch.Metric(
    namespace="MyApp/Writers", metric_name="Throttles", statistic="Sum", period=Duration.minutes(5),
    dimensions_map={"TableName": "audit", "ThrottleScope": "table"},
)
table_throttles.create_alarm(
    stack, "TableLevelThrottles", threshold=10, evaluation_periods=1,
    treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
    alarm_description="audit is throttled as a whole (capacity, on-demand maximum or account quota): raise it",
)
app.synth()
