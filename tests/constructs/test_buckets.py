"""secure_bucket / access_logs_bucket: secure props enforced, defaults under the caller's props, weakening refused."""

from __future__ import annotations

import pytest
from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Match, Template

from cdk_ts import access_logs_bucket, secure_bucket
from tests.support.nag import new_app, new_stack, unacknowledged_findings
from tests.support.problems import raises_problems

BLOCK_ALL = {
    "BlockPublicAcls": True,
    "BlockPublicPolicy": True,
    "IgnorePublicAcls": True,
    "RestrictPublicBuckets": True,
}
SSE_S3 = {"ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}


def ssl_only_policy(template: Template) -> None:
    template.has_resource_properties("AWS::S3::BucketPolicy", {
        "PolicyDocument": {"Statement": Match.array_with([Match.object_like({
            "Effect": "Deny", "Action": "s3:*", "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        })])},
    })


def test_defaults_are_encrypted_private_ssl_only_versioned_owner_enforced_and_retained():
    stack = Stack(new_app(), "Test")
    secure_bucket(stack, "Bucket")
    template = Template.from_stack(stack)
    template.has_resource("AWS::S3::Bucket", {
        "Properties": {
            "BucketEncryption": SSE_S3,
            "PublicAccessBlockConfiguration": BLOCK_ALL,
            "VersioningConfiguration": {"Status": "Enabled"},
            "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
        },
        "DeletionPolicy": "Retain",
    })
    ssl_only_policy(template)


def test_any_bucket_prop_passes_through_and_the_secure_ones_stay():
    # given props secure_bucket has no parameter of its own for
    stack = Stack(new_app(), "Test")
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    secure_bucket(
        stack, "Bucket", bucket_name="readings-archive", event_bridge_enabled=True, encryption_key=key,
        bucket_key_enabled=True,
    )
    # then they reach the bucket, the key replaces SSE-S3, and public access is still blocked
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::S3::Bucket", {
        "BucketName": "readings-archive",
        "BucketEncryption": {"ServerSideEncryptionConfiguration": [Match.object_like({
            "BucketKeyEnabled": True,
            "ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": Match.any_value()},
        })]},
        "PublicAccessBlockConfiguration": BLOCK_ALL,
    })
    template.has_resource_properties("Custom::S3BucketNotifications", {
        "NotificationConfiguration": {"EventBridgeConfiguration": {}},
    })
    ssl_only_policy(template)


def test_the_callers_choices_replace_the_defaults():
    stack = Stack(new_app(), "Test")
    logs = access_logs_bucket(stack, "Logs")
    secure_bucket(
        stack, "Bucket", server_access_logs_bucket=logs, server_access_logs_prefix="archive/",
        lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(7))],
        removal_policy=RemovalPolicy.DESTROY, versioned=False, object_ownership=s3.ObjectOwnership.OBJECT_WRITER,
    )
    template = Template.from_stack(stack)
    template.has_resource("AWS::S3::Bucket", {
        "Properties": {
            "LoggingConfiguration": {"DestinationBucketName": Match.any_value(), "LogFilePrefix": "archive/"},
            "LifecycleConfiguration": {"Rules": [{"ExpirationInDays": 7, "Status": "Enabled"}]},
            "OwnershipControls": {"Rules": [{"ObjectOwnership": "ObjectWriter"}]},
            "VersioningConfiguration": Match.absent(),
            "BucketEncryption": SSE_S3,
            "PublicAccessBlockConfiguration": BLOCK_ALL,
        },
        "DeletionPolicy": "Delete",
    })


def test_none_means_the_default():
    stack = Stack(new_app(), "Test")
    secure_bucket(stack, "Bucket", versioned=None, encryption=None, block_public_access=None, enforce_ssl=None)
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::S3::Bucket", {
        "BucketEncryption": SSE_S3,
        "PublicAccessBlockConfiguration": BLOCK_ALL,
        "VersioningConfiguration": {"Status": "Enabled"},
    })
    ssl_only_policy(template)


@pytest.mark.parametrize(
    ("props", "refused"),
    [
        (
            {"block_public_access": s3.BlockPublicAccess.BLOCK_ACLS},
            "block_public_access with block_public_policy=None, restrict_public_buckets=None",
        ),
        (
            {"block_public_access": s3.BlockPublicAccess(block_public_policy=False)},
            "block_public_access with block_public_acls=None, block_public_policy=False, ignore_public_acls=None, "
            "restrict_public_buckets=None",
        ),
        ({"public_read_access": True}, "public_read_access=True"),
        ({"access_control": s3.BucketAccessControl.PUBLIC_READ}, "access_control=BucketAccessControl.PUBLIC_READ"),
        ({"enforce_ssl": False}, "enforce_ssl=False"),
        ({"encryption": s3.BucketEncryption.UNENCRYPTED}, "encryption=BucketEncryption.UNENCRYPTED"),
    ],
)
def test_a_prop_that_weakens_the_bucket_is_refused_with_its_name(props, refused):
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match=f"^Test/Bucket: {refused}.* is refused: .*leave it unset, or use s3.Bucket"):
        secure_bucket(stack, "Bucket", **props)
    assert stack.node.try_find_child("Bucket") is None


def test_the_strict_values_are_accepted():
    stack = Stack(new_app(), "Test")
    secure_bucket(
        stack, "Bucket", block_public_access=s3.BlockPublicAccess.BLOCK_ALL, enforce_ssl=True,
        public_read_access=False, encryption=s3.BucketEncryption.KMS_MANAGED,
        access_control=s3.BucketAccessControl.PRIVATE, object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
    )
    Template.from_stack(stack).has_resource_properties("AWS::S3::Bucket", {
        "BucketEncryption": {"ServerSideEncryptionConfiguration": [
            {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}}
        ]},
        "PublicAccessBlockConfiguration": BLOCK_ALL,
    })


def test_every_problem_is_reported_at_once_a_misspelt_keyword_with_the_closest_name():
    raises_problems(
        lambda: secure_bucket(Stack(new_app(), "Test"), "Bucket", versiond=False, enforce_ssl=False), "Test/Bucket",
        "unknown keyword argument 'versiond'; did you mean 'versioned'?", "enforce_ssl=False is refused",
    )


def test_a_secure_bucket_with_access_logs_passes_cdk_nag():
    app, stack = new_stack()
    secure_bucket(stack, "Bucket", bucket_name="readings-archive",
                  server_access_logs_bucket=access_logs_bucket(stack, "Logs"))
    assert unacknowledged_findings(app) == []
