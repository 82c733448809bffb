from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from cdk_ts import RotatingTimeSeriesTables

app = App()
RotatingTimeSeriesTables(Stack(app, "Owner"), "Readings", table_prefix="readings")
consumer = Stack(app, "Consumer")
readings = RotatingTimeSeriesTables.from_table_prefix(consumer, "Readings", table_prefix="readings")
ingest = lambda_.Function.from_function_attributes(
    consumer, "Ingest", function_arn="arn:aws:lambda:eu-west-1:123456789012:function:ingest",
    role=iam.Role.from_role_arn(consumer, "IngestRole", "arn:aws:iam::123456789012:role/ingest"),
)
try:
    readings.bind(ingest)                     # grants, then lists CDK_TS_TABLE_PREFIX=readings, ...
except TypeError as error:
    print(error)
readings.bind(ingest, environment=False, add_runtime_layer=False)  # set by hand: grants only
app.synth()
