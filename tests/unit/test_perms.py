"""IAM actions are spelled once, in cdk_ts/_perms.py: no construct module writes an action list inline."""

from __future__ import annotations

import ast
from pathlib import Path

from cdk_ts import _perms

PACKAGE = Path(_perms.__file__).resolve().parent


def inline_action_lists(source: str) -> list[int]:
    """Line numbers of ``actions=[...]`` / ``actions=(...)`` holding a string literal."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        literal = isinstance(node, ast.keyword) and node.arg == "actions"
        literal = literal and isinstance(node.value, ast.List | ast.Tuple)
        if literal and any(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts):
            lines.append(node.value.lineno)
    return lines


def test_no_construct_module_spells_an_action_list_inline():
    found = {
        path.name: inline_action_lists(path.read_text())
        for path in PACKAGE.rglob("*.py")
        if path.name != "_perms.py"
    }
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_inline_check_can_fail():
    assert inline_action_lists('iam.PolicyStatement(actions=["s3:GetObject"], resources=["*"])') == [1]
    assert inline_action_lists("iam.PolicyStatement(actions=list(_perms.X), resources=['*'])") == []


def test_action_lists_are_tuples_of_service_prefixed_actions():
    lists = {k: v for k, v in vars(_perms).items() if k.endswith("_ACTIONS")}
    assert lists
    for name, actions in lists.items():
        assert isinstance(actions, tuple) and actions, name
        assert all(":" in action for action in actions), name
    assert len(set(_perms.DYNAMODB_READ_WRITE_ACTIONS)) == len(_perms.DYNAMODB_READ_WRITE_ACTIONS)
    both = set(_perms.DYNAMODB_READ_ACTIONS) | set(_perms.DYNAMODB_WRITE_ACTIONS)
    assert set(_perms.DYNAMODB_READ_WRITE_ACTIONS) == both
