from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_

from cdk_ts import LAMBDA_RUNTIME, RotatingTimeSeriesTables

app = App()
stack = Stack(app, "Telemetry")
tables = RotatingTimeSeriesTables(stack, "Readings", table_prefix="readings", retain_periods=30)
ingest = lambda_.Function(
    stack, "Ingest",
    runtime=LAMBDA_RUNTIME,
    handler="handler.handler",
    code=lambda_.Code.from_asset("src/ingest"),  # your code: handler.py below
)
grant = tables.bind(ingest, read=True)  # CDK_TS_* env vars, write + read on readings_????-??-??, the layer
app.synth()
