"""Code stays in pieces a reader can hold: no class over 300 lines, no function over 80, except tables of data.

Sizes are counted as Python reports them (``end_lineno - lineno + 1`` of the ``class``/``def`` node, the
docstring and decorators' lines after ``def`` included), for every class and function, nested ones too,
in every Python file the repository ships or runs: the packages, ``tests/``, ``examples/``, ``bench/``,
``scripts/``, ``docs/snippets/`` and the root ``app.py``. The walk starts at the repository root and skips
only what is never committed (virtual environments, ``node_modules``, build output, caches), so a new
folder is covered without being listed.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Folders that hold no code of ours: installed packages, build and synth output, caches (all git-ignored).
_NOT_OURS = frozenset({"node_modules", "cdk.out", "__pycache__", "build", "dist"})
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 80

#: Definitions that are tables of data, not logic, and may be longer. Each entry says which table it is; a
#: data table reads best whole, and splitting it would only scatter the rows.
#: Form: ``"<path from the repository root>::<qualified name>": "<what the table holds>"``.
_TABLES_OF_DATA: dict[str, str] = {}


def _is_ours(folder: str) -> bool:
    return not (folder.startswith(".") or folder in _NOT_OURS or folder.endswith(".egg-info"))


def _python_files() -> list[Path]:
    """Every ``.py`` file under the repository root, outside the folders in ``_NOT_OURS`` and hidden ones."""
    files = []
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = sorted(name for name in subfolders if _is_ours(name))
        files.extend(Path(folder) / name for name in sorted(names) if name.endswith(".py"))
    return files


def _definitions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.AST]]:
    """Every class and function below ``tree`` with its qualified name (``Outer.method.inner``)."""
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            found.append((name, node))
            found.extend(_definitions(node, f"{name}."))
        else:
            found.extend(_definitions(node, prefix))
    return found


@functools.cache
def _too_long() -> dict[str, str]:
    """``path::qualname`` of every class and function over its limit, with its size."""
    found = {}
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node in _definitions(tree):
            limit = MAX_CLASS_LINES if isinstance(node, ast.ClassDef) else MAX_FUNCTION_LINES
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                found[f"{path.relative_to(ROOT).as_posix()}::{name}"] = f"{kind} of {lines} lines (limit {limit})"
    return found


def test_the_walk_sees_the_project_code():
    names = {name for path in _python_files() for name, _ in _definitions(ast.parse(path.read_text("utf-8")))}
    assert {"TableRotator", "TableRotator.run", "PeriodRouter", "ShardedTable", "compare_strategies"} <= names


def test_the_walk_sees_every_folder_the_repository_ships_or_runs_and_nothing_installed():
    files = {path.relative_to(ROOT).as_posix() for path in _python_files()}
    folders = {name.split("/")[0] for name in files}
    assert {"app.py", "cdk_ts", "lambdas", "tests", "examples", "bench", "scripts", "docs"} <= folders
    assert {"scripts/api_docs.py", "docs/snippets/new-app/app.py"} <= files
    assert not {name for name in files if name.startswith((".venv/", "node_modules/")) or "cdk.out" in name}


def test_no_class_over_300_lines_and_no_function_over_80_except_tables_of_data():
    allowed = _TABLES_OF_DATA.keys()
    unexplained = {name: size for name, size in _too_long().items() if name not in allowed}
    listed = "\n".join(f"  {name}: {size}" for name, size in sorted(unexplained.items()))
    assert not unexplained, f"split these into well-named parts (a table of data: add it to _TABLES_OF_DATA):\n{listed}"


def test_every_allowance_is_still_needed():
    too_long = _too_long()
    stale = sorted(name for name in _TABLES_OF_DATA if name not in too_long)
    assert not stale, f"no longer over the limit (or moved): remove from the allowance: {stale}"
