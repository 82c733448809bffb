"""Secure defaults shared by every cdk-ts construct, in one place so they cannot drift apart."""

from __future__ import annotations

import math
import re
from typing import Any

from aws_cdk import Duration, RemovalPolicy, Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk_ts._assets import lambda_code
from cdk_ts._lookups import stack_of
from cdk_ts._nag import acknowledge

#: The oldest Python the runtime package runs on (it uses ``datetime.UTC`` and ``StrEnum``).
MIN_RUNTIME_MINOR = 11


def _python_runtimes() -> list[tuple[int, str]]:
    versions = []
    for attr in dir(lambda_.Runtime):
        match = re.fullmatch(r"PYTHON_3_(\d+)", attr)
        if match:
            versions.append((int(match.group(1)), attr))
    return sorted(versions)


def supported_python_runtimes() -> list[lambda_.Runtime]:
    """Every Lambda Python runtime, known to this aws-cdk-lib, that ``cdk_ts_runtime`` runs on (3.11+)."""
    return [getattr(lambda_.Runtime, attr) for minor, attr in _python_runtimes() if minor >= MIN_RUNTIME_MINOR]


#: The Lambda runtime every cdk-ts function runs on, chosen on purpose rather than "the newest this
#: aws-cdk-lib knows" (which changed under users with each aws-cdk-lib release): the newest Python Lambda
#: offers, which cdk-nag's AwsSolutions-L1 asks for. The docs' examples use it for users' functions, so
#: their code and the runtime layer run on one Python. Exported as ``cdk_ts.LAMBDA_RUNTIME``.
LAMBDA_RUNTIME = lambda_.Runtime.PYTHON_3_14


#: How a cdk-ts function runs unless its construct says otherwise (``runtime_function`` merges these under its props).
FUNCTION_DEFAULTS = {
    "architecture": lambda_.Architecture.ARM_64,
    "logging_format": lambda_.LoggingFormat.JSON,
    "timeout": Duration.minutes(1),
    "memory_size": 256,
}


def runtime_function(
    scope: Construct,
    construct_id: str,
    *,
    description: str,
    log_retention: logs.RetentionDays = logs.RetentionDays.THREE_MONTHS,
    **function_props: Any,
) -> lambda_.Function:
    """A Python function running ``cdk_ts_runtime.handlers.<module>.handler`` with an explicit, retained log group.

    The log group is created here (not implicitly by Lambda) so its retention is bounded and it
    is removed with the stack's other non-data resources. The role may write to that log group
    only: no AWS managed policy, so every permission the function has is one a construct granted.
    ``function_props`` (``handler``, ``environment``, ``timeout``...) are ``lambda_.Function`` props,
    merged over :data:`FUNCTION_DEFAULTS`; the log group and the role are this function's, the code is the
    shared runtime asset unless ``code`` says otherwise, and the runtime is :data:`LAMBDA_RUNTIME` unless
    ``runtime`` says otherwise (a layer built for another Python).
    """
    log_group = logs.LogGroup(
        scope,
        f"{construct_id}Logs",
        retention=log_retention,
        removal_policy=RemovalPolicy.DESTROY,
    )
    role = iam.Role(
        scope,
        f"{construct_id}Role",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=f"Execution role of {description[:900]}",
    )
    log_group.grant_write(role)
    return lambda_.Function(
        scope,
        construct_id,
        runtime=function_props.pop("runtime", LAMBDA_RUNTIME),
        code=function_props.pop("code", None) or lambda_code(),
        description=description,
        log_group=log_group,
        role=role,
        **{**FUNCTION_DEFAULTS, **function_props},
    )


def dead_letter_queue(scope: Construct, construct_id: str, purpose: str, *, fifo_name: str | None = None) -> sqs.Queue:
    """An SQS-encrypted, SSL-only queue that keeps messages 14 days: the dead-letter queue of ``purpose``.

    ``fifo_name``: a FIFO queue of this name, as a FIFO queue's dead-letter queue must be (Amazon SQS
    developer guide, "Using dead-letter queues in Amazon SQS").
    """
    queue = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=Duration.days(14),
        **({"fifo": True, "queue_name": fifo_name} if fifo_name else {}),
    )
    acknowledge(queue, "AwsSolutions-SQS3", f"this queue is the dead-letter queue of {purpose}")
    return queue


def table_protection(encryption_key: kms.IKey | None, point_in_time_recovery: bool) -> dict:
    """Table props for encryption (AWS owned key, or ``encryption_key``) and point-in-time recovery."""
    return {
        "encryption": dynamodb.TableEncryption.CUSTOMER_MANAGED if encryption_key else dynamodb.TableEncryption.DEFAULT,
        "encryption_key": encryption_key,
        "point_in_time_recovery_specification": dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=point_in_time_recovery
        ),
    }


def is_unresolved(value: object) -> bool:
    """True for a deploy-time token, which synth-time validation must skip.

    NaN and the infinities are never tokens (a number token is a finite encoded float), and asking jsii about
    one would stop its kernel (JSON has no NaN), so they are answered here and left to the caller's checks.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return isinstance(value, str | int | float) and Token.is_unresolved(value)


def table_arn_pattern(scope: Construct, name_pattern: str) -> str:
    """ARN of the DynamoDB table(s) whose name matches ``name_pattern`` (may end in ``*``) in this stack's env."""
    return stack_of(scope).format_arn(service="dynamodb", resource="table", resource_name=name_pattern)
