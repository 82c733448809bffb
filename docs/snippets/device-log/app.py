from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_

from cdk_ts import LAMBDA_RUNTIME, DeviceLogTable

app = App()
stack = Stack(app, "Devices")
api_function = lambda_.Function(
    stack, "Api", runtime=LAMBDA_RUNTIME, handler="handler.handler",
    code=lambda_.Code.from_asset("src/api"),
)
log = DeviceLogTable(stack, "DeviceLog", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
log.bind(api_function, read=True)  # CDK_TS_DEVICE_LOG_TABLE_NAME + read/write on the table and its GSIs
app.synth()
