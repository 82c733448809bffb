# names from the sample app's outputs: the archiver's function, its failure bucket and the archive bucket
output() { aws cloudformation describe-stacks --stack-name CdkTsSample \
           --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text; }
FN=$(output TelemetryArchiverFunctionName)
FAILURE_BUCKET=$(output TelemetryArchiverFailureBucketName)
ARCHIVE_BUCKET=$(output ArchiveBucketName)
# 1. what is waiting
aws s3 ls "s3://$FAILURE_BUCKET/aws/lambda/" --recursive
# 2a. replay inside AWS, with the function's own role and settings
aws lambda invoke --function-name "$FN" --cli-binary-format raw-in-base64-out \
    --payload '{"Operation": "replay"}' report.json && cat report.json
# 2b. or from a workstation with cdk-ts installed (exit code 1 when any record was left in place, 3 when an
#     AWS call failed (no credentials, no such bucket: one line on stderr); --json prints the report)
cdk-ts replay --bucket "$FAILURE_BUCKET" \
    --archive-bucket "$ARCHIVE_BUCKET" --archive-prefix cdc/telemetry/
# 3. nothing left to do when this lists nothing
aws s3 ls "s3://$FAILURE_BUCKET/aws/lambda/" --recursive
