"""The import graph of cdk_ts and cdk_ts_runtime, read from the source with ``ast`` (nothing is imported).

Only imports a module runs when it is loaded count (an import inside a function runs later, and one under
``if TYPE_CHECKING:`` never). ``from pkg import sub`` needs the module ``sub``; a module's own parent packages
are loading already when it runs, so they count only when it takes a name from one (``from pkg import NAME``).
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


def loaded_with(module: str, modules: dict[str, Path]) -> set[str]:
    """Every module of ours that loading ``module`` loads (its imports, theirs, and so on)."""
    loaded, todo = set(), [module]
    while todo:
        for target in imports_of(todo.pop(), modules) - loaded:
            loaded.add(target)
            todo.append(target)
    return loaded
