"""The sample (examples/) and the benchmarks (bench/) run from a clone without the test suite's helpers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


@pytest.mark.parametrize("folder", ["examples", "bench"])
def test_no_module_imports_the_test_suite(folder):
    offenders = {
        str(path.relative_to(ROOT)): name
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in _imported_modules(path)
        if name == "tests" or name.startswith("tests.")
    }
    assert not offenders, f"{folder}/ must not need tests/ (use cdk_ts.testing or a module of its own): {offenders}"
