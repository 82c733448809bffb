"""Every error cdk-ts raises on purpose is a CdkTsError: a walk over every ``raise`` of both packages.

``cdk_ts_runtime._errors`` promises that ``except CdkTsError`` catches every deliberate error of cdk-ts. This
test reads each ``raise`` statement of ``cdk_ts`` and ``cdk_ts_runtime`` (``ast``) and finds what it raises in
the module's namespace (importing the module): a class must be a ``CdkTsError``; a function that builds the
error must say which class it returns (its return annotation; ``None`` in an optional one is left out). A
raised local variable is judged by what the function assigns to it: ``error = ValueError(...); raise error``
raises a ValueError. Re-raises pass on what something else raised and are not judged: ``raise``, and
``raise error`` of a caught error (``except X as error``) or of a parameter. The raises that are not cdk-ts
errors by design are listed below, each with its reason; an exemption no raise uses any more fails too, so
the list cannot go stale.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import cdk_ts
import cdk_ts_runtime
from cdk_ts_runtime import CdkTsError

PACKAGES = (cdk_ts, cdk_ts_runtime)

#: Exception classes other code's protocol requires, by ``module.qualname``: raising a CdkTsError there
#: would break the protocol.
EXEMPT_CLASSES = {
    "argparse.ArgumentTypeError": "argparse's protocol: a ``type=`` function refuses a flag's text with it, and "
    "argparse prints it as a usage error naming the flag (exit status 2)",
    "pytest.UsageError": "pytest's protocol: a plugin reports a misused option or marker with it, "
    "and pytest prints it as a usage error instead of a traceback",
    "cdk_ts.testing._rules.RuleError": "the rules proxy's model of a DynamoDB refusal, raised inside the proxy "
    "server and answered as DynamoDB's HTTP 400 body; it never reaches a caller (the SDK raises its own error)",
}

#: Built-in raises a protocol requires in one kind of function, by (class name, function name).
EXEMPT_IN_FUNCTIONS = {
    ("AttributeError", "__getattr__"): "a module's ``__getattr__`` must raise AttributeError for a name it does not "
    "have (PEP 562): ``hasattr``, ``from x import y`` and ``getattr(x, y, default)`` rely on it",
    ("AttributeError", "renamed_attribute"): "the body of the modules' ``__getattr__`` for renamed names "
    "(cdk_ts_runtime._deprecations.renamed_attribute): the same protocol",
}

#: Marks a line no run reaches: the loop before it always returns or raises; type checkers need an ending.
UNREACHABLE = ("AssertionError", "unreachable")
#: A command line's exit status: ``raise SystemExit(main())`` under ``if __name__ == "__main__":``.
MAIN_EXIT = "SystemExit"


@dataclass(frozen=True)
class RaiseSite:
    """One ``raise`` statement: where it is and what it names."""

    path: Path
    module: str
    function: str  # the enclosing function's name ("" at module level)
    line: int
    node: ast.Raise
    under_main: bool  # inside ``if __name__ == "__main__":`` at module level
    local_names: frozenset[str]  # names the enclosing functions bind (parameters, assignments, imports)
    local_imports: tuple[tuple[str, str], ...] = ()  # (name, "module" or "module:attribute") imported in them
    assigned: tuple[tuple[str, ast.expr], ...] = ()  # (name, value) of each ``name = value`` in them

    def __str__(self) -> str:
        where = self.function or "module level"
        return f"{self.path.name}:{self.line} in {self.module} ({where}): {ast.unparse(self.node)}"


def _module_name(package, path: Path) -> str:
    root = Path(package.__file__).parent
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package.__name__, *parts])


def _local_imports(function: ast.AST) -> tuple[tuple[str, str], ...]:
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Import):
            # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to ``a.b``
            found += [(a.asname, a.name) if a.asname else ((top := a.name.split(".")[0]), top) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found += [(a.asname or a.name, f"{node.module}:{a.name}") for a in node.names]
    return tuple(found)


def _bound_names(function: ast.AST) -> frozenset[str]:
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return frozenset(names)


def _assignments(function: ast.AST) -> tuple[tuple[str, ast.expr], ...]:
    """``(name, value)`` of each ``name = value``, ``name: T = value`` and ``(name := value)`` in ``function``'s own
    body (not in functions or classes nested in it). Unpacking (``a, b = ...``) binds values it computes."""
    found = []
    nodes = list(ast.iter_child_nodes(function))
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Assign):
            found += [(target.id, node.value) for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and isinstance(node.target, ast.Name) and node.value:
            found.append((node.target.id, node.value))
        nodes.extend(ast.iter_child_nodes(node))
    return tuple(found)


def _is_main_guard(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"'


def raise_sites_in(tree: ast.Module, path: Path, module: str) -> Iterator[RaiseSite]:
    """Every ``raise`` in ``tree``, with its enclosing function and the names the enclosing functions bind."""

    def visit(node, function, bound, imports, assigned, under_main) -> Iterator[RaiseSite]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Raise):
                name = getattr(function, "name", "")
                yield RaiseSite(path, module, name, child.lineno, child, under_main, bound, imports, assigned)
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner_bound, inner_imports = bound | _bound_names(child), imports + _local_imports(child)
                inner_assigned = assigned + _assignments(child)
                yield from visit(child, child, inner_bound, inner_imports, inner_assigned, under_main)
            else:
                main = under_main or (function is None and _is_main_guard(child))
                yield from visit(child, function, bound, imports, assigned, main)

    yield from visit(tree, None, frozenset(), (), (), False)


def all_raise_sites() -> list[RaiseSite]:
    """Every ``raise`` of ``cdk_ts`` and ``cdk_ts_runtime``."""
    sites = []
    for package in PACKAGES:
        for path in sorted(Path(package.__file__).parent.rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            sites.extend(raise_sites_in(tree, path, _module_name(package, path)))
    return sites


@functools.cache
def _namespace(module: str) -> dict[str, object]:
    return vars(importlib.import_module(module))


def _imported(target: str) -> object:
    module, _, attribute = target.partition(":")
    imported = importlib.import_module(module)
    return getattr(imported, attribute) if attribute else imported


#: What ``_resolve`` answers for a local variable: its value is the function's own (judged by its assignments).
_LOCAL = object()


def _resolve(site: RaiseSite, expression: ast.expr, namespace: dict[str, object]) -> object:
    """What a dotted name means where it is raised: an object, ``_LOCAL`` for a local variable, ``None`` for a
    value the function computes (``errors[0]``, ``self.error``)."""
    dotted = ast.unparse(expression).split(".")
    if not all(part.isidentifier() for part in dotted):
        return None  # e.g. ``raise errors[0]``: a value, computed
    head = dotted[0]
    imports = dict(site.local_imports)
    if head in imports:
        value = _imported(imports[head])  # imported inside the function (e.g. to break an import cycle)
    elif head in site.local_names:
        return _LOCAL if len(dotted) == 1 else None  # ``error.cause`` of a local: a value, computed
    elif head in namespace:
        value = namespace[head]
    elif hasattr(builtins, head):
        value = getattr(builtins, head)
    else:
        raise LookupError(f"{site}: {head!r} is not defined")
    for part in dotted[1:]:
        value = getattr(value, part)
    return value


def _built_by(site: RaiseSite, value: object) -> list[type]:
    """The classes calling ``value`` (a class or a factory) gives."""
    if inspect.isclass(value):
        return [value]
    if callable(value):  # a factory: ``raise validation_error(...)``
        returned = typing.get_type_hints(value).get("return")
        options = [returned] if inspect.isclass(returned) else list(typing.get_args(returned))
        classes = [option for option in options if option is not type(None)]
        if classes and all(inspect.isclass(option) for option in classes):
            return classes
        raise TypeError(f"{site}: {value!r} builds the error but does not annotate which class it returns")
    raise TypeError(f"{site}: calls {value!r} for the error, which is neither a class nor a factory")


def _assigned_to(site: RaiseSite, name: str, seen: frozenset[str]) -> list[ast.expr]:
    """The values the enclosing functions assign to a local ``name``; none for a caught error or a parameter."""
    if name in seen:
        return []  # assigned in a cycle (``a = b; b = a``): nothing new
    return [value for target, value in site.assigned if target == name]


def _callees(site: RaiseSite, expression: ast.expr, namespace: dict[str, object], seen: frozenset[str]) -> list:
    """The classes or factories ``expression`` may be where ``site`` calls it for its error."""
    if isinstance(expression, ast.IfExp):
        branches = (expression.body, expression.orelse)
        return [callee for branch in branches for callee in _callees(site, branch, namespace, seen)]
    value = _resolve(site, expression, namespace)
    if value is _LOCAL:  # ``cls = ValueError; raise cls(...)``
        values, seen = _assigned_to(site, expression.id, seen), seen | {expression.id}
        return [callee for bound in values for callee in _callees(site, bound, namespace, seen)]
    return [] if value is None else [value]


def _classes_of(site: RaiseSite, expression: ast.expr, namespace: dict[str, object], seen: frozenset[str]) -> list:
    """The classes the error ``expression`` may be where ``site`` raises it; [] for an error passed on."""
    if isinstance(expression, ast.IfExp):
        branches = (expression.body, expression.orelse)
        return [cls for branch in branches for cls in _classes_of(site, branch, namespace, seen)]
    if isinstance(expression, ast.Call):
        return [cls for callee in _callees(site, expression.func, namespace, seen) for cls in _built_by(site, callee)]
    value = _resolve(site, expression, namespace)
    if value is _LOCAL:  # ``error = ValueError(...); raise error``
        values, seen = _assigned_to(site, expression.id, seen), seen | {expression.id}
        return [cls for bound in values for cls in _classes_of(site, bound, namespace, seen)]
    if value is None:
        return []
    if inspect.isclass(value):
        return [value]  # ``raise ValueError``: Python makes the instance
    raise TypeError(f"{site}: raises {value!r}, which is neither a class nor a factory")


def raised_classes(site: RaiseSite, namespace: dict[str, object]) -> list[type]:
    """The classes ``site`` may raise; [] for a re-raise of a value it did not create."""
    if site.node.exc is None:
        return []  # bare ``raise``: the error being handled
    return _classes_of(site, site.node.exc, namespace, frozenset())


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def exemption(site: RaiseSite, cls: type) -> str | None:
    """Why ``site`` may raise ``cls`` although it is no CdkTsError; None when nothing allows it."""
    if _qualified(cls) in EXEMPT_CLASSES:
        return _qualified(cls)
    if (cls.__name__, site.function) in EXEMPT_IN_FUNCTIONS:
        return f"{cls.__name__} in {site.function}"
    exc = site.node.exc
    if cls.__name__ == MAIN_EXIT and site.under_main:
        return MAIN_EXIT
    if (
        cls.__name__ == UNREACHABLE[0]
        and isinstance(exc, ast.Call)
        and [ast.literal_eval(a) for a in exc.args if isinstance(a, ast.Constant)] == [UNREACHABLE[1]]
    ):
        return "unreachable"
    return None


def check(sites: list[RaiseSite], namespace_of=_namespace) -> tuple[list[str], set[str]]:
    """The raises that break the promise, as messages, and the exemptions used."""
    problems, used = [], set()
    for site in sites:
        for cls in raised_classes(site, namespace_of(site.module)):
            if issubclass(cls, CdkTsError):
                continue
            reason = exemption(site, cls)
            if reason is None:
                problems.append(
                    f"{site}: {_qualified(cls)} is not a CdkTsError; raise a subclass from cdk_ts_runtime._errors "
                    f"that keeps {cls.__name__} as a base (or add one there), or list a protocol's raise in this test"
                )
            else:
                used.add(reason)
    return problems, used


def test_every_deliberate_raise_is_a_cdk_ts_error():
    sites = all_raise_sites()
    assert len(sites) > 200  # both packages were read
    problems, _used = check(sites)
    assert problems == []


def test_every_exemption_is_still_used():
    _problems, used = check(all_raise_sites())
    listed = (
        set(EXEMPT_CLASSES)
        | {f"{name} in {function}" for name, function in EXEMPT_IN_FUNCTIONS}
        | {MAIN_EXIT, "unreachable"}
    )
    assert listed - used == set()


# -- the walk itself finds what it must ----------------------------------------------------------------------

SAMPLE = '''
import argparse

from cdk_ts_runtime import ValidationError


def factory(message: str) -> ValidationError:
    return ValidationError(message)


def unannotated(message):
    return ValueError(message)


def refuse(value):
    if value == 1:
        raise ValueError("bare")
    if value == 2:
        raise ValidationError("fine")
    if value == 3:
        raise factory("fine too")
    if value == 4:
        raise argparse.ArgumentTypeError("argparse's protocol")
    if value == 5:
        raise AssertionError("unreachable")
    try:
        pass
    except KeyError as error:
        raise error
    except LookupError:
        raise
    raise KeyError(value) from None


def __getattr__(name):
    raise AttributeError(name)


def elsewhere(name):
    raise AttributeError(name)


if __name__ == "__main__":
    raise SystemExit(refuse(0))
'''


def _sample_sites(source: str) -> tuple[list[RaiseSite], dict[str, object]]:
    namespace: dict[str, object] = {"__name__": "sample"}
    exec(compile(source, "sample.py", "exec"), namespace)  # noqa: S102 - the test's own source text
    return list(raise_sites_in(ast.parse(source), Path("sample.py"), "sample")), namespace


def _reported(source: str) -> tuple[list[str], set[str]]:
    """The raise statements ``check`` reports in ``source`` (in line order), and the exemptions it used."""
    sites, namespace = _sample_sites(source)
    problems, used = check(sites, namespace_of=lambda _module: namespace)
    lines, numbers = source.splitlines(), sorted(int(p.split(":")[1].split(" ")[0]) for p in problems)
    return [lines[n - 1].strip() for n in numbers], used


def test_the_walk_reports_bare_built_ins_and_lets_cdk_ts_errors_and_protocols_through():
    reported, used = _reported(SAMPLE)
    assert reported == [
        'raise ValueError("bare")',
        "raise KeyError(value) from None",
        "raise AttributeError(name)",  # outside __getattr__
    ]
    assert used == {"argparse.ArgumentTypeError", "unreachable", "AttributeError in __getattr__", MAIN_EXIT}


def test_a_factory_that_does_not_say_what_it_builds_is_reported():
    sites, namespace = _sample_sites(SAMPLE + "\n\ndef g():\n    raise unannotated('x')\n")
    with pytest.raises(TypeError, match="does not annotate which class it returns"):
        check(sites, namespace_of=lambda _module: namespace)


LOCALS = '''
from cdk_ts_runtime import ValidationError


def maybe(message: str) -> ValidationError | None:
    return ValidationError(message) if message else None


def local_errors(value, passed_in):
    if value == 1:
        error = ValueError("built here, raised by name")
        raise error
    if value == 2:
        cls = KeyError
        raise cls("a built-in by another name")
    if value == 3:
        fine = ValidationError("a cdk-ts error, raised by name")
        raise fine
    if value == 4 and (built := maybe("an optional factory's result")) is not None:
        raise built from None
    if value == 5:
        raise passed_in  # the caller's error, passed on
    try:
        pass
    except KeyError as caught:
        raise caught
    either = ValidationError("fine") if value else TypeError("one branch bare")
    raise either


def nested():
    def inner():
        error = TypeError("inner's own")
        return error

    error = ValidationError("outer's")
    raise error
'''


def test_a_local_variable_is_judged_by_what_the_function_assigns_to_it():
    reported, _used = _reported(LOCALS)
    assert reported == ["raise error", 'raise cls("a built-in by another name")', "raise either"]
