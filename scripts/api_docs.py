"""Build the HTML API reference of ``cdk_ts`` and ``cdk_ts_runtime`` with pdoc (never committed: docs/api is ignored).

Usage::

    python scripts/api_docs.py                 # (re)write docs/api, then open docs/api/index.html
    python scripts/api_docs.py --output DIR    # write somewhere else (the test does this)

The reference documents the public surface: modules, classes, functions, signatures and docstrings. A module
with ``__all__`` shows those names only (``cdk_ts_runtime``'s ``__all__`` is the runtime's whole public face).
Private modules (names starting with ``_``) are left out, and so is the source code ("View Source"),
so a change inside a function body does not make the reference stale; a changed signature or
docstring does. The search index is always left for the browser to build (never precompiled with
Node.js, which pdoc does only when ``node`` is on the PATH), so the output is the same on every machine
with the same pdoc version. ``tests/docs/test_api_reference.py`` builds it and fails on docstring problems.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import re
import sys
from pathlib import Path

# Importing cdk_ts submodules starts the jsii runtime, which prints a Node.js end-of-life banner otherwise.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "api"
#: pdoc walks the submodules of these packages and skips private ones (``_defaults``, ``_aws``, ...).
MODULES = ("cdk_ts", "cdk_ts_runtime")


def public_modules() -> list[str]:
    """Every module of :data:`MODULES` and their subpackages whose dotted name has no part starting with ``_``.

    The runtime's public face is ``cdk_ts_runtime`` itself (its ``__all__``) and the Lambda entry points: of
    ``cdk_ts_runtime.handlers``, only the modules with a ``handler`` (their ``__all__`` names just that).
    """
    names = []
    for package in MODULES:
        module = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            if info.name.startswith("cdk_ts_runtime.handlers.") and not hasattr(
                importlib.import_module(info.name), "handler"
            ):
                continue  # machinery the entry points share (custom_resource), not an entry point
            names.append(info.name)
    return sorted(names)


def generate(output: Path) -> None:
    """Render the reference into ``output`` (created if missing; files pdoc no longer writes are removed)."""
    import pdoc.doc
    import pdoc.render

    # pdoc imports modules with subprocess.Popen patched out, which stops the jsii runtime behind aws_cdk;
    # modules imported here first are taken from sys.modules. pdoc.pdoc() would also follow __all__ when
    # looking for submodules (cdk_ts lists classes, not its modules), so the list is made here.
    names = public_modules()
    for name in names:
        module = importlib.import_module(name)
        # cdk_ts loads its constructs lazily (a module __getattr__); pdoc reads __all__ names from the
        # module __dict__ only, so resolve them here to document what `from cdk_ts import X` gives.
        for exported in getattr(module, "__all__", ()):
            if exported not in vars(module):
                setattr(module, exported, getattr(module, exported))
    # pdoc precompiles the search index with Node.js when it finds it, which makes search.js depend on
    # the machine; the uncompiled index is built by the browser instead and is the same everywhere.
    pdoc.render.precompile_index = lambda documents, _compile_js: json.dumps(documents)
    pdoc.render.configure(docformat="restructuredtext", show_source=False, search=True)
    # pdoc shows a value that equals an environment variable as "$NAME" (REGION = "us-east-1" became
    # "$AWS_REGION" wherever AWS_REGION is set); the documented values are constants, so show them as they are.
    os.environ["PDOC_DISPLAY_ENV_VARS"] = "1"
    modules = {name: pdoc.doc.Module.from_name(name) for name in names}
    output.mkdir(parents=True, exist_ok=True)
    for stale in _files(output):
        (output / stale).unlink()
    for name, module in modules.items():
        target = output / f"{name.replace('.', '/')}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_readable_unpack(pdoc.render.html_module(module, modules)).encode())
    (output / "index.html").write_bytes(pdoc.render.html_index(modules).encode())
    (output / "search.js").write_bytes(_readable_unpack(pdoc.render.search_index(modules)).encode())
    for directory in sorted(output.rglob("*"), reverse=True):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()


# Python 3.11 prints ``Unpack[Options]`` as ``*<class 'Options'>``; signatures with ``**options: Unpack[...]``
# would show that, so it is written the way the source spells it.
_UNPACK = re.compile(r"\*&lt;class &#x27;(.*?)&#x27;&gt;")


def _readable_unpack(html: str) -> str:
    return _UNPACK.sub(r"Unpack[\1]", html)


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} if root.is_dir() else set()


def main(argv: list[str] | None = None) -> int:
    """Write the reference into ``--output`` (default docs/api)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"target directory (default: {OUTPUT})")
    args = parser.parse_args(argv)
    generate(args.output)
    print(f"API reference written to {args.output}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
