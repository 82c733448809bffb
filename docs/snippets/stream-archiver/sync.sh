# ARCHIVE_BUCKET: the archive bucket (the sample app's output ArchiveBucketName)
# PREFIX: the archiver's prefix, StreamArchiver(prefix=...): "dynamodb/" by default; the sample app's
#         archivers write under cdc/telemetry/ and cdc/device-log/, so cdc/ gets both
PREFIX=cdc/
aws s3 sync "s3://$ARCHIVE_BUCKET/$PREFIX" "archive/$PREFIX"
find archive -name '*.jsonl.gz' | wc -l   # 0: a wrong bucket or prefix, nothing to read
