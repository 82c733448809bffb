"""README.md's ```python blocks: where each is, the heading above it, the markers before it, and running one.

For the README tests (``tests/docs/test_readme.py``) and the archive recipes' tests
(``tests/runtime/test_archive_readers.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!--\s*([\w-]+):\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, the heading above it and the markers right before it."""

    index: int
    line: int
    heading: str
    code: str
    markers: dict[str, str] = field(default_factory=dict)

    @property
    def test_id(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.heading.lower()).strip("-")
        return f"{self.index:02d}-{slug}"

    @property
    def is_construct(self) -> bool:
        return re.search(r"^\s*(from|import) aws_cdk\b", self.code, re.MULTILINE) is not None

    def setups(self) -> list[str]:
        value = self.markers.get("readme-test", "")
        return [name for name in value.removeprefix("setup=").split(",") if name] if value else []


def readme_blocks(text: str) -> list[Block]:
    """The ```python blocks of ``text`` in order; headings and markers inside other fences are ignored."""
    blocks: list[Block] = []
    heading, fence, start, body, pending = "", None, 0, [], {}
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is not None:
            if line.strip() == "```":
                if fence == "python":
                    blocks.append(Block(len(blocks), start, heading, "\n".join(body) + "\n", pending))
                fence, pending = None, {}
            elif fence == "python":
                body.append(line)
        elif opened:
            fence, start, body = opened.group(1), number, []
            if fence != "python":
                pending = {}
        elif line.startswith("#"):
            heading, pending = line.lstrip("#").strip(), {}
        elif (marker := _MARKER.match(line)) is not None:
            pending = {**pending, marker.group(1): marker.group(2)}
        elif line.strip():
            pending = {}
    return blocks


BLOCKS = readme_blocks(README.read_text())


def run(block: Block) -> dict:
    """Execute ``block`` in a fresh namespace (as a script: ``__name__ == "__main__"``); returns the namespace."""
    namespace: dict = {"__name__": "__main__"}
    exec(compile(block.code, f"README.md:{block.line}", "exec"), namespace)  # noqa: S102 - the point of the test
    return namespace


def marked(kind: str) -> Block:
    """The one block marked ``<!-- user-handler: kind -->``."""
    found = [b for b in BLOCKS if b.markers.get("user-handler") == kind]
    assert len(found) == 1, f"README.md needs one block marked <!-- user-handler: {kind} -->, found {len(found)}"
    return found[0]
