"""The rotation's lock table: where each run takes the single-flight lock of its table prefix.

The runtime (``cdk_ts_runtime._rotation.lock``) owns the contract: the key, the expiry attribute and the
environment variable naming the table. This module only creates the table those names describe.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._defaults import is_unresolved, table_protection
from cdk_ts._nag import acknowledge
from cdk_ts._validation import Problems
from cdk_ts_runtime._rotation.lock import LOCK_EXPIRY_ATTRIBUTE, LOCK_KEY


def lock_table(
    scope: Construct, construct_id: str, *, encryption_key: kms.IKey | None, point_in_time_recovery: bool
) -> dynamodb.Table:
    """An on-demand table keyed by ``lock_id`` (String), expiring items by ``expires_at``, with the tables' protection.

    Its name is left to CloudFormation (``{stack}-{logical ID}-{random}``: letters, digits and hyphens
    only), so it can never parse as a period table, whose names always hold ``_`` before their label,
    and it never collides with another stack's lock table or stops a replacement.
    It holds only short-lived lock items, never data, so it is removed with the stack
    (``RemovalPolicy.DESTROY``): a retained lock table would be an orphan nothing reads again. Encryption
    and point-in-time recovery follow the period tables' (``encryption_key``, ``point_in_time_recovery``), so
    an account that requires a customer managed key or PITR on every table gets it here too.
    """
    table = dynamodb.Table(
        scope,
        construct_id,
        partition_key=dynamodb.Attribute(name=LOCK_KEY, type=dynamodb.AttributeType.STRING),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        time_to_live_attribute=LOCK_EXPIRY_ATTRIBUTE,
        removal_policy=RemovalPolicy.DESTROY,
        **table_protection(encryption_key, point_in_time_recovery),
    )
    for rule in ("NIST.800.53.R5-DynamoDBInBackupPlan", "HIPAA.Security-DynamoDBInBackupPlan"):
        acknowledge(
            table, rule,
            "the lock table holds only short-lived lock items that expire by themselves: there is nothing to back up",
        )
    return table


def grant_lock(table: dynamodb.ITable, grantee: iam.IGrantable) -> iam.Grant:
    """PutItem/DeleteItem/GetItem on the lock table only: what ``RunLock`` does (take, release, read the holder).

    The key of a customer managed ``encryption_key`` is granted by the caller, with the period tables'.
    """
    return iam.Grant.add_to_principal(
        grantee=grantee, actions=list(_perms.DYNAMODB_LOCK_ACTIONS), resource_arns=[table.table_arn]
    )


def check_reserved_concurrency(problems: Problems, reserved: int | None) -> None:
    """``reserved_concurrent_executions`` is None (the default) or a whole number of at least 1."""
    problems.check(
        reserved is None or is_unresolved(reserved) or (type(reserved) is int and reserved >= 1),
        f"reserved_concurrent_executions {reserved!r} must be a whole number >= 1, "
        "or None to reserve nothing (runs are single-flight through the lock table either way)",
    )


def acknowledge_unreserved_concurrency(function: lambda_.Function) -> None:
    """Acknowledge NIST 800-53 R5 / HIPAA ``LambdaConcurrency`` on a rotation function that reserves nothing."""
    for rule in ("NIST.800.53.R5-LambdaConcurrency", "HIPAA.Security-LambdaConcurrency"):
        acknowledge(
            function.node.default_child,  # the function's resource: acknowledge() takes a function's role
            rule,
            "reserving concurrency fails to deploy in accounts with a quota of 10 or 50 (Lambda keeps 100 "
            "unreserved); runs are single-flight through the lock table; reserved_concurrent_executions opts in",
        )
