"""The contributing page's three walks are real: at most 8 modules each, each there, each reached from one before it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.imports import PACKAGES, imports_of, module_paths

ROOT = Path(__file__).resolve().parents[2]
#: The longest walk the page may show (issue 42: "at most 8 modules each").
MOST_MODULES = 8
_WALK = re.compile(
    r"^\*\*(?P<title>[^*]+)\*\* \(\d+ modules\):\n\n(?P<steps>(?:\d+\. .*\n(?: {3}.*\n)*)+)", re.MULTILINE
)
_STEP = re.compile(r"^\d+\. `(?P<path>[^`]+)`", re.MULTILINE)
_HANDLER = re.compile(r"\bcdk_ts_runtime\.handlers\.(\w+)\.handler\b")


def walks(page: str) -> dict[str, list[str]]:
    """Each walk of the page's "How to read this code" section: its title and the paths of its steps, in order."""
    section = page.split("## How to read this code", 1)[1].split("\n## ", 1)[0]
    found = {m["title"]: _STEP.findall(m["steps"]) for m in _WALK.finditer(section)}
    counts = dict(re.findall(r"^\*\*([^*]+)\*\* \((\d+) modules\)", section, re.MULTILINE))
    assert {title: len(steps) for title, steps in found.items()} == {t: int(n) for t, n in counts.items()}
    return found


def module_of(path: str) -> str:
    """The dotted module name of a path the page gives (``lambdas/cdk_ts_runtime/_periods.py``)."""
    for package, folder in PACKAGES.items():
        prefix = f"{folder.relative_to(ROOT)}/"
        if path.startswith(prefix):
            parts = [package, *Path(path[len(prefix):]).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise AssertionError(f"{path} is in neither cdk_ts/ nor lambdas/cdk_ts_runtime/")


def reached(earlier: list[str], module: str, modules: dict[str, Path]) -> bool:
    """Whether one of ``earlier`` imports ``module`` when it loads (itself, or through a package's face it
    imports), or names ``module`` as a Lambda function's handler."""
    for before in earlier:
        imported = imports_of(before, modules)
        faces = {target for target in imported if modules[target].name == "__init__.py"}
        if module in imported or any(module in imports_of(face, modules) for face in faces):
            return True
        handlers = _HANDLER.findall(modules[before].read_text())
        if module in {f"cdk_ts_runtime.handlers.{name}" for name in handlers}:
            return True
    return False


def walk_problems(page: str, root: Path = ROOT) -> list[str]:
    """What is wrong with the page's walks: too long, a module that is not there, or one nothing before it reaches."""
    modules = module_paths(PACKAGES)
    problems = []
    for title, paths in walks(page).items():
        if len(paths) > MOST_MODULES:
            problems.append(f"{title}: {len(paths)} modules, more than {MOST_MODULES}")
        names = []
        for path in paths:
            if not (root / path).is_file():
                problems.append(f"{title}: {path} does not exist")
                continue
            name = module_of(path)
            if names and not reached(names, name, modules):
                problems.append(f"{title}: nothing before {path} imports it or runs it")
            names.append(name)
    return problems


def test_the_contributing_page_has_three_walks_of_at_most_8_modules_each_step_reached_from_one_before():
    page = (ROOT / "docs" / "contributing.md").read_text()
    assert len(walks(page)) == 3
    assert walk_problems(page) == []


RUNTIME = "lambdas/cdk_ts_runtime/"


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        (["cdk_ts/rotation/tables.py", "lambdas/cdk_ts_runtime/_rotation/tiers.py"],
         "nothing before lambdas/cdk_ts_runtime/_rotation/tiers.py imports it or runs it"),
        (["cdk_ts/rotation/tables.py", "cdk_ts/rotation/nope.py"], "cdk_ts/rotation/nope.py does not exist"),
        ([f"{RUNTIME}handlers/rotation.py", f"{RUNTIME}_periods.py", f"{RUNTIME}_rotation/rotator.py",
          f"{RUNTIME}_rotation/config.py", f"{RUNTIME}_rotation/tiers.py", f"{RUNTIME}_rotation/report.py",
          f"{RUNTIME}_aws.py", f"{RUNTIME}_errors.py", f"{RUNTIME}_inputs.py"], "9 modules, more than 8"),
    ],
)
def test_the_check_finds_a_jump_a_missing_module_and_a_long_walk(steps, problem):
    listed = "".join(f"{n}. `{path}`: a step.\n" for n, path in enumerate(steps, start=1))
    page = f"## How to read this code\n\n**A walk** ({len(steps)} modules):\n\n{listed}\n## Layout\n"
    assert [p.removeprefix("A walk: ") for p in walk_problems(page)] == [problem]
