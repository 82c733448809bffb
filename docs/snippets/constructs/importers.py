from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_

from cdk_ts import LAMBDA_RUNTIME, DeviceLogTable, ShardMetadataTable, TimestreamTable

# The owning app (its own repository and pipeline) fixes the names, so another app can be told them.
owner = Stack(App(), "Owner")
log = DeviceLogTable(owner, "DeviceLog", table_name="device-log")
ShardMetadataTable(owner, "Shards", main_table=log, table_name="device-log-shards")
TimestreamTable(owner, "Fleet", database_name="fleet", table_name="telemetry")

# Another app imports them by those names and creates no table.
app = App()
consumer = Stack(app, "Consumer")
device_log = DeviceLogTable.from_table_name(consumer, "DeviceLog", table_name="device-log")
shards = ShardMetadataTable.from_table_name(
    consumer, "Shards", table_name="device-log-shards", main_table=device_log,
    partition_key=dynamodb.Attribute(name="DeviceID", type=dynamodb.AttributeType.STRING),
    sort_key_name="State#Date",
)
fleet = TimestreamTable.from_table_name(consumer, "Fleet", database_name="fleet", table_name="telemetry")
ingest = lambda_.Function(
    consumer, "Ingest", runtime=LAMBDA_RUNTIME, handler="index.handler",
    code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
)
shards.bind(ingest)             # both names for ShardedTable.from_env; grants on both tables and the GSIs
fleet.grant_write_data(ingest)  # timestream:WriteRecords on .../database/fleet/table/telemetry
app.synth()
