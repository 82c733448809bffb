from aws_cdk import App, Duration, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_

from cdk_ts import LAMBDA_RUNTIME, TimestreamTable

app = App()
stack = Stack(app, "Fleet")
key = kms.Key(stack, "FleetKey", enable_key_rotation=True)
ingest_fn = lambda_.Function(stack, "Ingest", runtime=LAMBDA_RUNTIME, handler="handler.handler",
                             code=lambda_.Code.from_asset("src/ingest"))
api_fn = lambda_.Function(stack, "Api", runtime=LAMBDA_RUNTIME, handler="handler.handler",
                          code=lambda_.Code.from_asset("src/api"))
fleet = TimestreamTable(stack, "Fleet", partition_key_dimension="vin",   # customer-defined partition key
                        memory_retention=Duration.hours(24), magnetic_retention=Duration.days(365),
                        encryption_key=key)                              # optional; rejected records go to S3
fleet.bind(ingest_fn)               # CDK_TS_TIMESTREAM_* names for TimestreamWriter.from_env, WriteRecords, the layer
fleet.grant_read_data(api_fn)       # Select only
app.synth()
