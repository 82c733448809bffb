from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_

from cdk_ts import LAMBDA_RUNTIME, ShardMetadataTable

app = App()
stack = Stack(app, "Audit")
audit = dynamodb.Table(
    stack, "AuditLog",
    partition_key=dynamodb.Attribute(name="file_path", type=dynamodb.AttributeType.STRING),
    sort_key=dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER),
    billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
)
writer_function = lambda_.Function(
    stack, "Writer", runtime=LAMBDA_RUNTIME, handler="handler.handler",
    code=lambda_.Code.from_asset("src/writer"),
)
shards = ShardMetadataTable(stack, "AuditShards", main_table=audit)   # key names/type read from the table
shards.bind(writer_function, read=True)   # env vars for ShardedTable.from_env, read/write on both tables
app.synth()
