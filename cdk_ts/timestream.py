"""TimestreamTable (optional module): an Amazon Timestream for LiveAnalytics database and table.

Timestream for LiveAnalytics has been closed to new customers since 2025-06-20; accounts that already
use it can keep creating databases and tables. Use the rotating DynamoDB tables otherwise.
"""

from __future__ import annotations

import re
import warnings

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_timestream as timestream
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._defaults import is_unresolved
from cdk_ts._nag import acknowledge, grant_unscoped
from cdk_ts._validation import Problems
from cdk_ts.buckets import secure_bucket, stack_access_logs_bucket

MEMORY_HOURS = (1, 8766)
MAGNETIC_DAYS = (1, 73000)
_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,256}")


class TimestreamTable(Construct):
    """A Timestream database (optionally with a customer KMS key) and one table.

    The table is partitioned on ``partition_key_dimension`` (a high-cardinality dimension queries
    filter on; enforced in every record unless ``enforce_partition_key=False``), keeps data
    ``memory_retention`` in the memory store and ``magnetic_retention`` in the magnetic store, and
    accepts late writes into the magnetic store, with rejected records written to S3.
    Exposes ``database``, ``table`` and ``rejected_records_bucket`` (None without magnetic store writes).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        database_name: str | None = None,
        table_name: str | None = None,
        encryption_key: kms.IKey | None = None,
        partition_key_dimension: str | None = None,
        enforce_partition_key: bool = True,
        memory_retention: Duration | None = None,
        magnetic_retention: Duration | None = None,
        enable_magnetic_store_writes: bool = True,
        rejected_records_bucket: s3.IBucket | None = None,
    ) -> None:
        """Create the database, the table and (with magnetic store writes) the rejected-records bucket.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param database_name: the database's name (3-256 characters of ``[a-zA-Z0-9_.-]``).
            Default: None — CloudFormation generates one.
        :param table_name: the table's name (same rules).
            Default: None — CloudFormation generates one.
        :param encryption_key: the KMS key for the database and for rejected records (SSE-KMS).
            Default: None — Timestream's AWS managed key (and SSE-S3 for rejected records).
        :param partition_key_dimension: a high-cardinality dimension queries filter on, used as the table's
            composite partition key. Default: None — partitioned by measure name (Timestream's default).
        :param enforce_partition_key: require ``partition_key_dimension`` in every record (only used with a
            partition key dimension). Default: True; False makes it optional.
        :param memory_retention: how long data stays in the memory store (whole hours, 1 hour to 8766 hours).
            Default: None — 24 hours.
        :param magnetic_retention: how long data stays in the magnetic store (whole days, 1 to 73000).
            Default: None — 365 days.
        :param enable_magnetic_store_writes: accept writes older than the memory retention into the magnetic
            store, with rejected records written to S3. Default: True.
        :param rejected_records_bucket: where rejected magnetic-store records are written (under
            ``rejected/``). Default: None — a new secure bucket (SSE-S3, SSL-only, versioned, access
            logged, retained); none at all when ``enable_magnetic_store_writes`` is False.
        :raises ValueError: naming this construct's path and every problem at once, retentions out of range
            or not whole, or an invalid name.
        """
        problems = Problems(scope, construct_id)
        memory = memory_retention or Duration.hours(24)
        magnetic = magnetic_retention or Duration.days(365)
        memory_hours = memory.to_seconds() / 3600
        magnetic_days = magnetic.to_seconds() / 86400
        problems.check(
            MEMORY_HOURS[0] <= memory_hours <= MEMORY_HOURS[1] and memory_hours == int(memory_hours),
            f"memory_retention {memory_hours:g} hours must be whole hours in 1-8766",
        )
        problems.check(
            MAGNETIC_DAYS[0] <= magnetic_days <= MAGNETIC_DAYS[1] and magnetic_days == int(magnetic_days),
            f"magnetic_retention {magnetic_days:g} days must be whole days in 1-73000",
        )
        for label, name in (("database_name", database_name), ("table_name", table_name)):
            problems.check(
                name is None or is_unresolved(name) or bool(_NAME.fullmatch(name)),
                f"{label} {name!r} must be 3-256 characters of [a-zA-Z0-9_.-]",
            )
        problems.raise_if_any()
        super().__init__(scope, construct_id)
        self.encryption_key = encryption_key
        self.database = timestream.CfnDatabase(
            self,
            "Database",
            database_name=database_name,
            kms_key_id=encryption_key.key_arn if encryption_key else None,
        )
        if encryption_key is None:
            acknowledge(self.database, "AwsSolutions-TS3",
                        "encrypted at rest with Timestream's AWS managed key by default, as cdk-ts tables are with "
                        "AWS owned keys; pass encryption_key= for a customer managed key")
        magnetic_writes: dict = {"EnableMagneticStoreWrites": enable_magnetic_store_writes}
        self.rejected_records_bucket = None
        if enable_magnetic_store_writes:
            if rejected_records_bucket is None:
                rejected_records_bucket = secure_bucket(
                    self,
                    "RejectedRecords",
                    server_access_logs_bucket=stack_access_logs_bucket(self),
                    server_access_logs_prefix=f"{self.node.path}/rejected-records/",
                )
            self.rejected_records_bucket = rejected_records_bucket
            s3_config = {
                "BucketName": rejected_records_bucket.bucket_name,
                "ObjectKeyPrefix": "rejected/",
                "EncryptionOption": "SSE_KMS" if encryption_key else "SSE_S3",
            }
            if encryption_key:
                s3_config["KmsKeyId"] = encryption_key.key_arn
            magnetic_writes["MagneticStoreRejectedDataLocation"] = {"S3Configuration": s3_config}
        partition = (
            {
                "Type": "DIMENSION",
                "Name": partition_key_dimension,
                "EnforcementInRecord": "REQUIRED" if enforce_partition_key else "OPTIONAL",
            }
            if partition_key_dimension
            else {"Type": "MEASURE"}
        )
        self.table = timestream.CfnTable(
            self,
            "Table",
            database_name=self.database.ref,
            table_name=table_name,
            retention_properties={
                "MemoryStoreRetentionPeriodInHours": str(int(memory_hours)),
                "MagneticStoreRetentionPeriodInDays": str(int(magnetic_days)),
            },
            magnetic_store_write_properties=magnetic_writes,
            schema=timestream.CfnTable.SchemaProperty(
                composite_partition_key=[
                    timestream.CfnTable.PartitionKeyProperty(
                        type=partition["Type"],
                        name=partition.get("Name"),
                        enforcement_in_record=partition.get("EnforcementInRecord"),
                    )
                ]
            ),
        )
        self.table.add_resource_dependency(self.database)
        self.partition_key_dimension = partition_key_dimension

    @property
    def table_arn(self) -> str:
        """The table's ARN."""
        return self.table.attr_arn

    def _grant_data(
        self, grantee: iam.IGrantable, actions: tuple[str, ...], kms_actions: tuple[str, ...], acknowledge: bool
    ) -> iam.Grant:
        grant_unscoped(
            grantee, _perms.TIMESTREAM_ENDPOINT_ACTIONS, acknowledge_finding=acknowledge,
            reason="timestream:DescribeEndpoints has no resource-level permissions; clients need it to find "
            "the endpoint they then write to or query",
        )
        if self.encryption_key is not None:
            self.encryption_key.grant(grantee, *kms_actions)
        return iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=[self.table_arn])

    def grant_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """WriteRecords and DescribeTable on this table (and the DescribeEndpoints lookup).

        :param grantee: who writes.
        :param acknowledge_nag_findings: acknowledge the cdk-nag finding of DescribeEndpoints
            (``AwsSolutions-IAM5[Resource::*]``) on ``grantee``'s policy.
            Default: False — the finding stays for you to review.
        """
        return self._grant_data(
            grantee, _perms.TIMESTREAM_WRITE_ACTIONS, _perms.KMS_ENCRYPT_DECRYPT_ACTIONS, acknowledge_nag_findings
        )

    def grant_read_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Select and DescribeTable on this table (and the DescribeEndpoints lookup).

        :param grantee: who queries.
        :param acknowledge_nag_findings: acknowledge the cdk-nag finding of DescribeEndpoints
            (``AwsSolutions-IAM5[Resource::*]``) on ``grantee``'s policy. Default: False.
        """
        return self._grant_data(
            grantee, _perms.TIMESTREAM_QUERY_ACTIONS, _perms.KMS_DECRYPT_ACTIONS, acknowledge_nag_findings
        )

    def grant_read_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Select, WriteRecords and DescribeTable on this table (and the DescribeEndpoints lookup), in one grant.

        :param grantee: who writes and queries.
        :param acknowledge_nag_findings: acknowledge the cdk-nag finding of DescribeEndpoints
            (``AwsSolutions-IAM5[Resource::*]``) on ``grantee``'s policy. Default: False.
        """
        return self._grant_data(
            grantee, _perms.TIMESTREAM_READ_WRITE_ACTIONS, _perms.KMS_ENCRYPT_DECRYPT_ACTIONS, acknowledge_nag_findings
        )

    def grant_write(self, grantee: iam.IGrantable) -> iam.Grant:
        """Deprecated alias of :meth:`grant_write_data` (removed in 0.3.0).

        :param grantee: who writes.
        """
        warnings.warn(
            "TimestreamTable.grant_write is deprecated; use grant_write_data", DeprecationWarning, stacklevel=2
        )
        return self.grant_write_data(grantee)

    def grant_query(self, grantee: iam.IGrantable) -> iam.Grant:
        """Deprecated alias of :meth:`grant_read_data` (removed in 0.3.0).

        :param grantee: who queries.
        """
        warnings.warn(
            "TimestreamTable.grant_query is deprecated; use grant_read_data", DeprecationWarning, stacklevel=2
        )
        return self.grant_read_data(grantee)
