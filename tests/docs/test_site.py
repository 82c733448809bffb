"""The docs site builds with ``mkdocs build --strict``: every internal link and anchor resolves, every page is
in the nav, every snippet include exists, every docstring renders, and the API reference documents exactly the
public names. External links (https://...) are not checked: the build runs offline.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.sessions import once_per_session

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml")]
sys.path.insert(0, str(ROOT / "scripts"))
import api_docs  # noqa: E402 - scripts/ is no package: the mkdocs hook is loaded by path, as mkdocs loads it


def build(site: Path, config: Path | None = None) -> subprocess.CompletedProcess:
    command = [*MKDOCS[:-1], str(config or ROOT / "mkdocs.yml"), "--site-dir", str(site)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory, worker_id) -> Path:
    """The site ``mkdocs build --strict`` wrote: built once a session (~8 CPU s), whichever workers run these tests."""
    out, done = once_per_session(tmp_path_factory, worker_id, "site", strict_build)
    assert done["returncode"] == 0, f"mkdocs build --strict failed:\n{done['stderr'][-5000:]}"
    warnings = [line for line in done["stderr"].splitlines() if line.startswith("WARNING")]
    assert not warnings, "\n".join(warnings)
    return out


def strict_build(out: Path) -> dict:
    """The build into ``out``: its exit code and what it printed on stderr."""
    done = build(out)
    return {"returncode": done.returncode, "stderr": done.stderr}


def test_the_strict_build_writes_every_page(site):
    pages = sorted(p.relative_to(ROOT / "docs").with_suffix(".html").as_posix()
                   for p in (ROOT / "docs").rglob("*.md") if "snippets" not in p.parts)
    for page in [*pages, "api/cdk_ts.html", "api/cdk_ts_runtime.html"]:
        assert (site / page).is_file(), f"the build wrote no {page}"


def test_snippets_are_included_as_their_text(site):
    html = (site / "constructs" / "stream-archiver.html").read_text()
    assert "--8&lt;--" not in html and "--8<--" not in html
    assert "aws s3 sync" in html  # docs/snippets/stream-archiver/sync.sh, included


def test_the_construct_reference_documents_exactly_cdk_ts_all(site):
    import cdk_ts

    html = (site / "api" / "cdk_ts.html").read_text()
    documented = set(re.findall(r'<h2 id="cdk_ts\.(\w+)"', html))
    assert documented == set(cdk_ts.__all__), (
        f"missing: {sorted(set(cdk_ts.__all__) - documented)}; extra: {sorted(documented - set(cdk_ts.__all__))}"
    )


def test_the_runtime_reference_documents_its_public_names(site):
    import cdk_ts_runtime

    html = (site / "api" / "cdk_ts_runtime.html").read_text()
    expected = {f"cdk_ts_runtime.{n}" for n in cdk_ts_runtime.__all__}
    documented = set(re.findall(r'<h2 id="(cdk_ts_runtime\.\w+)"', html))
    assert documented == expected
    assert "cdk_ts_runtime.handlers" not in documented and "cdk_ts_runtime._aws" not in documented


def test_public_names_come_from_the_literal_all(tmp_path, monkeypatch):
    init = tmp_path / "__init__.py"
    init.write_text('"""A package."""\n__all__ = ["B", "a"]\n')
    monkeypatch.setitem(api_docs.PACKAGES, "cdk_ts", init)
    assert api_docs.public_names("cdk_ts") == ["B", "a"]
    assert [line for line in api_docs.page("cdk_ts").splitlines() if line.startswith(":::")] == [
        "::: cdk_ts.a", "::: cdk_ts.B",
    ]
    init.write_text('"""No list."""\n')
    with pytest.raises(SystemExit, match="no literal __all__"):
        api_docs.page("cdk_ts")


def test_a_broken_anchor_fails_the_build(tmp_path):
    # the same configuration, with one page linking to an anchor no page has
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the other](other.md#no-such-heading).\n")
    (docs / "other.md").write_text("# Other\n\n## A heading\n")
    config = tmp_path / "mkdocs.yml"
    text = (ROOT / "mkdocs.yml").read_text()
    text = re.sub(r"(?ms)^nav:.*?(?=^\S)", "", text)
    text = re.sub(r"(?ms)^hooks:.*?(?=^\S)", "", text)
    text = re.sub(r"(?ms)^plugins:.*", "plugins:\n  - search\n", text)
    text = text.replace("docs_dir: docs", f"docs_dir: {docs}")
    text = text.replace("base_path: [docs/snippets]", f"base_path: [{docs}]")
    config.write_text(text)
    done = build(tmp_path / "site", config)
    assert done.returncode != 0
    assert "no-such-heading" in done.stderr


class _WorkerTemp:
    """What once_per_session reads of a worker's tmp_path_factory: its own folder under the session's."""

    def __init__(self, session: Path, worker: str) -> None:
        self._folder = session / f"popen-{worker}"

    def getbasetemp(self) -> Path:
        return self._folder


def test_the_site_is_built_once_for_all_workers_and_again_only_after_a_failure(tmp_path):
    made = []

    def make(folder: Path) -> dict:
        made.append(folder)
        if len(made) == 1:
            raise RuntimeError("the first build broke")
        (folder / "index.html").write_text("built")
        return {"returncode": 0, "build": len(made)}

    with pytest.raises(RuntimeError):
        once_per_session(_WorkerTemp(tmp_path, "gw0"), "gw0", "site", make)
    first = once_per_session(_WorkerTemp(tmp_path, "gw1"), "gw1", "site", make)
    second = once_per_session(_WorkerTemp(tmp_path, "gw0"), "gw0", "site", make)
    assert first == second == (tmp_path / "site", {"returncode": 0, "build": 2})
    assert made == [tmp_path / "site", tmp_path / "site"] and (tmp_path / "site" / "index.html").read_text() == "built"
