from aws_cdk import App, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts import TTL_DELETIONS_ONLY, DeviceLogTable, FailureDestination, RotatingTimeSeriesTables, StreamArchiver

app = App()
stack = Stack(app, "Archives")
stream = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES
device_log = DeviceLogTable(stack, "DeviceLog", stream=stream)
telemetry_tables = RotatingTimeSeriesTables(stack, "Telemetry", table_prefix="telemetry", retain_periods=14,
                                            stream=stream)
archiver = StreamArchiver(stack, "Archive", source=device_log,          # or a Table with a stream
                          glue_database="archive", create_glue_database=True)  # Glue table "archive" + view
StreamArchiver(stack, "TelemetryArchive", source=telemetry_tables,       # RotatingTimeSeriesTables(stream=...)
               glue_database="archive", create_glue_database=True,      # the same database resource, shared
               glue_table_name="telemetry_changes",                     # optional
               filter_patterns=[TTL_DELETIONS_ONLY],                    # optional
               noncurrent_version_expiration=Duration.days(7))          # default 30 days
StreamArchiver(stack, "QueueArchive", source=dynamodb.Table(
    stack, "Other", partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING), stream=stream,
), failure_destination=FailureDestination.SQS)                          # metadata only: see Failures below
exposed = (archiver.bucket, archiver.function, archiver.failure_bucket, archiver.dead_letter_queue,
           archiver.glue_table, archiver.glue_view)
archiver.add_default_alarms()  # iterator_age_alarm, dead_letter_alarm, failure_delivery_alarm, errors_alarm
app.synth()
