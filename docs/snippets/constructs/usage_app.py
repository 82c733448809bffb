from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_

from cdk_ts import LAMBDA_RUNTIME, CapacityTier, RotatingTimeSeriesTables, RotationPeriod

app = App()
stack = Stack(app, "Telemetry")
tables = RotatingTimeSeriesTables(
    stack, "Readings", table_prefix="readings", period=RotationPeriod.DAILY,
    retain_periods=30, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    current_tier=CapacityTier.provisioned(read=300, write=1000),
)
ingest_function = lambda_.Function(
    stack, "Ingest", runtime=LAMBDA_RUNTIME, handler="handler.handler",
    code=lambda_.Code.from_asset("src/ingest"),
)
tables.bind(ingest_function, read=True)   # env vars for PeriodRouter.from_env + read/write on readings_????-??-??
app.synth()
