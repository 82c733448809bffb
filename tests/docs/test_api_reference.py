"""Every public object says what it does and its defaults (the reference itself is built by tests/docs/test_site.py)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re

import pytest

# The modules users import: the constructs (and the planner) and the runtime's clients and contracts.
PUBLIC_MODULES = [
    "cdk_ts",
    "cdk_ts.archive",  # each family's face, and the modules its public names live in
    "cdk_ts.archive.archiver",
    "cdk_ts.archive.base",
    "cdk_ts.archive.catalog",
    "cdk_ts.archive.compacted_catalog",
    "cdk_ts.archive.compaction",
    "cdk_ts.archive.iceberg_table_sink",
    "cdk_ts.archive.imported",
    "cdk_ts.archive.options",
    "cdk_ts.buckets",
    "cdk_ts.device_log",
    "cdk_ts.device_log.base",
    "cdk_ts.device_log.table",
    "cdk_ts.monitoring",
    "cdk_ts.plan",
    "cdk_ts.plan.__main__",
    "cdk_ts.plan.prices",
    "cdk_ts.rotation",
    "cdk_ts.rotation.base",
    "cdk_ts.rotation.tables",
    "cdk_ts.runtime_layer",
    "cdk_ts.sharding",
    "cdk_ts.sharding.base",
    "cdk_ts.sharding.table",
    "cdk_ts.testing",
    "cdk_ts.testing.pytest_plugin",
    "cdk_ts.testing._engines",  # the public names of cdk_ts.testing live in its private modules
    "cdk_ts.testing._local",
    "cdk_ts.testing._proxy",
    "cdk_ts.testing._registry",
    "cdk_ts.timestream",
    "cdk_ts_runtime",  # the runtime's whole public face is its __all__ ...
    "cdk_ts_runtime.handlers",  # ... and the Lambda entry points
    "cdk_ts_runtime.handlers.archiver",
    "cdk_ts_runtime.handlers.compaction",
    "cdk_ts_runtime.handlers.firehose_iceberg",
    "cdk_ts_runtime.handlers.rotation",
    "cdk_ts_runtime.handlers.throttled_keys_rule",
    "cdk_ts_runtime.handlers.throttled_keys_widget",
]
# Parameters whose meaning every CDK user knows, and parameters that are not values.
UNDOCUMENTED_PARAMETERS = {"self", "cls", "scope", "construct_id"}
_PARAM = re.compile(r":param\s+(?:[^:\n]*\s)?(\w+):(.*?)(?=\n\s*:\w[^:\n]*:|\Z)", re.DOTALL)


def public_objects() -> list[tuple[str, object]]:
    """Every public module, class, function, method and property of PUBLIC_MODULES, by qualified name."""
    found: list[tuple[str, object]] = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        found.append((module_name, module))
        # the runtime's public names live in its private modules: its __all__ is what users see
        exported = set(getattr(module, "__all__", ())) if module_name.startswith("cdk_ts_runtime") else set()
        for name in exported:
            getattr(module, name)  # a name loaded on first use is in vars() from then on
        for name, value in sorted(vars(module).items()):
            if name.startswith("_") or (getattr(value, "__module__", None) != module_name and name not in exported):
                continue
            if inspect.isfunction(value):
                found.append((f"{module_name}.{name}", value))
            elif inspect.isclass(value):
                found.append((f"{module_name}.{name}", value))
                found.extend(_members(f"{module_name}.{name}", value))
    return found


def _members(qualname: str, cls: type) -> list[tuple[str, object]]:
    members = []
    own = [k for k in cls.__mro__ if k.__module__.split(".")[0] in ("cdk_ts", "cdk_ts_runtime")]
    seen: set[str] = set()
    for klass in own:
        for name, value in vars(klass).items():
            if name in seen or (name.startswith("_") and name != "__init__"):
                continue
            seen.add(name)
            if isinstance(value, classmethod | staticmethod):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value):
                members.append((f"{qualname}.{name}", value))
    return members


def _own_docstring(obj: object) -> str:
    doc = vars(obj).get("__doc__") if inspect.isclass(obj) else obj.__doc__
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and (doc or "").startswith(f"{obj.__name__}("):
        return ""  # the signature dataclasses write when the class has no docstring
    return (doc or "").strip()


def defaulted_parameters(function) -> list[str]:
    """Names of the parameters of ``function`` that have a default value and need a ``Default:``."""
    return [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.default is not inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and p.name not in UNDOCUMENTED_PARAMETERS
        and not p.name.startswith("_")
    ]


def documented_defaults(docstring: str) -> set[str]:
    """Names of the ``:param name:`` entries that state a ``Default:``."""
    return {name for name, text in _PARAM.findall(docstring) if "Default:" in text}


def _needs_own_docstring(name: str, obj: object, owner: type | None) -> bool:
    """``__init__`` is documented by its class, unless a library base class would lend it its docstring.

    The reference (like ``help()``) shows an inherited ``__init__`` docstring: a construct without one would be
    documented by ``Construct.__init__`` ("Creates a new construct node").
    """
    if not name.endswith(".__init__") or owner is None:
        return True
    return any(
        base.__module__ != "builtins" and (vars(base).get("__init__") is not None)
        and (getattr(vars(base)["__init__"], "__doc__", None) or "").strip()
        for base in owner.__mro__[1:]
        if base.__module__.split(".")[0] not in ("cdk_ts", "cdk_ts_runtime")
    )


def test_every_public_object_has_a_docstring():
    owners = {f"{name}.__init__": obj for name, obj in public_objects() if inspect.isclass(obj)}
    missing = [
        name
        for name, obj in public_objects()
        if not inspect.ismodule(obj) and not _own_docstring(obj) and _needs_own_docstring(name, obj, owners.get(name))
    ]
    missing += [name for name, obj in public_objects() if inspect.ismodule(obj) and not (obj.__doc__ or "").strip()]
    assert not missing, f"{len(missing)} public objects have no docstring: {', '.join(missing)}"


def test_every_parameter_with_a_default_states_it():
    undocumented = []
    for name, obj in public_objects():
        if inspect.isclass(obj):
            if "__init__" not in vars(obj):
                continue
            # A constructor's parameters may be documented on the class or on __init__.
            function, docstring = obj.__init__, _own_docstring(obj) + "\n" + (vars(obj)["__init__"].__doc__ or "")
        elif inspect.isfunction(obj) and not name.endswith(".__init__"):
            function, docstring = obj, obj.__doc__ or ""
        else:
            continue
        stated = documented_defaults(docstring)
        undocumented += [f"{name}({p})" for p in defaulted_parameters(function) if p not in stated]
    assert not undocumented, (
        f"{len(undocumented)} parameters have a default but no ':param name: ... Default: ...' entry: "
        + ", ".join(undocumented)
    )


@pytest.mark.parametrize(
    ("docstring", "expected"),
    [
        (
            ":param a: first. Default: 1.\n:param b: second.\n:param c: third,\n    on two lines. Default: none.",
            {"a", "c"},
        ),
        ("No fields at all; Default: mentioned in prose.", set()),
        (":param int a: typed. Default: 0.\n:returns: Default: not a parameter.", {"a"}),
    ],
)
def test_defaults_are_read_from_param_entries_only(docstring, expected):
    assert documented_defaults(docstring) == expected
