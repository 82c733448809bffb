"""Narrow cdk-nag (v3) acknowledgements: one finding, one construct, one reason."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aws_cdk import Acknowledgment
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk_ts._lookups import grant_principal_of, stack_of, validations_of


def finding_text(scope: Construct, value: Any) -> str:
    """Render a (possibly tokenised) IAM resource the way cdk-nag prints it in an IAM5 finding id."""
    return _render(stack_of(scope).resolve(value))


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "Fn::Join" in value:
            separator, parts = value["Fn::Join"]
            return separator.join(_render(part) for part in parts)
        if "Ref" in value:
            return f"<{value['Ref']}>"
        if "Fn::GetAtt" in value:
            return f"<{'.'.join(value['Fn::GetAtt'])}>"
    return str(value)


def principal_construct(grantee: object) -> Construct | None:
    """The construct whose policy receives a grant: a function's role, a role, or the grantee itself."""
    principal = grant_principal_of(grantee)
    if isinstance(principal, Construct):
        return principal
    return grantee if isinstance(grantee, Construct) else None


def acknowledge_wildcard_resources(
    target: object, scope: Construct, resources: Iterable[Any], reason: str
) -> None:
    """Acknowledge ``AwsSolutions-IAM5[Resource::<arn>]`` for each resource ARN on the grantee's policy."""
    construct = principal_construct(target)
    if construct is None:
        return
    validations_of(construct).acknowledge(*[
        Acknowledgment(id=f"AwsSolutions-IAM5[Resource::{finding_text(scope, r)}]", reason=reason) for r in resources
    ])


def acknowledge(target: object, rule_id: str, reason: str) -> None:
    """Acknowledge one finding id (e.g. ``AwsSolutions-IAM5[Resource::*]``) on the grantee's construct."""
    construct = principal_construct(target)
    if construct is not None:
        validations_of(construct).acknowledge(Acknowledgment(id=rule_id, reason=reason))


def grant_unscoped(grantee: object, actions: Iterable[str], *, acknowledge_finding: bool, reason: str) -> None:
    """Grant ``actions`` on ``*`` (they have no resource-level permissions); acknowledge IAM5 only when asked."""
    iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=["*"])
    if acknowledge_finding:
        acknowledge(grantee, "AwsSolutions-IAM5[Resource::*]", reason)
