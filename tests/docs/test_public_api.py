"""Public surface: every name ``cdk_ts`` and ``cdk_ts_runtime`` export resolves; README, docs and sample app import
public modules only; no name the registry of deprecations (``cdk_ts_runtime._deprecations``) calls removed resolves,
and every name it still keeps does."""

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
from cdk_ts_runtime import _deprecations, _environment
from cdk_ts_runtime._deprecations import Kind
from cdk_ts_runtime._errors import EnvironmentVariableMissingError
from tests.support.deprecations import kept, removed, removed_module, resolves, still_works

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
    (``cdk_ts._defaults``), or a removed module path (``cdk_ts_runtime.router``, ``cdk_ts_runtime.sharding.table``)."""
    return sorted(
        m for m in modules
        if m.split(".")[0] in ("cdk_ts", "cdk_ts_runtime")
        and (any(p.startswith("_") for p in m.split(".")) or removed_module(m) is not None)
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


def test_the_check_finds_a_removed_runtime_path_however_it_is_imported():
    planted = (
        "from cdk_ts_runtime.router import PeriodRouter\n"
        "import cdk_ts_runtime.sharding.table\n"
        "from cdk_ts_runtime import rotation_config, TableLayout\n"
        "from cdk_ts_runtime.handlers.archiver import handler\n"
        "from cdk_ts.rotation import RotatingTimeSeriesTables\n"
    )
    assert private_library_modules(imported_modules(planted)) == [
        "cdk_ts_runtime.rotation_config", "cdk_ts_runtime.router", "cdk_ts_runtime.router.PeriodRouter",
        "cdk_ts_runtime.sharding.table",
    ]


def test_the_rotation_names_of_cdk_ts_come_from_the_rotation_package():
    from cdk_ts import rotation

    assert cdk_ts.RotatingTimeSeriesTables is rotation.RotatingTimeSeriesTables
    assert cdk_ts.RotatingTimeSeriesTablesBase is rotation.RotatingTimeSeriesTablesBase


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


# -- the registry of deprecations: removed names are gone, kept ones still work --------------------------------


def test_the_registry_s_release_is_the_package_s_version():
    from importlib import metadata

    from packaging.version import Version

    assert Version(metadata.version("cdk-ts")).base_version == _deprecations.RELEASE


def test_the_registry_names_each_old_name_once_and_removes_what_0_2_0_announced_for_0_3_0():
    olds = [entry.old for entry in _deprecations.REGISTRY]
    assert len(olds) == len(set(olds))
    assert {e.old for e in removed()} >= {
        "cdk_ts.ShardMetadataTable.grant_read_write", "cdk_ts.TimestreamTable.grant_write",
        "cdk_ts.TimestreamTable.grant_query",
    }
    assert len([e for e in removed() if e.kind is Kind.MODULE and e.old.startswith("cdk_ts_runtime.")]) == 21
    assert len([e for e in removed() if e.kind is Kind.ENVIRONMENT_VARIABLE]) == 11


@pytest.mark.parametrize(
    "entry", [e for e in removed() if e.kind is not Kind.ENVIRONMENT_VARIABLE], ids=lambda e: e.old
)
def test_no_removed_name_resolves(entry):
    assert not still_works(entry), f"{entry.old} was removed in {entry.removed_in}: take it out of the code"


@pytest.mark.parametrize("entry", kept(), ids=lambda e: e.old)
def test_every_kept_deprecation_still_works_until_its_release(entry):
    assert still_works(entry)


def test_the_resolution_check_can_fail_both_ways():
    assert resolves("cdk_ts.ShardMetadataTable.grant_read_write_data")
    assert resolves("cdk_ts_runtime.handlers.archiver.handler")
    assert not resolves("cdk_ts.ShardMetadataTable.grant_read_writ")
    assert not resolves("cdk_ts_runtime.nope.PeriodRouter")


@pytest.mark.parametrize(
    ("path", "missing"),
    [
        ("cdk_ts_runtime.sharding.table", "cdk_ts_runtime.sharding"),
        ("cdk_ts_runtime.rotation.lock", "cdk_ts_runtime.rotation"),
        ("cdk_ts.rotating_tables", "cdk_ts.rotating_tables"),
    ],
)
def test_a_removed_module_path_or_its_submodule_is_not_found(path, missing):
    with pytest.raises(ModuleNotFoundError, match=f"No module named '{re.escape(missing)}'"):
        importlib.import_module(path)


def test_importing_the_runtime_changes_no_import_machinery():
    code = "import sys; before = list(sys.meta_path); import cdk_ts_runtime; print(sys.meta_path == before)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


@pytest.mark.parametrize(
    "entry", [e for e in removed() if e.kind is Kind.ENVIRONMENT_VARIABLE], ids=lambda e: e.old
)
def test_a_removed_variable_set_alone_fails_naming_the_one_to_set(entry):
    # given a function configured with 0.2's name only: reading it must not fall back to a default quietly
    with pytest.raises(EnvironmentVariableMissingError, match=rf"{entry.old} was renamed {entry.new}.*set {entry.new}"):
        _environment.read({entry.old: "value"}, entry.new, "a default")
    with pytest.raises(EnvironmentVariableMissingError) as refused:
        _environment.required({entry.old: "value"}, (), "unused", optional=(entry.new,))
    assert refused.value.names == (entry.new,)
    # the new name, set as well, is what counts; and an old name the reader does not read is the user's own
    assert _environment.read({entry.old: "old", entry.new: "new"}, entry.new) == "new"
    assert _environment.read({entry.old: "theirs"}, _environment.TABLE_PREFIX, "default") == "default"


def test_the_one_warning_names_the_replacement_and_the_release_at_the_caller_s_line():
    with pytest.warns(DeprecationWarning) as caught:
        _deprecations.warn("cdk_ts.CapacityTier.on_demand", stacklevel=1)
    [warning] = caught
    assert str(warning.message) == (
        "cdk_ts.CapacityTier.on_demand is deprecated and goes in 0.4.0: use tier.is_on_demand "
        "(or tier.billing is Billing.ON_DEMAND); the factory CapacityTier.on_demand(...) stays"
    )
    assert warning.filename == __file__


def test_a_renamed_attribute_warns_at_the_user_s_line_and_an_unknown_one_is_an_attribute_error():
    from cdk_ts_runtime.handlers import custom_resource

    with pytest.warns(DeprecationWarning, match="UnanswerableRequest is deprecated and goes in 0.4.0") as caught:
        assert custom_resource.UnanswerableRequest is custom_resource.UnanswerableRequestError
    assert [w.filename for w in caught] == [__file__]
    with pytest.raises(AttributeError, match="has no attribute 'CorruptShardMetadata'"):
        custom_resource.CorruptShardMetadata  # noqa: B018  (a registry name, but of another module)
