"""Secure S3 buckets: the buckets cdk-ts constructs create, for the buckets you pass to them."""

from __future__ import annotations

from typing import Any, cast

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._nag import acknowledge
from cdk_ts._validation import Problems, check_iam_text, check_keywords, keyword_names
from cdk_ts_runtime._errors import WrongTypeError

__all__ = ["access_logs_bucket", "secure_bucket", "stack_access_logs_bucket"]

#: What every secure bucket has, whatever the caller passes (a weaker value is refused, see ``_weakened``).
_ENFORCED: dict[str, Any] = {"block_public_access": s3.BlockPublicAccess.BLOCK_ALL, "enforce_ssl": True}
#: Defaults a caller's own value replaces (encryption too: SSE-S3 unless the caller chooses encryption or a key).
_DEFAULTS: dict[str, Any] = {
    "versioned": True,
    "object_ownership": s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    "removal_policy": RemovalPolicy.RETAIN,
}
_PUBLIC_ACLS = (
    s3.BucketAccessControl.PUBLIC_READ,
    s3.BucketAccessControl.PUBLIC_READ_WRITE,
    s3.BucketAccessControl.AUTHENTICATED_READ,
)
_BUCKET_KEYWORDS = keyword_names(s3.Bucket.__init__)


def secure_bucket(scope: Construct, construct_id: str, **bucket_props: Any) -> s3.Bucket:
    """An S3 bucket that blocks all public access and SSL-less requests; SSE-S3, versioned, ACLs disabled, retained.

    The bucket cdk-ts constructs create for archives, failure records and rejected records; use it
    for a bucket you pass to them (``archive_bucket=``, ``bucket=``) so it passes cdk-nag the same way.

    Takes every keyword of ``s3.Bucket`` (``bucket_name``, ``event_bridge_enabled``, ``encryption_key``,
    ``lifecycle_rules``, ``server_access_logs_bucket``...). Your values are merged over these defaults:
    ``encryption=BucketEncryption.S3_MANAGED`` (unless you pass ``encryption`` or ``encryption_key``),
    ``versioned=True``, ``object_ownership=ObjectOwnership.BUCKET_OWNER_ENFORCED`` (ACLs disabled),
    ``removal_policy=RemovalPolicy.RETAIN`` (the bucket and its objects are kept). Always set, and
    refused when you ask for less: ``block_public_access=BlockPublicAccess.BLOCK_ALL`` and
    ``enforce_ssl=True``; ``public_read_access=True``, ``encryption=BucketEncryption.UNENCRYPTED`` and
    a public canned ACL (``access_control``) are refused too. A value of None means "the default".

    :param scope: the parent construct.
    :param construct_id: the bucket's construct ID.
    :param bucket_props: ``s3.Bucket`` props. Add a ``noncurrent_version_expiration`` lifecycle rule to a
        versioned bucket (every overwrite keeps a version), and ``server_access_logs_bucket`` (see
        :func:`access_logs_bucket`) unless you acknowledge cdk-nag's ``AwsSolutions-S1``.
    :raises ValueError: naming the bucket's path and every problem at once, a keyword ``s3.Bucket`` does
        not take (with the closest one) or a prop that would weaken the bucket.
    """
    problems = Problems(scope, construct_id)
    check_keywords(problems, bucket_props, _BUCKET_KEYWORDS)
    chosen = {name: value for name, value in bucket_props.items() if value is not None}
    for message in _weakened(chosen):
        problems.add(message)
    check_iam_text(problems, "server_access_logs_prefix", chosen.get("server_access_logs_prefix"))
    problems.raise_if_any()
    encryption = {} if {"encryption", "encryption_key"} & chosen.keys() else {
        "encryption": s3.BucketEncryption.S3_MANAGED
    }
    logs = chosen.get("server_access_logs_bucket")
    owned_logs = isinstance(logs, s3.Bucket)
    if owned_logs and "target_object_key_format" not in chosen:
        # Given a Bucket, CDK grants log delivery by ACL unless an app-wide feature flag says otherwise; given an
        # imported reference it grants nothing but warns "Unable to add necessary logging permissions to imported
        # target bucket" at every synth (aws-cdk-lib aws-s3/lib/bucket.ts, @aws-cdk/aws-s3:accessLogsPolicyNotAdded).
        # So the logging configuration goes on the CfnBucket and the policy below grants delivery, under any flag.
        prefix = chosen.pop("server_access_logs_prefix", None)
        del chosen["server_access_logs_bucket"]
        bucket = s3.Bucket(scope, construct_id, **{**_DEFAULTS, **encryption, **chosen, **_ENFORCED})
        cast(s3.CfnBucket, bucket.node.default_child).logging_configuration = (
            s3.CfnBucket.LoggingConfigurationProperty(destination_bucket_name=logs.bucket_name, log_file_prefix=prefix)
        )
        allow_log_delivery(logs, bucket, prefix)
        return bucket
    if owned_logs:  # a key format CDK renders itself: through a reference, which warns as above
        chosen["server_access_logs_bucket"] = _reference(logs)
    bucket = s3.Bucket(scope, construct_id, **{**_DEFAULTS, **encryption, **chosen, **_ENFORCED})
    if owned_logs:
        allow_log_delivery(logs, bucket, chosen.get("server_access_logs_prefix"))
    return bucket


def allow_log_delivery(logs: s3.Bucket, source: s3.IBucket, prefix: str | None) -> None:
    """Let S3 server access logging write ``source``'s logs into ``logs`` under ``prefix``, by bucket policy.

    The statement AWS documents (principal ``logging.s3.amazonaws.com``, ``s3:PutObject``, conditions on the
    source bucket and account), never the ``LogDeliveryWrite`` ACL, so ``logs`` keeps ACLs disabled.
    """
    logs.add_to_resource_policy(iam.PolicyStatement(
        principals=[iam.ServicePrincipal("logging.s3.amazonaws.com")],
        actions=list(_perms.S3_LOG_DELIVERY_ACTIONS),
        resources=[logs.arn_for_objects(f"{prefix or ''}*")],
        conditions={
            "ArnLike": {"aws:SourceArn": source.bucket_arn},
            "StringEquals": {"aws:SourceAccount": stack_of(source).account},
        },
    ))


def _reference(logs: s3.Bucket) -> s3.IBucket:
    """One imported reference per log bucket: CDK adds no ACL or policy for a bucket it did not create."""
    existing = logs.node.try_find_child("AsLogDestination")
    if existing is not None:
        return existing  # type: ignore[return-value]
    return s3.Bucket.from_bucket_attributes(
        logs, "AsLogDestination", bucket_name=logs.bucket_name, bucket_arn=logs.bucket_arn
    )


def _weakened(props: dict[str, Any]) -> list[str]:
    """Why each of ``props`` would make the bucket less secure than :func:`secure_bucket` promises."""
    public = "a secure bucket blocks all public access"
    blocked, acl = props.get("block_public_access"), props.get("access_control")
    unblocked = _unblocked(blocked) if blocked is not None else []
    refused = [
        (bool(unblocked), f"block_public_access with {', '.join(f'{f}={v}' for f, v in unblocked)}", public),
        (props.get("public_read_access") is True, "public_read_access=True", public),
        (acl in _PUBLIC_ACLS, f"access_control={acl}", public),
        (props.get("enforce_ssl") is False, "enforce_ssl=False", "a secure bucket refuses requests without SSL"),
        (
            props.get("encryption") == s3.BucketEncryption.UNENCRYPTED, "encryption=BucketEncryption.UNENCRYPTED",
            "a secure bucket is encrypted at rest (SSE-S3, or KMS with encryption_key)",
        ),
    ]
    return [f"{what} is refused: {why}; leave it unset, or use s3.Bucket" for weak, what, why in refused if weak]


_BLOCK_FLAGS = ("block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets")


def _unblocked(setting: s3.BlockPublicAccess) -> list[tuple[str, object]]:
    """The flags of ``setting`` that are not on, with their values (BLOCK_ALL has every one on)."""
    return [(flag, getattr(setting, flag)) for flag in _BLOCK_FLAGS if not getattr(setting, flag)]


def access_logs_bucket(scope: Construct, construct_id: str) -> s3.Bucket:
    """A bucket that receives S3 server access logs: encrypted, private, SSL-only, logs expire after 365 days.

    ACLs stay disabled (``BUCKET_OWNER_ENFORCED``) whatever the app's feature flags: :func:`secure_bucket`
    grants each bucket logging into it by bucket policy. cdk-nag's ``AwsSolutions-S1`` (no access logs of
    its own) is acknowledged on this bucket: logging it into itself would loop. cdk-ts constructs share
    one per stack, :func:`stack_access_logs_bucket`.

    :param scope: the parent construct.
    :param construct_id: the bucket's construct ID.
    """
    bucket = secure_bucket(
        scope,
        construct_id,
        versioned=False,
        lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
    )
    acknowledge(
        bucket, "AwsSolutions-S1", "this bucket is the server access log destination; logging it into itself would loop"
    )
    return bucket


_STACK_LOGS_ID = "CdkTsAccessLogs"


def stack_access_logs_bucket(scope: Construct) -> s3.Bucket:
    """The stack's one access-log bucket (construct ID ``CdkTsAccessLogs``), created on first request.

    Every cdk-ts construct in the stack logs its buckets' server access here unless it is given
    ``access_logs_bucket=``; each source writes under its own prefix.

    :param scope: any construct in the stack.
    :raises WrongTypeError: (a ``TypeError``) when the stack has another kind of construct with that ID.
    """
    stack = stack_of(scope)
    existing = stack.node.try_find_child(_STACK_LOGS_ID)
    if existing is None:
        return access_logs_bucket(stack, _STACK_LOGS_ID)
    if not isinstance(existing, s3.Bucket):
        raise WrongTypeError(f"{path_of(stack)}/{_STACK_LOGS_ID} exists and is not an S3 bucket; use another ID")
    return existing
