"""The docs site's API reference: one page per import name, documenting exactly the names of its ``__all__``.

mkdocs loads this file as a hook (``hooks:`` in mkdocs.yml). Its ``on_files`` adds the generated pages
``api/cdk_ts.md`` and ``api/cdk_ts_runtime.md`` to the build: they are never written to docs/ and never
committed. Each page holds one mkdocstrings entry (``::: cdk_ts.RotatingTimeSeriesTables``) per public name,
rendered from the docstrings and signatures by griffe, which reads the source without importing it (so
the build does not start the jsii runtime and takes seconds).

The public names are read from each package's ``__init__.py`` (its literal ``__all__``), so the reference
and the deprecation promise cover the same list.

Usage::

    python scripts/api_docs.py            # print the generated pages' Markdown
    .venv/bin/mkdocs build --strict       # the whole site, reference included, into build/site
"""

from __future__ import annotations

import ast
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Import name -> its ``__init__.py``.
PACKAGES = {
    "cdk_ts": ROOT / "cdk_ts" / "__init__.py",
    "cdk_ts_runtime": ROOT / "lambdas" / "cdk_ts_runtime" / "__init__.py",
}
_INTRO = {
    "cdk_ts": "The construct side (`aws_cdk`): every name `from cdk_ts import ...` gives (`cdk_ts.__all__`).",
    "cdk_ts_runtime": "The runtime side (standard library and boto3 only): every name of `cdk_ts_runtime.__all__`.",
}


def public_names(package: str) -> list[str]:
    """The literal ``__all__`` of ``package``'s ``__init__.py``; exits the build when it has none."""
    tree = ast.parse(PACKAGES[package].read_text())
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return list(ast.literal_eval(node.value))
    raise SystemExit(f"{PACKAGES[package]} has no literal __all__: the API reference documents exactly that list")


def page(package: str) -> str:
    """The Markdown of ``package``'s reference page."""
    names = public_names(package)
    lines = [f"# `{package}`", "", _INTRO[package], ""]
    return "\n".join(lines + [f"::: {package}.{name}\n" for name in sorted(names, key=str.lower)])


def typed_dict_docstrings() -> set[str]:
    """``path:line`` of the docstring of every TypedDict class in the two packages.

    A TypedDict's keys are documented as ``:param key:`` entries (the keyword options they type), which
    griffe's Sphinx parser reports as parameters missing from a signature.
    """
    classes = []  # (location of the docstring, class name, names of its bases)
    for path in [*(ROOT / "cdk_ts").rglob("*.py"), *(ROOT / "lambdas" / "cdk_ts_runtime").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and ast.get_docstring(node) is not None:
                bases = {getattr(base, "id", getattr(base, "attr", None)) for base in node.bases}
                classes.append((f"{path.relative_to(ROOT).as_posix()}:{node.body[0].lineno}", node.name, bases))
    typed = {"TypedDict"}  # a TypedDict's subclasses are TypedDicts too (RotationOptions(PeriodTableOptions))
    while grown := {name for _, name, bases in classes if bases & typed} - typed:
        typed |= grown
    return {location for location, name, _ in classes if name in typed}


class _TypedDictKeys(logging.Filter):
    """Drops griffe's "no such parameter" warnings for a TypedDict's documented keys, and nothing else."""

    def __init__(self) -> None:
        super().__init__()
        self.locations = typed_dict_docstrings()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage().removeprefix("griffe: ")
        location = message.split(": ", 1)[0]
        unknown = "does not appear in the function signature" in message or "No matching parameter" in message
        return not (unknown and location in self.locations)


def on_config(config):
    """mkdocs hook: keep the strict build for every griffe warning but a TypedDict's documented keys."""
    logging.getLogger("mkdocs.plugins.griffe").addFilter(_TypedDictKeys())
    return config


def on_files(files, config):
    """mkdocs hook: add the generated reference pages to the site's files."""
    from mkdocs.structure.files import File

    for package in PACKAGES:
        files.append(File.generated(config, f"api/{package}.md", content=page(package)))
    return files


def main() -> int:
    """Print the generated pages."""
    for package in PACKAGES:
        print(page(package))
    return 0


if __name__ == "__main__":
    sys.exit(main())
