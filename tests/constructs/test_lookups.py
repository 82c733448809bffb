"""The per-construct answers of ``cdk_ts._lookups``: the same as asking jsii, asked once per construct."""

from __future__ import annotations

from unittest import mock

from aws_cdk import App, Stack, Validations
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk_ts import _lookups


def _tree() -> tuple[Stack, Construct, iam.Role]:
    stack = Stack(App(), "LookupStack")
    inner = Construct(stack, "Inner")
    role = iam.Role(inner, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    return stack, inner, role


def test_answers_are_jsii_answers() -> None:
    stack, inner, role = _tree()
    assert _lookups.stack_of(role) is Stack.of(role) is stack
    assert _lookups.path_of(role) == role.node.path == "LookupStack/Inner/Role"
    assert _lookups.grant_principal_of(role) is role.grant_principal
    assert _lookups.grant_principal_of(object()) is None


def test_each_construct_is_asked_once() -> None:
    stack, inner, role = _tree()
    with mock.patch.object(_lookups.Stack, "of", wraps=Stack.of) as asked:
        for _ in range(3):
            assert _lookups.stack_of(role) is stack
            assert _lookups.stack_of(inner) is stack
    assert asked.call_count == 2


def test_acknowledgments_through_a_remembered_validations_all_land() -> None:
    _, _, role = _tree()
    with mock.patch.object(_lookups.Validations, "of", wraps=Validations.of) as asked:
        from cdk_ts._nag import acknowledge

        acknowledge(role, "AwsSolutions-IAM5[Resource::*]", "first")
        acknowledge(role, "AwsSolutions-IAM4[Policy::x]", "second")
    assert asked.call_count == 1
    recorded = [entry.data for entry in role.node.metadata if entry.type == "aws:cdk:acknowledged-rules"]
    assert len(recorded) == 2
    assert [next(iter(data.values())) for data in recorded] == ["first", "second"]
