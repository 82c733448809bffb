"""README.md is what cdk-ts is, the two commands, one example and links: short, and nothing on it can go stale.

Its code blocks are copies of docs snippet files (which tests/docs/test_snippets.py and test_new_app.py run),
and every relative link it has reaches a file of the repository (and a heading, for a page anchor).
"""

from __future__ import annotations

import re

from tests.support.docs import DOCS, ROOT, SNIPPETS

README = ROOT / "README.md"
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def slug(heading: str) -> str:
    """The anchor mkdocs' toc gives a heading (Python-Markdown's default slugify)."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_the_readme_is_at_most_200_lines():
    assert len(README.read_text().splitlines()) <= 200


def test_every_readme_block_is_a_snippet_file_the_tests_run():
    blocks = [body for _, body in _FENCE.findall(README.read_text())]
    assert blocks == [
        (SNIPPETS / "getting-started" / "two-commands.sh").read_text(),
        (SNIPPETS / "new-app" / "app.py").read_text(),
    ]


def test_every_relative_link_of_the_readme_resolves():
    broken = []
    for target in _LINK.findall(README.read_text()):
        if re.match(r"^[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path
        headings = re.findall(r"^#+ (.*)$", file.read_text(), re.MULTILINE) if file.is_file() else []
        if not file.exists() or (anchor and anchor not in {slug(h) for h in headings}):
            broken.append(target)
    assert not broken, f"README.md links to what does not exist: {broken}"


def test_the_slug_is_the_sites_anchor():
    assert slug("Grants and `bind`: one vocabulary") == "grants-and-bind-one-vocabulary"
    assert slug("Testing your code against DynamoDB's refusals") == "testing-your-code-against-dynamodbs-refusals"


def test_the_docs_cite_no_issue_of_this_repository_and_no_design_notes_it_does_not_have():
    # a user reads these without the project's issue tracker or its design notes (DESIGN.md is not in the
    # repository); sources of other projects (owner/repo#123) are citations and stay
    texts = [README, ROOT / "mkdocs.yml", ROOT / "scripts" / "api_docs.py", *DOCS.rglob("*.md"),
             *(p for p in SNIPPETS.rglob("*") if p.is_file())]
    cited = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path in texts
             for match in re.finditer(r"DESIGN\.md|\b[Ii]ssues? #?\d+|(?<![\w/.-])#\d+\b", path.read_text())]
    assert not cited, cited
