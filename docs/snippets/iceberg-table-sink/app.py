from aws_cdk import App, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts import ColumnSpec, DeviceLogTable, IcebergTableSink, SinkMode, StreamArchiver

app = App()
stack = Stack(app, "StreamingColumnar", env={"region": "eu-west-1"})
log = DeviceLogTable(stack, "DeviceLog", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
StreamArchiver(stack, "DeviceLogArchiver", source=log)   # the raw layer stays; no compaction= with a sink
sink = IcebergTableSink(
    stack, "DeviceLogSink", source=log,
    table_bucket_name="device-log-columnar",               # the S3 Tables table bucket it creates
    namespace="archive", table_name="device_log",          # defaults "archive", "changes"
    mode=SinkMode.CHANGES,                                 # a row per change (default); LATEST: a row per item
    columns=[ColumnSpec("device_id", "string", attribute="DeviceID"), ColumnSpec("state", "string", attribute="State")],
    buffering_interval=Duration.minutes(5),                # default 300 s; up to 900
)
exposed = (sink.stream, sink.table_bucket, sink.table, sink.function, sink.delivery_stream, sink.role,
           sink.error_bucket, sink.lake_formation_grant)
sink.add_default_alarms()                                  # data_freshness, failed_rows, transform_errors
app.synth()
