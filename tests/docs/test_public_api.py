"""Public surface: every name ``cdk_ts`` exports resolves; README, docs and sample app import public modules only."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

import cdk_ts

ROOT = Path(__file__).resolve().parents[2]
_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def imported_modules(source: str) -> set[str]:
    """Every module a piece of Python source imports from (``from X import ...`` and ``import X``)."""
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


def private_library_modules(modules: set[str]) -> list[str]:
    """The cdk-ts modules among ``modules`` with a part starting with ``_`` (``cdk_ts._defaults``)."""
    return sorted(
        m for m in modules
        if m.split(".")[0] in ("cdk_ts", "cdk_ts_runtime") and any(p.startswith("_") for p in m.split("."))
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
    assert cdk_ts.PeriodTablesBase is rotation.PeriodTablesBase
