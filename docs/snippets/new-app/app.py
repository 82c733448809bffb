from aws_cdk import App, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from cdk_nag import AwsSolutionsChecks

from cdk_ts import LAMBDA_RUNTIME, RotatingTimeSeriesTables

app = App()
stack = Stack(app, "Telemetry")
tables = RotatingTimeSeriesTables(stack, "Readings", table_prefix="readings", retain_periods=30)
logs_group = logs.LogGroup(stack, "IngestLogs", retention=logs.RetentionDays.THREE_MONTHS)
role = iam.Role(stack, "IngestRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
logs_group.grant_write(role)  # its own log group: no AWS managed policy on the role (AwsSolutions-IAM4)
ingest = lambda_.Function(
    stack, "Ingest", runtime=LAMBDA_RUNTIME, handler="handler.handler",
    code=lambda_.Code.from_asset("src/ingest"), role=role, log_group=logs_group,
)
tables.bind(ingest, acknowledge_nag_findings=True)  # the period tables' name pattern (AwsSolutions-IAM5)
Validations.of(app).add_plugins(AwsSolutionsChecks(app))  # cdk-nag 3; a finding fails the synth
app.synth()
