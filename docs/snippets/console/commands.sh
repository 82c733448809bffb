# on AWS; on the emulator, the list-stack-resources lookup (Getting started, "What the main command does")
FN=$(aws cloudformation describe-stacks --stack-name CdkTsSample \
     --query "Stacks[0].Outputs[?OutputKey=='RotationFunctionName'].OutputValue" --output text)
cdk-ts status --function "$FN"                        # tables, tiers, ownership, export proof, next table
cdk-ts status --table-prefix telemetry --period daily --json
cdk-ts rotate --dry-run resize_old --function "$FN" --at 2026-03-02T00:15:00Z
cdk-ts replay --bucket "$FAILURE_BUCKET" --archive-bucket "$ARCHIVE_BUCKET"   # failure records back into the archive
cdk-ts plan --writes-per-second 1000 --item-size 200                        # also installed as cdk-ts-plan
cdk-ts archive-status --function "$COMPACTION_FN"     # archive partitions: raw, compacted, late records waiting
