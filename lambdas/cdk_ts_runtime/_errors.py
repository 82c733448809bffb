"""One error hierarchy: every error cdk-ts raises on purpose is a :class:`CdkTsError`.

Each keeps the built-in base it had (``ValueError``, ``LookupError``, ``RuntimeError``), so code that
caught those still does; ``except CdkTsError`` catches all of them. The construct side's synth-time error
(``cdk_ts.ConstructValidationError``) is one too. Renamed errors keep their old names for one release, as
deprecated aliases (:func:`deprecated_alias`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any


class CdkTsError(Exception):
    """Base of every error cdk-ts raises on purpose (construct side and runtime side)."""


class ValidationError(CdkTsError, ValueError):
    """A value cdk-ts refuses (a setting, an argument, an item); the message names it and the way out."""


def deprecated_alias(module: str, aliases: Mapping[str, type], name: str) -> Any:
    """The class an old name stands for, with a ``DeprecationWarning``; for a module's ``__getattr__``.

    :param module: the module's name, for the ``AttributeError`` of an unknown name.
    :param aliases: old name to the class that replaced it.
    :param name: the attribute looked up.
    :raises AttributeError: when ``name`` is not an old name.
    """
    if name not in aliases:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    new = aliases[name]
    warnings.warn(
        f"{module}.{name} is renamed {new.__name__} (every cdk-ts error is named ...Error); the old name goes in "
        "the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return new
