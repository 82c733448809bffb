"""Answers about a construct that never change once it exists, asked of jsii once per construct.

Each ``Stack.of(scope)``, ``scope.node.path`` or ``Validations.of(scope)`` is a round trip to the jsii node
process (one or two requests); one synth of the sample app asked ``Stack.of`` of one construct 20 times. A
construct's stack and path are fixed when it is created (constructs cannot be moved or renamed), a function's or
role's grant principal is fixed by its constructor, and ``Validations.of`` only wraps its scope (aws-cdk-lib's
``core/lib/validation/validations.ts``: ``static of(scope) { return new Validations(scope); }``), so the first
answer is kept, keyed weakly by the construct: nothing outlives the app it belongs to.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from aws_cdk import Stack, Validations
from constructs import Construct, IConstruct

_T = TypeVar("_T")
_STACKS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_PATHS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_VALIDATIONS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_PRINCIPALS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_MISSING = object()


def _remembered(answers: weakref.WeakKeyDictionary[Any, Any], scope: Any, ask: Callable[[Any], _T]) -> _T:
    answer = answers.get(scope, _MISSING)
    if answer is _MISSING:
        answer = answers[scope] = ask(scope)
    return answer


def stack_of(scope: IConstruct) -> Stack:
    """``Stack.of(scope)``, asked once per construct."""
    return _remembered(_STACKS, scope, Stack.of)


def path_of(scope: IConstruct) -> str:
    """``scope.node.path``, asked once per construct."""
    return _remembered(_PATHS, scope, lambda construct: construct.node.path)


def validations_of(scope: IConstruct) -> Validations:
    """``Validations.of(scope)``, asked once per construct."""
    return _remembered(_VALIDATIONS, scope, Validations.of)


def grant_principal_of(grantee: object) -> object | None:
    """``grantee.grant_principal`` (None when it has none), asked once per construct."""
    if not isinstance(grantee, Construct):
        return getattr(grantee, "grant_principal", None)
    return _remembered(_PRINCIPALS, grantee, lambda construct: getattr(construct, "grant_principal", None))
