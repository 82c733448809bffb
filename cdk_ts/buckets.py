"""Secure S3 buckets: the buckets cdk-ts constructs create, for the buckets you pass to them."""

from __future__ import annotations

from aws_cdk import Duration, FeatureFlags, RemovalPolicy
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk_ts._nag import acknowledge

__all__ = ["access_logs_bucket", "secure_bucket"]


def secure_bucket(
    scope: Construct,
    construct_id: str,
    *,
    server_access_logs_bucket: s3.IBucket | None = None,
    server_access_logs_prefix: str | None = None,
    lifecycle_rules: list[s3.LifecycleRule] | None = None,
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    versioned: bool = True,
    object_ownership: s3.ObjectOwnership = s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
) -> s3.Bucket:
    """An S3 bucket with SSE-S3, all public access blocked, SSL-only access, versioning and ownership enforced.

    The bucket cdk-ts constructs create for archives, failure records and rejected records; use it
    for a bucket you pass to them (``archive_bucket=``, ``bucket=``) so it passes cdk-nag the same way.

    :param scope: the parent construct.
    :param construct_id: the bucket's construct ID.
    :param server_access_logs_bucket: where the bucket logs its server access (see :func:`access_logs_bucket`).
        Default: None — no access logs (cdk-nag reports ``AwsSolutions-S1``).
    :param server_access_logs_prefix: key prefix of the access logs in ``server_access_logs_bucket``.
        Default: None — the bucket's root.
    :param lifecycle_rules: the bucket's lifecycle rules (add a ``noncurrent_version_expiration``: every
        overwrite keeps a version). Default: None — no rules.
    :param removal_policy: what happens to the bucket when it leaves the stack.
        Default: ``RemovalPolicy.RETAIN`` — the bucket and its objects are kept.
    :param versioned: keep object versions.
        Default: True.
    :param object_ownership: who owns uploaded objects.
        Default: ``ObjectOwnership.BUCKET_OWNER_ENFORCED`` — ACLs disabled.
    """
    return s3.Bucket(
        scope,
        construct_id,
        encryption=s3.BucketEncryption.S3_MANAGED,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        versioned=versioned,
        object_ownership=object_ownership,
        server_access_logs_bucket=server_access_logs_bucket,
        server_access_logs_prefix=server_access_logs_prefix,
        lifecycle_rules=lifecycle_rules,
        removal_policy=removal_policy,
    )


def access_logs_bucket(scope: Construct, construct_id: str) -> s3.Bucket:
    """A bucket that receives S3 server access logs: encrypted, private, SSL-only, logs expire after 365 days.

    With the ``@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy`` feature flag (set in cdk.json of
    new apps) log delivery is granted by bucket policy and ACLs stay disabled; without it CDK grants
    delivery with the LogDeliveryWrite ACL, which needs ObjectWriter ownership. cdk-nag's
    ``AwsSolutions-S1`` (no access logs of its own) is acknowledged on this bucket: logging it into
    itself would loop.

    :param scope: the parent construct.
    :param construct_id: the bucket's construct ID.
    """
    uses_policy = FeatureFlags.of(scope).is_enabled("@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy")
    bucket = secure_bucket(
        scope,
        construct_id,
        versioned=False,
        object_ownership=(
            s3.ObjectOwnership.BUCKET_OWNER_ENFORCED if uses_policy else s3.ObjectOwnership.OBJECT_WRITER
        ),
        lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
    )
    acknowledge(
        bucket, "AwsSolutions-S1", "this bucket is the server access log destination; logging it into itself would loop"
    )
    return bucket
