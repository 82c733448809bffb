"""StreamArchiverBase: what a stream archive can do, created here or deployed by another stack or account.

The archive bucket and prefix, the failure bucket, the Glue catalog names, ``grant_*``, ``bind`` and
the metrics, shared by the owning ``StreamArchiver`` and by ``StreamArchiver.from_archive_bucket_name``
(``imported``), the way aws-cdk's ``TableBaseV2`` serves ``TableV2`` and ``TableV2.fromTableAttributes``.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs

from cdk_ts import _perms
from cdk_ts._binding import BindableConstruct
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._nag import acknowledge, acknowledge_wildcard_resources
from cdk_ts.archive._glue_names import VIEW_SUFFIX
from cdk_ts.archive._monitoring import ArchiverMetricFactory, archiver_widgets
from cdk_ts.archive._resources import grant_archive_write
from cdk_ts_runtime._archiver import ENV_BUCKET, ENV_FAILURE_BUCKET, ENV_PREFIX, ArchiverMetric
from cdk_ts_runtime._errors import ValidationError

#: Why the grant on the failure bucket (aws-cdk-lib's ``grant_read_write``) uses wildcards.
FAILURE_GRANT_REASON = (
    "Lambda writes failure records under aws/lambda/<mapping-uuid>/<shard>/... with the function's role "
    "(keys AWS chooses) and the replay reads, lists and moves them under done/; this is the read/write "
    "grant aws-cdk-lib's S3OnFailureDestination makes on the failure bucket"
)


class StreamArchiverBase(BindableConstruct):
    """A DynamoDB stream archive in S3: its buckets, Glue names, grants, ``bind`` and metrics.

    Creates nothing. ``StreamArchiver`` extends it with the function, the stream mappings, the buckets,
    the catalog and the alarms; ``StreamArchiver.from_archive_bucket_name`` returns one for an archive
    another stack or account owns, so a reader or a replay there is granted the same way.

    Attributes: ``bucket`` (the archive bucket), ``prefix``, ``failure_bucket`` (None with an SQS failure
    destination, or when imported without one), ``dead_letter_queue`` (None unless SQS), ``function``
    (the archiver function; None when imported without ``function_name``), ``glue_database_name`` (None
    without a catalog) and ``glue_table_name`` (an owner derives one even without a catalog; an import has
    None without one).
    """

    bucket: s3.IBucket
    prefix: str
    failure_bucket: s3.IBucket | None
    dead_letter_queue: sqs.IQueue | None
    function: lambda_.IFunction | None
    glue_database_name: str | None
    glue_table_name: str | None
    #: The account of the Glue catalog holding the archive's table; None: this stack's account.
    _catalog_account: str | None = None

    @property
    def failure_metrics_filter_id(self) -> str | None:
        """The S3 request-metrics filter ID the failed-batches metric reads (on the ``aws/lambda/`` prefix)."""
        return None

    # ---- grants ---------------------------------------------------------------------------------

    def grant_read_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read the archive: ``s3:GetObject`` on every object under the prefix, ``s3:ListBucket`` of the prefix.

        Decrypt with the bucket's key when it has one. For Athena add ``grant_catalog_read``.

        :param grantee: who reads (a DuckDB job, a function, a role of an analytics account).
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for ``{prefix}*`` on ``grantee``'s
            policy. Default: False — the finding stays for you to review.
        """
        objects = self.bucket.arn_for_objects(f"{self.prefix}*")
        grant = iam.Grant.add_to_principal(
            grantee=grantee, actions=list(_perms.S3_ARCHIVE_READ_ACTIONS), resource_arns=[objects]
        )
        iam.Grant.add_to_principal(
            grantee=grantee, actions=list(_perms.S3_LIST_BUCKET_ACTIONS), resource_arns=[self.bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{self.prefix}*"]}},
        )
        if self.bucket.encryption_key is not None:
            self.bucket.encryption_key.grant_decrypt(grantee)
        if acknowledge_nag_findings:
            acknowledge_wildcard_resources(
                grantee, self, [objects], f"the archive holds one object per table and hour under {self.prefix}"
            )
        return grant

    def grant_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """What the archiver function (``cdk_ts_runtime._archiver.StreamRecordArchiver``) does: archive and replay.

        ``s3:PutObject``/``s3:AbortMultipartUpload`` on the objects under the prefix (encrypt with the
        bucket's key when it has one) and, with a failure bucket, read, list, write and delete in it
        (``replay`` moves failure records under ``done/``): the grant the archiver function has.

        :param grantee: who archives or replays.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the archive prefix and the
            failure bucket's objects and action wildcards on ``grantee``'s policy. Default: False.
        """
        grant = grant_archive_write(
            grantee, self, self.bucket, self.prefix, acknowledge_nag_findings=acknowledge_nag_findings
        )
        if self.failure_bucket is not None:
            grant = grant.combine(self.failure_bucket.grant_read_write(grantee))
            if acknowledge_nag_findings:
                self._acknowledge_failure_grant(grantee, self.failure_bucket)
        return grant

    def grant_read_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Both grants above: read the archive, archive and replay.

        :param grantee: who reads, archives or replays.
        :param acknowledge_nag_findings: acknowledge the two grants' ``AwsSolutions-IAM5`` findings on
            ``grantee``'s policy. Default: False.
        """
        read = self.grant_read_data(grantee, acknowledge_nag_findings=acknowledge_nag_findings)
        return read.combine(self.grant_write_data(grantee, acknowledge_nag_findings=acknowledge_nag_findings))

    def grant_catalog_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Read the archive's Glue entries as an Athena query does: the table and its ``_deduplicated`` view.

        ``glue:GetDatabase``, ``glue:GetTable`` and ``glue:GetPartitions`` on the catalog, the database,
        the table and the view (Athena needs the resource and its ancestors: "Configure access to
        databases and tables in the AWS Glue Data Catalog", Athena user guide). Pair it with
        ``grant_read_data`` (the objects) and your Athena workgroup's permissions.

        :param grantee: who queries.
        :raises ValueError: when the archive has no Glue catalog (or was imported without ``glue_database_name``).
        """
        if self.glue_database_name is None or self.glue_table_name is None:
            raise ValidationError(
                f"{path_of(self)} has no Glue catalog: create it with glue_database=..., or import it with "
                "glue_database_name= and glue_table_name="
            )
        database, table = self.glue_database_name, self.glue_table_name
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=list(_perms.GLUE_CATALOG_READ_ACTIONS),
            resource_arns=[self._glue_arn("catalog"), self._glue_arn("database", database),
                           self._glue_arn("table", f"{database}/{table}"),
                           self._glue_arn("table", f"{database}/{table}{VIEW_SUFFIX}")],
        )

    @property
    def binding_environment(self) -> dict[str, str]:
        """What ``StreamRecordArchiver.from_env`` reads: ``CDK_TS_ARCHIVE_BUCKET`` and ``CDK_TS_ARCHIVE_PREFIX``.

        With a failure bucket also ``CDK_TS_ARCHIVE_FAILURE_BUCKET``, what the replay reads by default.
        """
        environment = {ENV_BUCKET: self.bucket.bucket_name, ENV_PREFIX: self.prefix}
        if self.failure_bucket is not None:
            environment[ENV_FAILURE_BUCKET] = self.failure_bucket.bucket_name
        return environment

    def _glue_arn(self, resource: str, name: str | None = None) -> str:
        return stack_of(self).format_arn(
            service="glue", resource=resource, resource_name=name, account=self._catalog_account
        )

    def _acknowledge_failure_grant(self, grantee: iam.IGrantable, failure_bucket: s3.IBucket) -> None:
        acknowledge_wildcard_resources(grantee, self, [failure_bucket.arn_for_objects("*")], FAILURE_GRANT_REASON)
        for action in _perms.S3_READ_WRITE_GRANT_WILDCARDS:
            acknowledge(grantee, f"AwsSolutions-IAM5[Action::{action}]", FAILURE_GRANT_REASON)

    # ---- monitoring -----------------------------------------------------------------------------

    def _function_name(self) -> str | None:
        return None if self.function is None else self.function.function_name

    def _metrics(self) -> ArchiverMetricFactory:
        return ArchiverMetricFactory(
            self, function_name=self._function_name(), dead_letter_queue=self.dead_letter_queue,
            failure_bucket=self.failure_bucket, failure_metrics_filter_id=self.failure_metrics_filter_id,
        )

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The graphs ``MonitoringDashboard.monitor`` shows: iterator age; failed batches, delivery failures, errors."""
        return archiver_widgets(self.node.id, self._metrics())

    def metric_iterator_age(self, **props: Any) -> cloudwatch.Metric:
        """How long the newest record of a batch waited in the stream, in milliseconds (``IteratorAge``; Maximum)."""
        return self._metrics().iterator_age(**props)

    def metric_errors(self, **props: Any) -> cloudwatch.Metric:
        """Invocations of the archiver function that raised (``AWS/Lambda`` ``Errors``; Sum)."""
        return self._metrics().errors(**props)

    def metric(self, metric_name: ArchiverMetric | str, **props: Any) -> cloudwatch.Metric:
        """A metric the archiver function writes per batch as an EMF line (namespace ``cdk-ts``, ``FunctionName``).

        ``ArchiverMetric`` names them: ``ARCHIVED_RECORDS``, ``ARCHIVE_WRITE_FAILURES`` (1 when a PutObject failed
        and Lambda retries from that group) and ``UNREADABLE_RECORDS``.

        :param metric_name: an ``ArchiverMetric`` or its value (``"ArchivedRecords"``).
        :param props: metric options (``period``, ``statistic``, ``label``...) over the default, the Sum.
        :raises ValueError: for a name the archiver does not write.
        """
        return self._metrics().archiver_metric(metric_name, **props)

    def metric_failure_delivery_failures(self, **props: Any) -> cloudwatch.Metric:
        """Failed batches Lambda could not deliver to the failure destination (``DestinationDeliveryFailures``; Sum).

        Records of such a batch are lost once they leave the stream (24 hours).
        """
        return self._metrics().failure_delivery_failures(**props)

    def metric_dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Batches the mappings gave up on: failure records written to the failure bucket, or queue depth with SQS.

        With S3: the bucket's ``PutRequests`` request metric on the ``aws/lambda/`` prefix (a metrics
        configuration this construct adds to a bucket defined in the app; for an imported
        ``failure_bucket`` add one named ``failure_metrics_filter_id`` yourself).

        :param props: metric options (``period``, ``statistic``, ``label``...) over the defaults, five minutes
            and the Sum of ``PutRequests`` (S3) or the Maximum of ``ApproximateNumberOfMessagesVisible`` (SQS).
        """
        return self._metrics().dead_letters(**props)
