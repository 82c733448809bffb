"""The runtime's old module paths, deprecated for one release: each still imports, with a ``DeprecationWarning``.

Up to 0.2 every runtime module was public (``cdk_ts_runtime.router``, ``cdk_ts_runtime.sharding.table``, ...).
The public names now come from ``cdk_ts_runtime`` itself and the modules are private (``_router``, ``_sharding``).
An old path is not a file: :class:`MovedModules`, a finder on ``sys.meta_path`` (the way ``six.moves`` serves
names that moved), answers it with the module that took its place, so ``cdk_ts_runtime.router.PeriodRouter``
*is* ``cdk_ts_runtime.PeriodRouter`` and patching ``cdk_ts_runtime.router.time`` patches the module that runs.
Keeping no file at the old path lets git see each move as a rename.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
import warnings

PACKAGE = "cdk_ts_runtime"

#: Old module path -> the module that replaced it. An old package's submodules move with it
#: (``cdk_ts_runtime.sharding.table`` -> ``cdk_ts_runtime._sharding.table``).
MOVED = {
    f"{PACKAGE}.archive_lines": f"{PACKAGE}._archive_lines",
    f"{PACKAGE}.archiver": f"{PACKAGE}._archiver",
    f"{PACKAGE}.compaction": f"{PACKAGE}._compaction",
    f"{PACKAGE}.compaction_iceberg": f"{PACKAGE}._compaction_iceberg",
    f"{PACKAGE}.compaction_plan": f"{PACKAGE}._compaction_plan",
    f"{PACKAGE}.contributor_insights": f"{PACKAGE}._contributor_insights",
    f"{PACKAGE}.device_log": f"{PACKAGE}._device_log",
    f"{PACKAGE}.emf": f"{PACKAGE}._emf",
    f"{PACKAGE}.errors": f"{PACKAGE}._errors",
    f"{PACKAGE}.items": f"{PACKAGE}._items",
    f"{PACKAGE}.periods": f"{PACKAGE}._periods",
    # the old package exported the rotator's names; its submodules moved to _rotation
    f"{PACKAGE}.rotation": f"{PACKAGE}._rotation.rotator",
    f"{PACKAGE}.rotation_config": f"{PACKAGE}._rotation.config",
    f"{PACKAGE}.rotation_metrics": f"{PACKAGE}._rotation.metrics",
    f"{PACKAGE}.router": f"{PACKAGE}._router",
    f"{PACKAGE}.sharding": f"{PACKAGE}._sharding",
    f"{PACKAGE}.stream_consumer": f"{PACKAGE}._stream_consumer",
    f"{PACKAGE}.table_layout": f"{PACKAGE}._table_layout",
    f"{PACKAGE}.throttling": f"{PACKAGE}._throttling",
    f"{PACKAGE}.time_spans": f"{PACKAGE}._time_spans",
    f"{PACKAGE}.timestream": f"{PACKAGE}._timestream",
}
#: Old packages: their submodules moved into these packages under the same names.
MOVED_PACKAGES = {f"{PACKAGE}.rotation": f"{PACKAGE}._rotation", f"{PACKAGE}.sharding": f"{PACKAGE}._sharding"}


def new_name(old: str) -> str | None:
    """The module that replaced the old module path ``old``, or None when ``old`` did not move."""
    if old in MOVED:
        return MOVED[old]
    package = old.rpartition(".")[0]
    while package:
        if package in MOVED_PACKAGES:
            return f"{MOVED_PACKAGES[package]}.{old[len(package) + 1:]}"
        package, _, _ = package.rpartition(".")
    return None


#: The names the old ``cdk_ts_runtime.rotation`` package exported (its ``__all__``), all from the rotator's module.
_OLD_ROTATION_NAMES = [
    "OPERATIONS", "RotationRunError", "RotationWindowError", "RunReport", "TableRotator", "scheduled_time",
]
#: What to import instead, for old paths whose names are not in ``cdk_ts_runtime.__all__``.
ADVICE = {
    f"{PACKAGE}.archiver": "ArchiverMetric is cdk_ts.ArchiverMetric; replay is the `cdk-ts replay` command",
    f"{PACKAGE}.compaction_plan": "ColumnSpec and Granularity are cdk_ts.ColumnSpec and cdk_ts.Granularity",
    f"{PACKAGE}.rotation_config": "CapacityTier, AutoScaling and RightSizing are in cdk_ts",
    f"{PACKAGE}.rotation_metrics": "RotationMetric is cdk_ts.RotationMetric",
    f"{PACKAGE}.stream_consumer": "StreamConsumer is cdk_ts.StreamConsumer",
}
_INTERNAL = (
    "archive_lines", "compaction", "compaction_iceberg", "contributor_insights", "rotation", "time_spans",
)


def advice(old: str) -> str:
    """What the deprecation warning for the old path ``old`` tells its user to do instead."""
    top = old.split(".")[1]
    if old in ADVICE:
        return ADVICE[old]
    if top in _INTERNAL:
        return f"it is internal to cdk-ts's own functions now ({new_name(old)}), with no public replacement"
    return f"import its public names from {PACKAGE} itself (listed in {PACKAGE}.__all__)"


class MovedModules:
    """Imports an old module path as the module that replaced it, with a ``DeprecationWarning``.

    A finder and loader by protocol (``find_spec``; ``create_module``/``exec_module``), not by subclassing
    ``importlib.abc``: that module imports ``importlib.resources`` and more, milliseconds on every cold start of
    a function that imports ``cdk_ts_runtime``. ``importlib.util`` is imported only when an old path is asked for.
    """

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for an old path (this finder loads it); None for every other module."""
        if not fullname.startswith(f"{PACKAGE}."):  # first on sys.meta_path: every other import passes through here
            return None
        new = new_name(fullname)
        if new is None:
            return None
        import importlib.util

        if importlib.util.find_spec(new) is None:  # a module that never was: the usual error
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname in MOVED_PACKAGES)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        """The default module (replaced by the new one in :meth:`exec_module`)."""
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        """Warn, then put the new module in ``sys.modules`` under the old name (the import returns that)."""
        old = module.__name__
        new = importlib.import_module(new_name(old))
        # stacklevel 2 skips importlib's own frames: the warning names the line that imported the old path
        warnings.warn(_message(old), DeprecationWarning, stacklevel=2)
        if old == f"{PACKAGE}.rotation":
            # the old package's names are the rotator module's; its submodules are found by new_name()
            module.__all__ = list(_OLD_ROTATION_NAMES)
            module.__getattr__ = lambda name: getattr(new, name)
            return
        sys.modules[old] = new

    def get_code(self, fullname: str) -> types.CodeType | None:
        """The new module's code, for ``python -m <old path>`` (runpy asks for it); warns its end user."""
        import importlib.util

        warnings.warn(_message(fullname), FutureWarning, stacklevel=2)
        new = new_name(fullname)
        return importlib.util.find_spec(new).loader.get_code(new)


def _message(old: str) -> str:
    return f"{old} is deprecated and goes in the next release: {advice(old)}"


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), ahead of the path finder that reads the package folder."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModules())


install()  # on import: cdk_ts_runtime imports this module before anything else
