from aws_cdk import App, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts import ColumnSpec, CompactionOptions, RotatingTimeSeriesTables, StreamArchiver

app = App()
stack = Stack(app, "CompactedArchive", env={"region": "eu-west-1"})
tables = RotatingTimeSeriesTables(stack, "Telemetry", table_prefix="telemetry", retain_periods=14,
                                  stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
archiver = StreamArchiver(
    stack, "TelemetryArchiver", source=tables, glue_database="archive", create_glue_database=True,
    compaction=CompactionOptions(
        # AWS-managed layer with pyarrow (AWS SDK for pandas) for this Region; its name picks Python 3.13, arm64
        pyarrow_layer_arn="arn:aws:lambda:eu-west-1:336392948345:layer:AWSSDKPandas-Python313-Arm64:4",
        columns=[ColumnSpec("device_id", "bigint", attribute="pk"), ColumnSpec("ts", "bigint", attribute="sk"),
                 ColumnSpec("temperature_c", "decimal(6,2)"), ColumnSpec("humidity_pct", "decimal(5,1)")],
        granularity="day",                     # default "hour"
        grace=Duration.hours(2),               # default 1 hour
    ),
    raw_expiration=Duration.days(400),         # the JSON Lines' own lifecycle (default: kept)
)
exposed = (archiver.compaction.function, archiver.compaction.rule, archiver.compaction.dead_letter_queue,
           archiver.compaction.catalog.table, archiver.compaction.catalog.view)
archiver.compaction.add_default_alarms()       # dead_letter_alarm, errors_alarm
app.synth()
