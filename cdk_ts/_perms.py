"""IAM action lists every cdk-ts grant uses, written once so the constructs cannot drift apart."""

from __future__ import annotations

#: Data reads on a table and its indexes (what ``ITable.grant_read_data`` grants, plus DescribeTable).
DYNAMODB_READ_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DescribeTable",
)
#: Data writes on a table; DescribeTable lets a writer check the table exists before a batch.
DYNAMODB_WRITE_ACTIONS = (
    "dynamodb:BatchWriteItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:DescribeTable",
)
#: Both of the above, without duplicates.
DYNAMODB_READ_WRITE_ACTIONS = tuple(dict.fromkeys(DYNAMODB_READ_ACTIONS + DYNAMODB_WRITE_ACTIONS))
#: Reading a table's stream (on the ``.../stream/*`` ARN).
DYNAMODB_STREAM_ACTIONS = ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator")
#: Listing streams has no resource-level permissions (``*``).
DYNAMODB_LIST_STREAMS_ACTIONS = ("dynamodb:ListStreams",)

#: What the rotation function does to the period tables it manages.
DYNAMODB_TABLE_ADMIN_ACTIONS = (
    "dynamodb:CreateTable",
    "dynamodb:UpdateTable",
    "dynamodb:DeleteTable",
    "dynamodb:DescribeTable",
    "dynamodb:TagResource",
    "dynamodb:DescribeContinuousBackups",
    "dynamodb:UpdateContinuousBackups",
    "dynamodb:DescribeTimeToLive",
    "dynamodb:UpdateTimeToLive",
    "dynamodb:ExportTableToPointInTime",
    "dynamodb:ListTagsOfResource",
)
#: What a rotation run does to its lock item (``cdk_ts_runtime._rotation.lock.RunLock``): take it with a
#: conditional put, release it with a conditional delete, read the holder with a consistent get.
DYNAMODB_LOCK_ACTIONS = ("dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:GetItem")
#: Following the exports of expired tables (on the ``.../export/*`` ARN).
DYNAMODB_DESCRIBE_EXPORT_ACTIONS = ("dynamodb:DescribeExport",)
#: Listing tables and exports has no resource-level permissions (``*``).
DYNAMODB_LIST_ACTIONS = ("dynamodb:ListTables", "dynamodb:ListExports")
#: Managing the stream mappings of one consumer function (conditioned on ``lambda:FunctionArn``).
LAMBDA_EVENT_SOURCE_MAPPING_ACTIONS = (
    "lambda:CreateEventSourceMapping",
    "lambda:DeleteEventSourceMapping",
    "lambda:GetEventSourceMapping",
    "lambda:UpdateEventSourceMapping",
)
#: Listing mappings has no resource-level permissions (``*``).
LAMBDA_LIST_MAPPINGS_ACTIONS = ("lambda:ListEventSourceMappings",)
#: The deploy-time custom resource's Delete reads its own stack's status: mappings go only when the stack does.
CLOUDFORMATION_OWN_STACK_ACTIONS = ("cloudformation:DescribeStacks",)
#: Creating DynamoDB auto scaling's service-linked role (conditioned on ``iam:AWSServiceName``).
IAM_SERVICE_LINKED_ROLE_ACTIONS = ("iam:CreateServiceLinkedRole",)
#: Auto scaling of provisioned period tables has no resource-level permissions (``*``).
APPLICATION_AUTOSCALING_ACTIONS = (
    "application-autoscaling:RegisterScalableTarget",
    "application-autoscaling:DeregisterScalableTarget",
    "application-autoscaling:DescribeScalableTargets",
    "application-autoscaling:PutScalingPolicy",
)
#: What ExportTableToPointInTime needs on the export bucket's objects.
S3_EXPORT_WRITE_ACTIONS = ("s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl")
#: What the archiver needs on the archive's objects.
S3_ARCHIVE_WRITE_ACTIONS = ("s3:PutObject", "s3:AbortMultipartUpload")
#: What a reader of the archive needs on its objects (``StreamArchiverBase.grant_read_data``).
S3_ARCHIVE_READ_ACTIONS = ("s3:GetObject",)
#: What S3 server access logging may do in a log bucket (its bucket policy, for ``logging.s3.amazonaws.com``).
S3_LOG_DELIVERY_ACTIONS = ("s3:PutObject",)

#: What a reader of data encrypted with a customer managed key needs on the key.
KMS_DECRYPT_ACTIONS = ("kms:Decrypt", "kms:DescribeKey")
#: What a writer (or reader-writer) of data encrypted with a customer managed key needs on the key.
KMS_ENCRYPT_DECRYPT_ACTIONS = (
    "kms:Decrypt",
    "kms:Encrypt",
    "kms:ReEncrypt*",
    "kms:GenerateDataKey*",
    "kms:DescribeKey",
)
#: What the rotation function needs to create, resize and export tables encrypted with a customer managed key.
KMS_TABLE_ADMIN_ACTIONS = ("kms:CreateGrant",) + KMS_ENCRYPT_DECRYPT_ACTIONS

#: Timestream writes (the table) and the endpoint discovery every Timestream client performs (``*``).
#: The action wildcards of aws-cdk's ``Bucket.grant_read_write`` as cdk-nag names them in IAM5 findings.
S3_READ_WRITE_GRANT_WILDCARDS = ("s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*")
TIMESTREAM_WRITE_ACTIONS = ("timestream:WriteRecords", "timestream:DescribeTable")
TIMESTREAM_QUERY_ACTIONS = ("timestream:Select", "timestream:DescribeTable")
TIMESTREAM_READ_WRITE_ACTIONS = tuple(dict.fromkeys(TIMESTREAM_QUERY_ACTIONS + TIMESTREAM_WRITE_ACTIONS))
TIMESTREAM_ENDPOINT_ACTIONS = ("timestream:DescribeEndpoints",)

#: Turning on Contributor Insights on a table and reading its state (Contributor_Insights_IAM in the DynamoDB
#: developer guide).
DESCRIBE_CONTRIBUTOR_INSIGHTS = "dynamodb:DescribeContributorInsights"
DYNAMODB_CONTRIBUTOR_INSIGHTS_ACTIONS = ("dynamodb:UpdateContributorInsights", DESCRIBE_CONTRIBUTOR_INSIGHTS)
#: The first table with Contributor Insights creates DynamoDB's service-linked role for them (same guide page).
CONTRIBUTOR_INSIGHTS_ROLE = (
    "role/aws-service-role/contributorinsights.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBCloudWatchContributorInsights"
)
#: Reading a Contributor Insights rule's top contributors; scoped to ``insight-rule/{name}`` ARNs (the service
#: authorization reference for CloudWatch lists the ``insight-rule`` resource type as required).
GET_INSIGHT_RULE_REPORT = "cloudwatch:GetInsightRuleReport"
#: CloudWatch metric reads have no resource-level permissions (``*``).
CLOUDWATCH_READ_METRICS_ACTIONS = ("cloudwatch:GetMetricStatistics",)

#: The compaction function: reads the raw JSON Lines, writes/reads/deletes Parquet generations and manifests,
#: lists both prefixes.
S3_COMPACTION_RAW_READ_ACTIONS = ("s3:GetObject",)
S3_COMPACTION_WRITE_ACTIONS = ("s3:GetObject", "s3:PutObject", "s3:DeleteObject")
S3_LIST_BUCKET_ACTIONS = ("s3:ListBucket",)
#: ... registers the partitions of the Parquet table it writes.
GLUE_PARTITION_ACTIONS = ("glue:GetTable", "glue:GetPartition", "glue:CreatePartition", "glue:UpdatePartition")
#: ... or commits to its Iceberg table in an S3 Tables table bucket.
S3_TABLES_COMMIT_ACTIONS = (
    "s3tables:GetTableBucket",
    "s3tables:GetNamespace",
    "s3tables:GetTable",
    "s3tables:GetTableMetadataLocation",
    "s3tables:UpdateTableMetadataLocation",
    "s3tables:GetTableData",
    "s3tables:PutTableData",
)
#: What an Athena query reads of the archive's Glue catalog entries (on the catalog, database, table and view:
#: "Configure access to databases and tables in the AWS Glue Data Catalog", Athena user guide).
GLUE_CATALOG_READ_ACTIONS = ("glue:GetDatabase", "glue:GetTable", "glue:GetPartitions")

#: Firehose delivering into an S3 Tables table: the statements of "Streaming data to tables with Amazon Data
#: Firehose" (Amazon S3 user guide), each on this sink's resources only.
FIREHOSE_GLUE_ACTIONS = ("glue:GetTable", "glue:GetDatabase", "glue:UpdateTable")
FIREHOSE_KINESIS_READ_ACTIONS = (
    "kinesis:DescribeStream", "kinesis:GetShardIterator", "kinesis:GetRecords", "kinesis:ListShards",
)
FIREHOSE_ERROR_BUCKET_ACTIONS = ("s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads")
FIREHOSE_ERROR_OBJECT_ACTIONS = ("s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject")
FIREHOSE_INVOKE_ACTIONS = ("lambda:InvokeFunction", "lambda:GetFunctionConfiguration")
FIREHOSE_LOG_ACTIONS = ("logs:PutLogEvents",)
#: Lake Formation vends the credentials for the table's data; the action has no resource-level permissions.
LAKE_FORMATION_DATA_ACCESS_ACTIONS = ("lakeformation:GetDataAccess",)
#: What Firehose's role may do on its table in Lake Formation: read it, write and delete rows, commit (ALTER).
FIREHOSE_LAKE_FORMATION_PERMISSIONS = ("DESCRIBE", "SELECT", "INSERT", "DELETE", "ALTER")
