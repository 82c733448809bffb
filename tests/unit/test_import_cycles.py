"""No import cycle in cdk_ts or cdk_ts_runtime: each module can be read after the ones it imports.

The graph is built from the source with ``ast``, as Python runs it: only imports a module runs when it is loaded
count (an import inside a function runs later, and one under ``if TYPE_CHECKING:`` never). ``from pkg import
sub`` needs the module ``sub``; a module's own parent packages are loading already when it runs, so they count
only when it takes a name from one (``from pkg import NAME``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Each import name and the folder that holds it.
PACKAGES = {"cdk_ts": ROOT / "cdk_ts", "cdk_ts_runtime": ROOT / "lambdas" / "cdk_ts_runtime"}


def module_paths(packages: dict[str, Path]) -> dict[str, Path]:
    """Every module of ``packages`` by dotted name (a package by its ``__init__.py``)."""
    modules = {}
    for name, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [name, *path.relative_to(folder).with_suffix("").parts]
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _load_time_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is loaded: the top level, ``if``/``try`` blocks included."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _load_time_imports(node.body)
            yield from _load_time_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _load_time_imports(block)


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest module of ours that ``name`` is or lies in (``cdk_ts.archive.X`` -> ``cdk_ts.archive``)."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or None


def imports_of(module: str, modules: dict[str, Path]) -> set[str]:
    """The modules of ours that ``module`` needs loaded before its own body can finish."""
    path = modules[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    needed: set[tuple[str, bool]] = set()  # (module, whether a name is taken from it)
    for node in _load_time_imports(ast.parse(path.read_text(), str(path)).body):
        if isinstance(node, ast.Import):
            needed.update((alias.name, False) for alias in node.names)
            continue
        source = node.module or ""
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            source = ".".join([*base, *([node.module] if node.module else [])])
        for alias in node.names:
            sub = f"{source}.{alias.name}"
            needed.add((sub, False) if sub in modules else (source, True))
    edges = set()
    for name, takes_a_name in needed:
        target = _known(name, modules)
        if target is None or target == module:
            continue
        # loading a.b.c loads a and a.b first; the ones that are this module's own parents are loading already
        chain = target.split(".")
        for depth in range(1, len(chain) + 1):
            parent = ".".join(chain[:depth])
            own_parent = module.startswith(parent + ".")
            if parent in modules and parent != module and (not own_parent or (parent == target and takes_a_name)):
                edges.add(parent)
    return edges


def import_cycles(modules: dict[str, Path]) -> list[list[str]]:
    """Each set of modules that import one another, directly or around a loop (Tarjan's strongly connected
    components of more than one module, or a module that imports itself)."""
    graph = {module: imports_of(module, modules) for module in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1 or module in graph[module]:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def test_no_module_of_cdk_ts_or_cdk_ts_runtime_is_in_an_import_cycle():
    modules = module_paths(PACKAGES)
    assert len(modules) > 100, "few modules found: this test would prove little"
    assert import_cycles(modules) == []


def loaded_with(module: str, modules: dict[str, Path]) -> set[str]:
    """Every module of ours that loading ``module`` loads (its imports, theirs, and so on)."""
    loaded, todo = set(), [module]
    while todo:
        for target in imports_of(todo.pop(), modules) - loaded:
            loaded.add(target)
            todo.append(target)
    return loaded


def test_the_compaction_loads_nothing_of_the_rotation():
    # both take their reference time from the scheduled event: the shared reading lives in _periods
    modules = module_paths(PACKAGES)
    for handler in ("cdk_ts_runtime.handlers.compaction", "cdk_ts_runtime.handlers.compaction_partition"):
        loaded = loaded_with(handler, modules)
        assert "cdk_ts_runtime._periods" in loaded
        assert sorted(m for m in loaded if m.startswith("cdk_ts_runtime._rotation")) == []


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return module_paths({"pkg": tmp_path / "pkg"})


def test_the_check_finds_a_cycle_through_a_package_s_face_and_around_three_modules(tmp_path):
    modules = _package(tmp_path, {
        "__init__.py": "from pkg.a import A\n",
        "a.py": "from pkg import helper\nA = 1\n",  # a submodule: no cycle
        "helper.py": "try:\n    from pkg import A\nexcept ImportError:\n    pass\n",  # a name of the face: a cycle
        "x.py": "import pkg.y\n", "y.py": "from pkg.z import Z\n", "z.py": "if True:\n    from pkg import x\nZ = 1\n",
    })
    assert import_cycles(modules) == [["pkg", "pkg.a", "pkg.helper"], ["pkg.x", "pkg.y", "pkg.z"]]


def test_imports_for_type_checkers_and_inside_functions_are_no_cycle(tmp_path):
    modules = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg.b import B\nA = 1\n",
        "b.py": (
            "from typing import TYPE_CHECKING\nimport typing\n"
            "if TYPE_CHECKING:\n    from pkg.a import A\n"
            "if typing.TYPE_CHECKING:\n    import pkg.a\nelse:\n    import json\n"
            "def later():\n    from pkg.a import A\n    return A\nB = 1\n"
        ),
        "c.py": "from . import a\nfrom .b import B\n",
    })
    assert import_cycles(modules) == []
    assert imports_of("pkg.c", modules) == {"pkg.a", "pkg.b"}
