"""The docs site's pages (docs/**/*.md) and the snippet files (docs/snippets/) their code blocks show.

Every fenced block of a page is a copy of one file under docs/snippets/, named by the comment
``<!-- snippet: path -->`` on the line above the fence (scripts/docs_snippets.py writes the copies, so a page
reads whole on GitHub too); ``tests/docs/test_snippets.py`` runs each file and fails on a copy that differs, and
``tests/runtime/test_archive_readers.py``, ``tests/runtime/test_compacted_readers.py`` and
``tests/e2e/test_runtime_layer_user_function.py`` run some of them again with closer checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPETS = DOCS / "snippets"
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)\s*$")
_MARKER = re.compile(r"^<!-- snippet: (\S+) -->$")


@dataclass(frozen=True)
class PageBlock:
    """One fenced block of a page: where it is, its language and its lines."""

    page: Path
    line: int
    language: str
    body: tuple[str, ...]
    include: str | None = None  # the snippet the block copies, named by the marker above its fence

    def where(self) -> str:
        """``docs/page.md:line``."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """Every Markdown page of the site (docs/, without the snippets)."""
    return sorted(p for p in DOCS.rglob("*.md") if SNIPPETS not in p.parents)


def page_blocks(page: Path) -> list[PageBlock]:
    """The fenced blocks of ``page``, in order."""
    blocks, fence, start, language, body, previous, marked = [], None, 0, "", [], "", None
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        if fence is None:
            opened = _FENCE.match(line)
            if opened:
                fence, start, language, body = opened.group(1), number, opened.group(2), []
                marked = _MARKER.match(previous)
        elif line.strip() == fence:
            blocks.append(PageBlock(page, start, language, tuple(body), marked.group(1) if marked else None))
            fence = None
        else:
            body.append(line)
        previous = line
    assert fence is None, f"{page}:{start}: a fence that never closes"
    return blocks


def included() -> dict[str, list[PageBlock]]:
    """Snippet name -> the page blocks that show it."""
    found: dict[str, list[PageBlock]] = {}
    for page in pages():
        for block in page_blocks(page):
            if block.include:
                found.setdefault(block.include, []).append(block)
    return found


def snippets() -> list[str]:
    """Every file under docs/snippets, by its name relative to that folder."""
    return sorted(p.relative_to(SNIPPETS).as_posix() for p in SNIPPETS.rglob("*") if p.is_file()
                  and "__pycache__" not in p.parts)


def code(name: str) -> str:
    """The text of the snippet ``name`` (``stream-archiver/read_duckdb.py``)."""
    path = SNIPPETS / name
    assert path.is_file(), f"no snippet docs/snippets/{name}"
    return path.read_text()


def is_construct(name: str) -> bool:
    """Whether the Python snippet ``name`` is construct code (it imports aws_cdk)."""
    return re.search(r"^\s*(from|import) aws_cdk\b", code(name), re.MULTILINE) is not None


def run(name: str) -> dict:
    """Execute the snippet ``name`` in a fresh namespace (as a script: ``__name__ == "__main__"``); its namespace."""
    namespace: dict = {"__name__": "__main__"}
    exec(compile(code(name), f"docs/snippets/{name}", "exec"), namespace)  # noqa: S102 - the point of the test
    return namespace
