"""Reading policy statements out of a synthesized template."""

from __future__ import annotations

from aws_cdk.assertions import Template


def policy_statements(template: Template, resource_type: str = "AWS::IAM::Policy") -> list[dict]:
    """Every statement of every policy resource of ``resource_type`` in ``template``, in template order.

    ``resource_type`` is any resource with ``Properties.PolicyDocument``: ``AWS::IAM::Policy`` (the grants on
    roles) by default, ``AWS::S3::BucketPolicy`` for what a bucket lets others do.
    """
    return [
        statement
        for policy in template.find_resources(resource_type).values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
