"""Copies each docs snippet file into the page blocks that show it, so a page reads whole without mkdocs.

A code block on a page (docs/**/*.md) is the copy of one file under docs/snippets/, named by the HTML comment on
the line above its fence (hidden on GitHub and in the site)::

    <!-- snippet: getting-started/install-wheel.sh -->
    ```bash
    ...the file's text...
    ```

The file is the one source: tests/docs/test_snippets.py runs it and fails when a page's copy differs from it.
After editing a snippet, run ``python scripts/docs_snippets.py`` to rewrite the copies; ``--check`` only lists the
stale ones (exit 1), as the tests do.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SNIPPETS = DOCS / "snippets"
MARKER = re.compile(r"^<!-- snippet: (\S+) -->$")
FENCE = re.compile(r"^(`{3,}|~{3,})[\w+-]*\s*$")


def body(name: str) -> list[str]:
    """The lines of the snippet ``name`` as its page block shows them."""
    return (SNIPPETS / name).read_text().rstrip("\n").splitlines()


def synced(text: str) -> tuple[str, list[str]]:
    """``text`` (a page) with every marked block replaced by its snippet file, and the names whose copy changed."""
    lines, out, changed, index = text.splitlines(), [], [], 0
    while index < len(lines):
        line = lines[index]
        out.append(line)
        index += 1
        marker = MARKER.match(line)
        if not marker or index >= len(lines) or not FENCE.match(lines[index]):
            continue
        fence = FENCE.match(lines[index]).group(1)
        end = next((i for i in range(index + 1, len(lines)) if lines[i].strip() == fence), None)
        if end is None:
            raise SystemExit(f"a fence after <!-- snippet: {marker.group(1)} --> that never closes")
        new = body(marker.group(1))
        if lines[index + 1:end] != new:
            changed.append(marker.group(1))
        out.extend([lines[index], *new, lines[end]])
        index = end + 1
    return "\n".join(out) + "\n", changed


def main(argv: list[str]) -> int:
    """Rewrite every page's copies (or, with ``--check``, list the stale ones); 1 when one is stale in a check."""
    check = "--check" in argv
    stale = []
    for page in sorted(p for p in DOCS.rglob("*.md") if SNIPPETS not in p.parents):
        text, changed = synced(page.read_text())
        stale += [f"{page.relative_to(ROOT)}: {name}" for name in changed]
        if changed and not check:
            page.write_text(text)
    for entry in stale:
        print(("stale copy of " if check else "rewrote ") + entry)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
