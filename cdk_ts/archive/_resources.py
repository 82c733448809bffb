"""What a StreamArchiver creates: its archive and failure buckets (unless given) and the archiver function."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk_ts import _perms, buckets
from cdk_ts._defaults import runtime_function
from cdk_ts._lookups import path_of
from cdk_ts._nag import acknowledge_wildcard_resources
from cdk_ts_runtime._archiver import DONE_PREFIX, ENV_BUCKET, ENV_FAILURE_BUCKET, ENV_PREFIX


def archive_bucket(
    scope: Construct, *, logs: s3.IBucket, prefix: str, noncurrent: Duration,
    infrequent_access_after: Duration | None, glacier_after: Duration | None, raw_expiration: Duration | None,
) -> s3.Bucket:
    """The archive: a secure bucket logging to ``logs``, moving objects to colder classes, raw objects expiring."""
    return buckets.secure_bucket(
        scope,
        "Bucket",
        server_access_logs_bucket=logs,
        server_access_logs_prefix=f"{path_of(scope)}/archive/",
        lifecycle_rules=[
            s3.LifecycleRule(
                transitions=[
                    s3.Transition(
                        storage_class=s3.StorageClass.INFREQUENT_ACCESS,
                        transition_after=infrequent_access_after or Duration.days(30),
                    ),
                    s3.Transition(
                        storage_class=s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
                        transition_after=glacier_after or Duration.days(180),
                    ),
                ],
                noncurrent_version_expiration=noncurrent,
            ),
            *([s3.LifecycleRule(prefix=prefix or None, expiration=raw_expiration)] if raw_expiration else []),
        ],
    )


def failure_bucket(scope: Construct, *, logs: s3.IBucket, noncurrent: Duration) -> s3.Bucket:
    """The S3 failure destination: a secure bucket whose replayed records (under ``done/``) expire after 90 days."""
    return buckets.secure_bucket(
        scope,
        "FailureBucket",
        server_access_logs_bucket=logs,
        server_access_logs_prefix=f"{path_of(scope)}/failures/",
        lifecycle_rules=[
            # Failure records under aws/lambda/ are the only copy of their records: never expire them.
            s3.LifecycleRule(noncurrent_version_expiration=noncurrent),
            s3.LifecycleRule(prefix=DONE_PREFIX, expiration=Duration.days(90)),
        ],
    )


def archiver_function(
    scope: Construct, *, bucket: s3.IBucket, prefix: str, failure_bucket: s3.IBucket | None
) -> lambda_.Function:
    """The archiver function, allowed to write objects under ``prefix`` (and encrypt with the bucket's key)."""
    function = runtime_function(
        scope,
        "Function",
        handler="cdk_ts_runtime.handlers.archiver.handler",
        description="Archives DynamoDB stream records to S3 as gzip JSON Lines",
        environment={
            ENV_BUCKET: bucket.bucket_name,
            ENV_PREFIX: prefix,
            **({ENV_FAILURE_BUCKET: failure_bucket.bucket_name} if failure_bucket else {}),
        },
        timeout=Duration.minutes(2),
        memory_size=512,
    )
    grant_archive_write(function, scope, bucket, prefix, acknowledge_nag_findings=True)
    return function


def grant_archive_write(
    grantee: iam.IGrantable, scope: Construct, bucket: s3.IBucket, prefix: str, *, acknowledge_nag_findings: bool
) -> iam.Grant:
    """``s3:PutObject``/``s3:AbortMultipartUpload`` on the objects under ``prefix``, encrypting with the bucket's key.

    :param grantee: the archiver function, or a replay elsewhere.
    :param scope: the archive's construct (resolves the ARNs of acknowledged findings).
    :param bucket: the archive bucket.
    :param prefix: the archive's key prefix.
    :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for ``{prefix}*`` on ``grantee``.
    """
    objects = bucket.arn_for_objects(f"{prefix}*")
    grant = iam.Grant.add_to_principal(
        grantee=grantee, actions=list(_perms.S3_ARCHIVE_WRITE_ACTIONS), resource_arns=[objects]
    )
    if bucket.encryption_key is not None:
        bucket.encryption_key.grant_encrypt(grantee)
    if acknowledge_nag_findings:
        acknowledge_wildcard_resources(
            grantee, scope, [objects], f"the archiver writes one object per table and hour under {prefix}"
        )
    return grant
