"""TimestreamTable (optional module): an Amazon Timestream for LiveAnalytics database and table.

Timestream for LiveAnalytics has been closed to new customers since 2025-06-20; accounts that already
use it can keep creating databases and tables. Use the rotating DynamoDB tables otherwise.
"""

from __future__ import annotations

import re
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_timestream as timestream
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._binding import BindableConstruct
from cdk_ts._defaults import is_unresolved
from cdk_ts._import_checks import check_key
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._nag import acknowledge, grant_unscoped
from cdk_ts._table_metrics import TimestreamMetricFactory
from cdk_ts._validation import Problems
from cdk_ts.buckets import secure_bucket, stack_access_logs_bucket
from cdk_ts_runtime import _environment

MEMORY_HOURS = (1, 8766)
MAGNETIC_DAYS = (1, 73000)
_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,256}")


class TimestreamTableBase(BindableConstruct):
    """What any Timestream table can do, created here or elsewhere: the data grants on its ARN, ``bind`` and metrics.

    ``TimestreamTable`` creates the database and the table; ``TimestreamTable.from_table_name`` returns
    one of these for a table another stack or app deployed. Exposes ``table_arn``, ``database_name``,
    ``table_name`` and ``encryption_key``. ``bind(function)`` sets the names ``TimestreamWriter.from_env`` reads.
    """

    #: The table's ARN.
    table_arn: str
    #: The database's name (a deploy-time value when CloudFormation generates it).
    database_name: str
    #: The table's name (a deploy-time value when CloudFormation generates it).
    table_name: str

    def __init__(self, scope: Construct, construct_id: str, *, encryption_key: kms.IKey | None = None) -> None:
        """Hold the KMS key the grants include; the owning construct and the importer set the names and ARN.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param encryption_key: the database's KMS key (and the rejected records'), so grants include it.
            Default: None — Timestream's AWS managed key, which needs no grant.
        """
        super().__init__(scope, construct_id)
        self.encryption_key = encryption_key

    @property
    def binding_environment(self) -> dict[str, str]:
        """The database's and the table's names, which ``TimestreamWriter.from_env`` reads.

        As ``CDK_TS_TIMESTREAM_DATABASE_NAME`` and ``CDK_TS_TIMESTREAM_TABLE_NAME``.
        """
        return {
            _environment.TIMESTREAM_DATABASE_NAME: self.database_name,
            _environment.TIMESTREAM_TABLE_NAME: self.table_name,
        }

    def metric_magnetic_store_rejected_records(self, **props: Any) -> cloudwatch.IMetric:
        """Records the magnetic store rejected asynchronously (``MagneticStoreRejectedRecordCount``), summed.

        These are the late writes whose reports land in the rejected-records bucket; any is worth a look.
        A Metrics Insights query over every ``Operation`` of this table, so it can drive an alarm.

        :param props: metric options (``label``, ``period``...). Sum over 5 minutes.
        """
        return TimestreamMetricFactory(self.database_name, self.table_name).magnetic_store_rejected_records(**props)

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


class TimestreamTable(TimestreamTableBase):
    """A Timestream database (optionally with a customer KMS key) and one table.

    The table is partitioned on ``partition_key_dimension`` (a high-cardinality dimension queries
    filter on; enforced in every record unless ``enforce_partition_key=False``), keeps data
    ``memory_retention`` in the memory store and ``magnetic_retention`` in the magnetic store, and
    accepts late writes into the magnetic store, with rejected records written to S3.
    Exposes ``database``, ``table``, ``table_arn``, ``database_name``, ``table_name`` and
    ``rejected_records_bucket`` (None without magnetic store writes). For a table another stack or app
    deployed, ``from_table_name``.

    Keyword arguments of the constructor:

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

        Keywords in the class docstring.
        """
        problems = Problems(scope, construct_id)
        memory_hours, magnetic_days = _retention(
            problems, memory_retention or Duration.hours(24), magnetic_retention or Duration.days(365)
        )
        _check_names(problems, database_name=database_name, table_name=table_name)
        problems.raise_if_any()
        super().__init__(scope, construct_id, encryption_key=encryption_key)
        self.database = self._create_database(database_name)
        self.rejected_records_bucket = (
            self._rejected_records_bucket(rejected_records_bucket) if enable_magnetic_store_writes else None
        )
        self.table = timestream.CfnTable(
            self,
            "Table",
            database_name=self.database.ref,
            table_name=table_name,
            retention_properties={
                "MemoryStoreRetentionPeriodInHours": str(memory_hours),
                "MagneticStoreRetentionPeriodInDays": str(magnetic_days),
            },
            magnetic_store_write_properties=_magnetic_store_writes(self.rejected_records_bucket, encryption_key),
            schema=_schema(partition_key_dimension, enforce_partition_key),
        )
        self.table.add_resource_dependency(self.database)
        self.partition_key_dimension = partition_key_dimension
        self.database_name = self.database.ref
        self.table_name = self.table.attr_name

    @property
    def table_arn(self) -> str:
        """The table's ARN."""
        return self.table.attr_arn

    @classmethod
    def from_table_name(
        cls, scope: Construct, construct_id: str, *,
        database_name: str,
        table_name: str,
        encryption_key: kms.IKey | None = None,
    ) -> TimestreamTableBase:
        """A Timestream table another stack or app created, for the same grants; creates nothing.

        The table is found by its database's name and its own: its ARN is
        ``arn:{partition}:timestream:{region}:{account}:database/{database_name}/table/{table_name}`` in this
        stack's account and Region.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param database_name: the database's name (the owning ``TimestreamTable``'s ``database_name``).
        :param table_name: the table's name (the owning ``TimestreamTable``'s ``table_name``).
        :param encryption_key: the database's customer managed KMS key, so grants include it.
            Default: None — Timestream's AWS managed key, which needs no grant.
        :raises ValueError: naming the construct path, for a name Timestream would refuse.
        """
        problems = Problems(scope, construct_id)
        _check_names(problems, database_name=database_name, table_name=table_name)
        check_key(problems, "encryption_key", encryption_key)
        problems.raise_if_any()
        return _ImportedTimestreamTable(
            scope, construct_id, database_name=database_name, table_name=table_name, encryption_key=encryption_key
        )

    def _create_database(self, database_name: str | None) -> timestream.CfnDatabase:
        """The database, encrypted with ``encryption_key`` or (acknowledged for cdk-nag) the AWS managed key."""
        database = timestream.CfnDatabase(
            self,
            "Database",
            database_name=database_name,
            kms_key_id=self.encryption_key.key_arn if self.encryption_key else None,
        )
        if self.encryption_key is None:
            acknowledge(database, "AwsSolutions-TS3",
                        "encrypted at rest with Timestream's AWS managed key by default, as cdk-ts tables are with "
                        "AWS owned keys; pass encryption_key= for a customer managed key")
        return database

    def _rejected_records_bucket(self, given: s3.IBucket | None) -> s3.IBucket:
        """``given``, or a new secure bucket logging its access to the stack's access-logs bucket."""
        if given is not None:
            return given
        return secure_bucket(
            self,
            "RejectedRecords",
            server_access_logs_bucket=stack_access_logs_bucket(self),
            server_access_logs_prefix=f"{path_of(self)}/rejected-records/",
        )


class _ImportedTimestreamTable(TimestreamTableBase):
    """A Timestream table deployed elsewhere, known by name: what ``TimestreamTable.from_table_name`` returns."""

    def __init__(
        self, scope: Construct, construct_id: str, *,
        database_name: str, table_name: str, encryption_key: kms.IKey | None,
    ) -> None:
        super().__init__(scope, construct_id, encryption_key=encryption_key)
        self.database_name = database_name
        self.table_name = table_name
        self.table_arn = stack_of(self).format_arn(
            service="timestream", resource="database", resource_name=f"{database_name}/table/{table_name}"
        )


def _retention(problems: Problems, memory: Duration, magnetic: Duration) -> tuple[int, int]:
    """The memory store's whole hours and the magnetic store's whole days, with a problem for each out of range."""
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
    return int(memory_hours), int(magnetic_days)


def _check_names(problems: Problems, **names: str | None) -> None:
    """Record each name that is not None, a deploy-time token, or 3-256 characters of ``[a-zA-Z0-9_.-]``."""
    for label, name in names.items():
        problems.check(
            name is None or is_unresolved(name) or bool(_NAME.fullmatch(name)),
            f"{label} {name!r} must be 3-256 characters of [a-zA-Z0-9_.-]",
        )


def _magnetic_store_writes(rejected_records: s3.IBucket | None, encryption_key: kms.IKey | None) -> dict:
    """``MagneticStoreWriteProperties``: on, rejected records to ``rejected/`` of the bucket, or off (no bucket)."""
    if rejected_records is None:
        return {"EnableMagneticStoreWrites": False}
    s3_config = {
        "BucketName": rejected_records.bucket_name,
        "ObjectKeyPrefix": "rejected/",
        "EncryptionOption": "SSE_KMS" if encryption_key else "SSE_S3",
    }
    if encryption_key:
        s3_config["KmsKeyId"] = encryption_key.key_arn
    return {"EnableMagneticStoreWrites": True, "MagneticStoreRejectedDataLocation": {"S3Configuration": s3_config}}


def _schema(partition_key_dimension: str | None, enforce: bool) -> timestream.CfnTable.SchemaProperty:
    """The composite partition key: the dimension (required in records when ``enforce``), else the measure name."""
    if partition_key_dimension:
        key = timestream.CfnTable.PartitionKeyProperty(
            type="DIMENSION", name=partition_key_dimension, enforcement_in_record="REQUIRED" if enforce else "OPTIONAL"
        )
    else:
        key = timestream.CfnTable.PartitionKeyProperty(type="MEASURE")
    return timestream.CfnTable.SchemaProperty(composite_partition_key=[key])
