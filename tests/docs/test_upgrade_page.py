"""The upgrade page lists every entry of the registry of deprecations, as it is: the page cannot drift from the code.

``docs/upgrade.md`` holds one table per release that removes names; each table must be exactly the rows this test
renders from ``cdk_ts_runtime._deprecations.REGISTRY`` (a failure prints the table to paste).
"""

from __future__ import annotations

import re
from itertools import groupby

import pytest
import yaml

from cdk_ts_runtime._deprecations import REGISTRY, Deprecation
from tests.support.docs import ROOT

PAGE = ROOT / "docs" / "upgrade.md"
HEADER = "| Old | Use instead | Kind |\n|---|---|---|\n"
_CODE = re.compile(r"[\w.]+")


def row(entry: Deprecation) -> str:
    """One entry as the page's table row: the old name as code, the replacement as code when it is one name."""
    new = f"`{entry.new}`" if _CODE.fullmatch(entry.new) else entry.new
    return f"| `{entry.old}` | {new} | {entry.kind} |"


def tables() -> dict[str, str]:
    """The heading and table the page holds for each release that removes names, in the registry's order."""
    by_release = groupby(sorted(REGISTRY, key=lambda e: e.removed_in), key=lambda e: e.removed_in)
    rendered = {}
    for release, entries in by_release:
        listed = list(entries)
        heading = f"## Removed in {release}" if listed[0].removed else f"## Deprecated, removed in {release}"
        rendered[heading] = HEADER + "\n".join(row(entry) for entry in listed) + "\n"
    return rendered


def test_the_registry_has_a_removed_and_a_kept_release():
    assert {"## Removed in 0.3.0", "## Deprecated, removed in 0.4.0"} <= set(tables())


@pytest.mark.parametrize("heading", list(tables()))
def test_the_page_holds_each_release_s_table_exactly(heading):
    page = PAGE.read_text()
    assert f"\n{heading}\n" in page, f"docs/upgrade.md has no heading {heading!r}"
    section = page.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    table = "".join(line + "\n" for line in section.splitlines() if line.startswith("|"))
    expected = tables()[heading]
    assert table == expected, f"paste this table under {heading!r} in docs/upgrade.md:\n\n{expected}"


def test_the_table_check_can_fail():
    entry = REGISTRY[0]
    assert row(entry) in tables()["## Removed in 0.3.0"]
    assert row(Deprecation(entry.old, "something else", entry.removed_in, entry.kind)) not in PAGE.read_text()


def test_the_page_is_in_the_site_s_navigation():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "#"))
    pages = re.findall(r"[\w/-]+\.md", str(config["nav"]))
    assert "upgrade.md" in pages
