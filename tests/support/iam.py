"""Grantees for grant tests, and reading policy statements out of a synthesized template."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template
from constructs import Construct


def policy_statements(
    template: Template, resource_type: str = "AWS::IAM::Policy", props: dict | None = None
) -> list[dict]:
    """Every statement of every policy resource of ``resource_type`` in ``template``, in template order.

    ``resource_type`` is any resource with ``Properties.PolicyDocument``: ``AWS::IAM::Policy`` (the grants on
    roles) by default, ``AWS::S3::BucketPolicy`` for what a bucket lets others do. ``props`` keeps only the
    resources that match it (``Template.find_resources``).
    """
    return [
        statement
        for policy in template.find_resources(resource_type, props).values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def actions_of(statement: dict) -> list[str]:
    """A statement's ``Action`` as a list (a policy may give a single action as a string)."""
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def role_actions(template: Template, stack: Stack, role: iam.IRole) -> list[str]:
    """Every action of the policies attached to ``role`` (a role of ``stack``), in template order."""
    attached = {"Properties": {"Roles": [stack.resolve(role.role_name)]}}
    return [action for statement in policy_statements(template, props=attached) for action in actions_of(statement)]


def lambda_role(scope: Construct, construct_id: str) -> iam.Role:
    """A role Lambda assumes, and nothing more: the grantee of a ``grant_*`` test."""
    return iam.Role(scope, construct_id, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
