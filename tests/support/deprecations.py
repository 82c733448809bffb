"""Reading the registry of deprecations (``cdk_ts_runtime._deprecations``) the way a user meets each old name."""

from __future__ import annotations

import importlib
import inspect
import re
import warnings

from cdk_ts_runtime._deprecations import REGISTRY, Deprecation, Kind

#: ``package.Callable(keyword=...)``: the callable and the keyword of an argument entry.
_ARGUMENT = re.compile(r"^(?P<callable>[\w.]+)\((?P<keyword>\w+)=")
#: ``python -m package.module ...``: the module a command entry ran.
_COMMAND = re.compile(r"^python -m (?P<module>[\w.]+)")


def removed() -> list[Deprecation]:
    """The entries this release no longer has."""
    return [entry for entry in REGISTRY if entry.removed]


def kept() -> list[Deprecation]:
    """The entries that still work, with a warning."""
    return [entry for entry in REGISTRY if not entry.removed]


def removed_module(path: str) -> Deprecation | None:
    """The removed module entry ``path`` is, or is a submodule of (``cdk_ts_runtime.sharding.table``); else None."""
    for entry in removed():
        if entry.kind is Kind.MODULE and (path == entry.old or path.startswith(f"{entry.old}.")):
            return entry
    return None


def resolves(dotted: str) -> bool:
    """Whether the dotted path imports or is an attribute of what imports (warnings of kept names silenced)."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for attribute in parts[split:]:
                if not hasattr(found, attribute):
                    return False
                found = getattr(found, attribute)
        return True
    return False


def still_works(entry: Deprecation) -> bool:
    """Whether a user can still write the entry's old name, as its kind says."""
    if entry.kind is Kind.ARGUMENT:
        match = _ARGUMENT.match(entry.old)
        assert match, f"{entry.old!r} is not written Callable(keyword=...)"
        if not resolves(match["callable"]):
            return False
        parts = match["callable"].rsplit(".", 1)
        callable_ = getattr(importlib.import_module(parts[0]), parts[1])
        if inspect.isclass(callable_):  # a construct's metaclass (jsii) hides the signature of its __init__
            callable_ = callable_.__init__
        return match["keyword"] in inspect.signature(callable_).parameters
    if entry.kind is Kind.COMMAND:
        match = _COMMAND.match(entry.old)
        assert match, f"{entry.old!r} is not written python -m module ..."
        return resolves(match["module"])
    assert entry.kind is not Kind.ENVIRONMENT_VARIABLE, "a variable is read, not resolved: see test_public_api"
    return resolves(entry.old)
