"""Public surface: every name ``cdk_ts`` and ``cdk_ts_runtime`` export resolves; README, docs and sample app import
public modules only; the runtime's old module paths still import, deprecated, as the same objects."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cdk_ts
import cdk_ts_runtime
from cdk_ts_runtime import _moved

ROOT = Path(__file__).resolve().parents[2]
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def imported_modules(source: str) -> set[str]:
    """Every module a piece of Python source imports from (``from X import ...`` and ``import X``), and for
    ``from X import Y`` also ``X.Y``, which is a module when ``Y`` is one (``from cdk_ts_runtime import router``)."""
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


def private_library_modules(modules: set[str]) -> list[str]:
    """The cdk-ts modules among ``modules`` users must not be shown: one with a part starting with ``_``
    (``cdk_ts._defaults``), or a runtime path of 0.2 that imports only with a ``DeprecationWarning``
    (``cdk_ts_runtime.router``, ``cdk_ts_runtime.sharding.table``: ``_moved.MOVED`` and ``MOVED_PACKAGES``)."""
    return sorted(
        m for m in modules
        if m.split(".")[0] in ("cdk_ts", "cdk_ts_runtime")
        and (any(p.startswith("_") for p in m.split(".")) or _moved.new_name(m) is not None)
    )


@pytest.mark.parametrize("name", cdk_ts.__all__)
def test_every_exported_name_resolves(name):
    assert getattr(cdk_ts, name) is not None
    assert name in dir(cdk_ts)


def test_names_users_pass_to_the_constructs_are_exported():
    for name in ("TTL_DELETIONS_ONLY", "FailureDestination", "CapacityTier", "AutoScaling", "RightSizing",
                 "ShardStrategy", "ShardGrowth", "secure_bucket", "access_logs_bucket", "StreamConsumer"):
        assert name in cdk_ts.__all__


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        cdk_ts.Nope  # noqa: B018


def test_the_readme_and_the_docs_import_only_public_modules():
    blocks = _PYTHON_BLOCK.findall((ROOT / "README.md").read_text())
    blocks += [path.read_text() for path in (ROOT / "docs" / "snippets").rglob("*.py")]
    assert len(blocks) > 20, "few python blocks found: this test would prove little"
    modules = set().union(*(imported_modules(b) for b in blocks))
    assert "cdk_ts" in modules
    assert private_library_modules(modules) == []


def test_the_sample_app_imports_only_public_modules():
    modules = imported_modules((ROOT / "app.py").read_text())
    assert "cdk_ts" in modules
    assert private_library_modules(modules) == []


def test_the_private_module_check_can_fail():
    assert private_library_modules({"cdk_ts._defaults", "cdk_ts.buckets"}) == ["cdk_ts._defaults"]


def test_the_check_finds_a_deprecated_runtime_path_however_it_is_imported():
    planted = (
        "from cdk_ts_runtime.router import PeriodRouter\n"
        "import cdk_ts_runtime.sharding.table\n"
        "from cdk_ts_runtime import rotation_config, TableLayout\n"
        "from cdk_ts_runtime.handlers.archiver import handler\n"
        "from cdk_ts.rotation import RotatingTimeSeriesTables\n"
    )
    assert private_library_modules(imported_modules(planted)) == [
        "cdk_ts_runtime.rotation_config", "cdk_ts_runtime.router", "cdk_ts_runtime.sharding.table",
    ]


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("cdk_ts.rotating_tables", "cdk_ts.rotation.tables", ["RotatingTimeSeriesTables", "RUN_TIMEOUT"]),
        ("cdk_ts.period_tables", "cdk_ts.rotation.base", ["PeriodTablesBase", "PeriodTableOptions", "table_layout"]),
    ],
)
def test_a_moved_rotation_module_still_imports_with_a_deprecation_warning(old, new, names, monkeypatch):
    monkeypatch.delitem(sys.modules, old, raising=False)  # so the module body, and its warning, run again
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(old)} is deprecated .* cdk_ts\.rotation"):
        moved = importlib.import_module(old)
    current = importlib.import_module(new)
    assert all(getattr(moved, name) is getattr(current, name) for name in names)


def test_the_rotation_names_of_cdk_ts_come_from_the_rotation_package():
    from cdk_ts import rotation

    assert cdk_ts.RotatingTimeSeriesTables is rotation.RotatingTimeSeriesTables
    assert cdk_ts.RotatingTimeSeriesTablesBase is rotation.RotatingTimeSeriesTablesBase


def test_the_base_s_earlier_name_still_imports_with_a_warning():
    from cdk_ts import rotation

    with pytest.warns(DeprecationWarning, match="cdk_ts.PeriodTablesBase is deprecated.*RotatingTimeSeriesTablesBase"):
        assert cdk_ts.PeriodTablesBase is rotation.RotatingTimeSeriesTablesBase
    assert "PeriodTablesBase" not in cdk_ts.__all__


#: The runtime's public face as CHANGELOG.md lists it: changing it changes what the deprecation promise covers.
RUNTIME_FACE = {
    "rotating period tables": ["PeriodRouter", "BatchWriter", "TableLayout", "RotationPeriod", "period_start",
                               "next_start", "table_name", "parse_table_name"],
    "sharded hot keys": ["ShardedTable", "ShardStrategy", "ShardGrowth", "ShardShrink", "ShardInfo"],
    "device log and Timestream": ["DeviceLogRepository", "TimestreamWriter", "WriteResult", "build_query"],
    "throttles": ["classify_throttle", "Throttle", "ThrottleReason", "ThrottleScope", "ThrottleLimit"],
    "writer metrics": ["MetricsSink", "EmfWriter", "MetricPoint", "WriterMetric"],
    "errors": ["CdkTsError", "ValidationError", "EnvironmentVariableMissingError", "WrongTypeError",
               "UnknownKeywordError", "BatchWriteError", "MissingPeriodTableError",
               "PageLimitError", "ShardReadError", "CorruptShardMetadataError", "LogEntryExistsError",
               "LogEntryMissingError", "ThrottledError"],
}
#: The Lambda entry points, public as ``<module>.handler`` (templates name them).
ENTRY_POINTS = [
    "archiver", "compaction", "compaction_partition", "firehose_iceberg", "rotation", "throttled_keys_rule",
    "throttled_keys_widget",
]


def test_the_runtime_exports_exactly_its_documented_face_once():
    documented = [name for names in RUNTIME_FACE.values() for name in names]
    assert sorted(cdk_ts_runtime.__all__) == sorted(documented)
    assert len(set(cdk_ts_runtime.__all__)) == len(cdk_ts_runtime.__all__)


@pytest.mark.parametrize("name", cdk_ts_runtime.__all__)
def test_every_runtime_name_imports_from_the_package(name):
    namespace: dict = {}
    exec(f"from cdk_ts_runtime import {name}", namespace)  # noqa: S102 - the import statement users write
    assert namespace[name] is getattr(cdk_ts_runtime, name)
    assert name in dir(cdk_ts_runtime)


def test_an_unknown_runtime_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'PeriodRouterr'"):
        cdk_ts_runtime.PeriodRouterr  # noqa: B018


def test_every_runtime_module_but_the_package_and_the_entry_points_is_private():
    public = sorted(
        info.name for info in pkgutil.walk_packages(cdk_ts_runtime.__path__, "cdk_ts_runtime.")
        if not any(part.startswith("_") for part in info.name.split("."))
    )
    machinery = ["cdk_ts_runtime.handlers.custom_resource"]  # shared by entry points; left out of the reference
    entry_points = [f"cdk_ts_runtime.handlers.{m}" for m in ENTRY_POINTS]
    assert public == sorted(["cdk_ts_runtime.handlers", *machinery, *entry_points])
    for module in ENTRY_POINTS:
        assert importlib.import_module(f"cdk_ts_runtime.handlers.{module}").__all__ == ["handler"]


def test_importing_the_runtime_package_imports_no_boto3():
    # a fresh interpreter: this one has imported boto3 long ago
    code = (
        "import sys, cdk_ts_runtime; print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def _old_paths() -> list[str]:
    paths = set(_moved.MOVED)
    for old, new in _moved.MOVED_PACKAGES.items():
        paths.update(f"{old}.{info.name}" for info in pkgutil.iter_modules(importlib.import_module(new).__path__))
    return sorted(paths)


OLD_PATHS = _old_paths()


def test_the_old_paths_are_the_modules_of_the_previous_release():
    assert "cdk_ts_runtime.sharding.table" in OLD_PATHS and "cdk_ts_runtime.rotation.lock" in OLD_PATHS
    assert "cdk_ts_runtime.rotation_config" in OLD_PATHS and "cdk_ts_runtime.router" in OLD_PATHS
    assert len(OLD_PATHS) >= 30


@pytest.mark.parametrize("old", OLD_PATHS)
def test_an_old_module_path_warns_at_the_importing_line_and_gives_the_same_objects(old, monkeypatch):
    new = importlib.import_module(_moved.new_name(old))
    # given a process that has not imported the old path yet
    for loaded in [m for m in sys.modules if m == old or m.startswith(f"{old}.")]:
        monkeypatch.delitem(sys.modules, loaded)
    parent, _, attribute = old.rpartition(".")
    if parent in sys.modules:
        monkeypatch.delattr(sys.modules[parent], attribute, raising=False)
    # when user code imports it
    with pytest.warns(DeprecationWarning) as caught:
        __import__(old)
    # then the warning names the old path and the user's line, and the objects are the new module's own
    [warning] = [w for w in caught if str(w.message).startswith(f"{old} is deprecated and goes in the next release")]
    assert warning.filename == __file__
    shim = sys.modules[old]
    if old == "cdk_ts_runtime.rotation":  # the old package re-exported the rotator's names
        assert shim.__all__ and all(getattr(shim, name) is getattr(new, name) for name in shim.__all__)
    else:
        assert shim is new


def test_an_old_path_names_its_public_replacement():
    assert _moved.advice("cdk_ts_runtime.router") == (
        "import its public names from cdk_ts_runtime itself (listed in cdk_ts_runtime.__all__)"
    )
    assert "in cdk_ts" in _moved.advice("cdk_ts_runtime.rotation_config")
    assert "internal" in _moved.advice("cdk_ts_runtime.rotation.lock")


def test_a_module_that_never_existed_under_an_old_package_is_not_found():
    with pytest.raises(ModuleNotFoundError, match="cdk_ts_runtime.sharding.nope"):
        importlib.import_module("cdk_ts_runtime.sharding.nope")


def test_python_m_on_an_old_path_runs_the_new_module_and_tells_its_user():
    result = subprocess.run(
        [sys.executable, "-m", "cdk_ts_runtime.archiver", "--help"], capture_output=True, text=True, check=True
    )
    assert "usage:" in result.stdout and "replay" in result.stdout
    assert "FutureWarning: cdk_ts_runtime.archiver is deprecated" in result.stderr
