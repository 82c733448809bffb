"""A mypy configuration that follows the aws-cdk-lib modules some code reaches through its imports, and skips the rest.

Why: aws-cdk-lib's ``aws_cdk/__init__.py`` imports every one of its ~680 modules under ``typing.TYPE_CHECKING``
(at run time they load lazily), so any ``import aws_cdk`` makes mypy analyse all of them, MediaLive and QuickSight
included: about three quarters of a cold run's time on code that touches none of them. Every other module of the
package imports, for the types its signatures name, exactly the modules it needs, each on a line of its own
(``    import aws_cdk.aws_iam as _aws_iam_1f54b5e8``). Following those lines from the modules the code imports gives
every module whose types the code can reach; mypy reads those in full, as before, and sees the others as ``Any``.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable
from pathlib import Path

# `import aws_cdk.aws_x as y` and `from aws_cdk[.x] import a, b as c` anywhere in the code (examples in docstrings
# included: they only add modules)
_IMPORT = re.compile(r"^\s*(?:import (aws_cdk[\w.]*)\b|from (aws_cdk[\w.]*) import \(?([\w, ]+))", re.MULTILINE)
# the type-checking imports jsii writes into each module of the package
_GENERATED = re.compile(r"^\s+import (aws_cdk[\w.]*) as _\w+$", re.MULTILINE)


def package_dir() -> Path:
    """Where aws-cdk-lib's ``aws_cdk`` package is installed (found without importing it)."""
    spec = importlib.util.find_spec("aws_cdk")
    assert spec is not None and spec.submodule_search_locations, "aws-cdk-lib is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


def imported_modules(text: str, package: Path) -> set[str]:
    """The ``aws_cdk`` modules the Python ``text`` imports (``from aws_cdk import aws_s3`` names ``aws_cdk.aws_s3``)."""
    found = set()
    for module, base, names in _IMPORT.findall(text):
        found.add(module or base)
        for name in names.split(","):
            candidate = f"{base}.{name.split(' as ')[0].strip()}"
            if base and _source(package, candidate).is_file():
                found.add(candidate)
    return found


def reached_modules(texts: Iterable[str], package: Path | None = None) -> set[str]:
    """The ``aws_cdk`` modules the code in ``texts`` imports, and every module those import for their types."""
    package = package or package_dir()
    todo = {"aws_cdk"}.union(*(imported_modules(text, package) for text in texts))
    reached: set[str] = set()
    while todo:
        module = todo.pop()
        reached.add(module)
        todo |= set(_GENERATED.findall(_source(package, module).read_text())) - reached
    return reached


def config_following_only(modules: Iterable[str]) -> str:
    """A mypy configuration file's text: ``follow_imports = skip`` for ``aws_cdk``'s modules other than ``modules``."""
    return "[mypy]\n\n" + sections_following_only(modules)


def sections_following_only(modules: Iterable[str]) -> str:
    """The per-module sections of :func:`config_following_only`, to add to a configuration that has its ``[mypy]``.

    mypy applies a section naming a module before one whose pattern ends in ``.*`` (its configuration docs).
    """
    return (
        "[mypy-aws_cdk.*]\nfollow_imports = skip\n\n"
        f"[mypy-{','.join(sorted(modules))}]\nfollow_imports = silent\n"
    )


def installed_texts_importing_aws_cdk(site_packages: Path) -> list[str]:
    """The text of every installed module outside aws-cdk-lib that names ``aws_cdk`` (cdk_ts, cdk-nag, ...)."""
    texts = []
    for path in site_packages.rglob("*.py"):
        if path.relative_to(site_packages).parts[0] != "aws_cdk":
            text = path.read_text(errors="replace")
            if "aws_cdk" in text:
                texts.append(text)
    return texts


def _source(package: Path, module: str) -> Path:
    return package.parent.joinpath(*module.split("."), "__init__.py")
