"""DeviceLogTableBase: what any device log table can do, created here or deployed by another stack or app."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts._insights import ThrottledKeysRule
from cdk_ts._lookups import path_of
from cdk_ts._nag import acknowledge, acknowledge_wildcard_resources
from cdk_ts._single_table import SingleTableConstruct
from cdk_ts._table_metrics import TableMetricFactory
from cdk_ts_runtime._device_log import ENV_TABLE_NAME
from cdk_ts_runtime._errors import ValidationError


class DeviceLogTableBase(SingleTableConstruct):
    """What any device log table can do, created here or elsewhere: grants, ``bind`` and metrics.

    ``DeviceLogTable`` creates the table (or wraps ``existing_table``); ``DeviceLogTable.from_table_name``
    returns one of these for a table another stack or app deployed. Exposes ``table``, ``stream_view_type``
    (None when not known here), ``encryption_key`` and ``throttled_keys_rule``.
    """

    table: dynamodb.ITable

    def __init__(self, scope: Construct, construct_id: str) -> None:
        """Start with nothing known but the path; the owning construct and the importer set ``table``.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        """
        super().__init__(scope, construct_id)
        self.stream_view_type: dynamodb.StreamViewType | None = None
        self.encryption_key: kms.IKey | None = None
        #: Reads the table's throttled-keys rule name at deploy time (``throttled_keys_insights=True``), for the
        #: dashboard row; None otherwise.
        self.throttled_keys_rule: ThrottledKeysRule | None = None

    def metric_throttled_requests(self, **props: Any) -> cloudwatch.IMetric:
        """Throttled requests on the table, every operation summed (``AWS/DynamoDB`` ``ThrottledRequests``).

        :param props: metric options (``label``, ``period``...). Sum over 5 minutes.
        """
        return TableMetricFactory(self.table).throttled_requests(**props)

    def grant_read_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Query/GetItem/BatchGetItem/Scan on the table and both GSIs (what the seven reads need).

        :param grantee: who reads.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the ``<table>/index/*``
            resource on ``grantee``'s policy. Default: False — the finding stays for you to review.
        """
        return self._acknowledged(grantee, self.table.grant_read_data(grantee), acknowledge_nag_findings)

    def grant_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """PutItem/UpdateItem/DeleteItem/BatchWriteItem on the table (create and escalate entries).

        :param grantee: who writes.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the ``<table>/index/*``
            resource on ``grantee``'s policy. Default: False.
        """
        return self._acknowledged(grantee, self.table.grant_write_data(grantee), acknowledge_nag_findings)

    def grant_read_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Both of the above.

        :param grantee: who reads and writes.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the ``<table>/index/*``
            resource on ``grantee``'s policy. Default: False.
        """
        return self._acknowledged(grantee, self.table.grant_read_write_data(grantee), acknowledge_nag_findings)

    def grant_stream_read(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read the table's stream (DescribeStream, GetRecords, GetShardIterator, ListStreams).

        :param grantee: the stream consumer.
        :param acknowledge_nag_findings: acknowledge the wildcard-resource finding of
            ``dynamodb:ListStreams`` (``AwsSolutions-IAM5[Resource::*]``) on ``grantee``'s policy.
            Default: False.
        :raises ValueError: when the table has no stream.
        """
        if self.table.table_stream_arn is None:
            raise ValidationError(
                f"{path_of(self)} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES"
            )
        grant = self.table.grant_stream_read(grantee)
        if acknowledge_nag_findings:
            acknowledge(grantee, "AwsSolutions-IAM5[Resource::*]", "ListStreams has no resource-level permissions")
        return grant

    @property
    def binding_environment(self) -> dict[str, str]:
        """``CDK_TS_DEVICE_LOG_TABLE_NAME``, which ``DeviceLogRepository.from_env`` reads."""
        return {ENV_TABLE_NAME: self.table.table_name}

    def _acknowledged(self, grantee: iam.IGrantable, grant: iam.Grant, acknowledge_nag_findings: bool) -> iam.Grant:
        if acknowledge_nag_findings:
            acknowledge_wildcard_resources(
                grantee,
                self,
                [f"{self.table.table_arn}/index/*"],
                "the grant covers this one table's two GSIs (GSI1, GSI2), which the repository queries",
            )
        return grant
