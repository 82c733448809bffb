"""Prop validation that reports every problem of one construct at once, prefixed with its construct path."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Iterable, Sequence
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from cdk_ts._defaults import is_unresolved
from cdk_ts._lookups import path_of
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._keywords import unknown_keyword

_T = TypeVar("_T")
_P = ParamSpec("_P")
#: Unknown keywords of the constructor running now, by construct path, until its first ``Problems`` takes them.
_UNKNOWN_KEYWORDS: ContextVar[dict[str, list[str]]] = ContextVar("cdk_ts_unknown_keywords")


def construct_path(scope: Construct, construct_id: str) -> str:
    """The path a construct ``construct_id`` under ``scope`` has (or will have once it is created)."""
    parent = path_of(scope)
    return f"{parent}/{construct_id}" if parent else construct_id


def describe(value: object) -> str:
    """How an error names ``value``: its construct path, or its repr when it is not a construct."""
    return path_of(value) if isinstance(value, Construct) else repr(value)


class ConstructValidationError(ValidationError):
    """Props a construct refuses at synth: every problem at once, prefixed with the construct's path.

    A :class:`cdk_ts_runtime.CdkTsError` and a ``ValueError``. The message lists the problems under the
    path; :attr:`construct_path` and :attr:`problems` give the same for code (a test, a tool) that reads them.

    :param construct_path: the path of the construct whose props are refused, e.g. ``"App/Stack/Readings"``.
    :param problems: one message per problem, each naming the value and the way out.
    """

    def __init__(self, construct_path: str, problems: Sequence[str]) -> None:
        """Refuse the props of ``construct_path`` for ``problems`` (at least one)."""
        self.construct_path = construct_path
        self.problems: tuple[str, ...] = tuple(problems)
        if len(self.problems) == 1:
            message = f"{construct_path}: {self.problems[0]}"
        else:
            listed = "\n".join(f"  - {m}" for m in self.problems)
            message = f"{construct_path}: {len(self.problems)} problems:\n{listed}"
        super().__init__(message)

    def __reduce__(self) -> tuple:
        return type(self), (self.construct_path, self.problems)  # pickles (e.g. across processes) as it was made


class Problems:
    """Collects prop problems of one construct and raises them together as one :class:`ConstructValidationError`.

    Usage: ``problems = Problems(scope, construct_id)``; ``problems.check(ok, "message")`` for each
    rule; ``problems.raise_if_any()`` once every rule ran. Each message names the value and the fix.
    """

    def __init__(self, scope: Construct, construct_id: str | None = None) -> None:
        """Collect the problems of the construct ``construct_id`` under ``scope``.

        :param scope: the construct itself, or its parent when ``construct_id`` is given.
        :param construct_id: the ID of a construct not created yet.
            Default: None — ``scope`` is the construct whose props are checked.
        """
        self.path = path_of(scope) if construct_id is None else construct_path(scope, construct_id)
        # a misspelt keyword the constructor's decorator held back joins the construct's other problems
        self.messages: list[str] = list(_UNKNOWN_KEYWORDS.get({}).pop(self.path, ()))

    def check(self, ok: bool, message: str | Callable[[], str]) -> bool:
        """Record ``message`` unless ``ok``; returns ``ok`` so dependent checks can be skipped.

        ``message`` may be a callable, called only when the check fails: for a message that needs a jsii round trip
        (``Duration.to_human_string()``), which a passing check should not pay.
        """
        if not ok:
            self.messages.append(message() if callable(message) else message)
        return ok

    def add(self, message: str) -> None:
        """Record ``message`` unconditionally."""
        self.messages.append(message)

    def collect(self, build: Callable[[], _T]) -> _T | None:
        """``build()``, or None with its ``ValueError`` recorded, so a validating constructor joins the list."""
        try:
            return build()
        except ValueError as error:
            self.messages.append(str(error))
            return None

    def raise_if_any(self) -> None:
        """Raise one :class:`ConstructValidationError` listing every problem, prefixed with the construct path."""
        if self.messages:
            raise ConstructValidationError(self.path, self.messages)


def keyword_names(function: Callable) -> list[str]:
    """The keyword-only parameters of ``function``, by name (what a misspelt keyword is compared with)."""
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind is p.KEYWORD_ONLY]


def refuses_unknown_keywords(function: Callable[_P, _T]) -> Callable[_P, _T]:
    """Refuse a keyword ``function`` (a constructor or importer taking ``scope, construct_id``) does not take.

    Python's own ``TypeError`` names neither the construct nor the keyword meant (Python 3.11-3.13); this
    reports ``{path}: unknown keyword argument 'x'; did you mean 'y'?`` in the construct's
    :class:`ConstructValidationError`, with its other problems when its :class:`Problems` runs before anything is
    created. The signature stays the function's own for IDEs, mypy and ``inspect``.
    """
    signature = inspect.signature(function)
    valid = keyword_names(function)
    scope_name, id_name = list(signature.parameters)[1:3]  # after self or cls

    @functools.wraps(function)
    def checked(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        unknown = [name for name in kwargs if name not in signature.parameters]
        if not unknown:
            return function(*args, **kwargs)
        known = {name: value for name, value in kwargs.items() if name in signature.parameters}
        bound = signature.bind_partial(*args, **known).arguments
        path = construct_path(bound[scope_name], bound[id_name])
        messages = [unknown_keyword(name, valid) for name in unknown]
        pending = _UNKNOWN_KEYWORDS.set({**_UNKNOWN_KEYWORDS.get({}), path: messages})
        try:
            function(*args, **known)  # type: ignore[call-arg]  # raises the keywords with its other problems
        finally:
            _UNKNOWN_KEYWORDS.reset(pending)
        raise ConstructValidationError(path, messages)  # a constructor that checks nothing before it builds

    return checked


def check_keywords(
    problems: Problems, given: Iterable[str], accepted: Collection[str], *, also_valid: Iterable[str] = ()
) -> None:
    """Record each name of ``given`` that is not ``accepted``, with the closest valid keyword as the way out.

    A ``**options`` parameter takes any keyword at run time, so without this a misspelt keyword would be
    ignored silently (or fail far from the call); this reports it with the construct's other problems, in
    the construct's ``ValueError``.

    :param problems: where the unknown keywords are recorded.
    :param given: the keywords ``**options`` received.
    :param accepted: the keywords ``**options`` takes.
    :param also_valid: the function's other keywords, offered as suggestions too (a misspelt named
        parameter also lands in ``**options``). Default: none.
    """
    valid = [*accepted, *also_valid]
    for name in given:
        if name not in accepted:
            problems.add(unknown_keyword(name, valid))


#: What IAM reads as a wildcard in a resource: ``*`` any run of characters, ``?`` exactly one (IAM user guide,
#: "IAM JSON policy elements: Resource").
IAM_WILDCARDS = ("*", "?")


def check_iam_text(problems: Problems, label: str, text: object) -> bool:
    """Record ``text`` (a prefix or a name that becomes part of an IAM resource) when it holds ``*`` or ``?``.

    A grant on ``bucket/{prefix}*`` with ``prefix="logs*"`` or ``"da?a/"`` would silently cover other prefixes
    too: least privilege must not widen without a word. Deploy-time tokens are skipped.
    """
    if not isinstance(text, str) or is_unresolved(text):
        return True
    wildcards = [c for c in IAM_WILDCARDS if c in text]
    return problems.check(
        not wildcards,
        f"{label} {text!r} holds {' and '.join(map(repr, wildcards))}, which IAM reads as a wildcard in the "
        "policies granted on it, widening them to other names: remove it",
    )


def attribute_problem(name: str, value: object) -> str | None:
    """Why ``value``, given for the ``dynamodb.Attribute`` parameter ``name``, is not one; None when it is.

    A plain string names an attribute but not its key type (String, Number or Binary), which the tables and
    the runtime need, so it is refused with the ``Attribute`` to write instead, never guessed.
    """
    if isinstance(value, dynamodb.Attribute):
        return None
    shown = repr(value) if isinstance(value, str) else "'name'"
    return (
        f"{name} {value!r} is a {type(value).__name__}, not a dynamodb.Attribute (a name and a key type): pass "
        f"{name}=dynamodb.Attribute(name={shown}, type=dynamodb.AttributeType.STRING), or NUMBER or BINARY"
    )


def require_access(construct: Construct, function: Construct, *, read: bool, write: bool) -> None:
    """Refuse a ``bind`` that would grant nothing, naming the construct and the function."""
    if not (read or write):
        raise ValidationError(
            f"{path_of(construct)}.bind({path_of(function)}): read=False and write=False grant nothing; "
            "pass read=True, write=True or both"
        )
