"""README "Using cdk-ts from a new CDK app": its blocks, run as written in a fresh folder, give a synthesized app.

The folder holds a copy of this repository named ``cdk-ts`` (what ``git clone`` would give); the shell
blocks run in order with ``bash -e``, the first in that folder and the rest in ``telemetry-app``, and the
block marked ``<!-- new-app: app.py -->`` is saved as ``telemetry-app/app.py``. ``python`` is this test
environment's interpreter (it has ``build``); the app's own venv gets cdk-ts from the wheel and its
dependencies from the configured package index.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
HEADING = "### Using cdk-ts from a new CDK app"
_MARKER = re.compile(r"^<!--\s*new-app:\s*(.*?)\s*-->\s*$")


def section_blocks(text: str) -> list[tuple[str, str, str]]:
    """``(marker, language, code)`` of each marked block in the section, in order."""
    start = text.index(HEADING)
    end = text.index("\n### ", start + len(HEADING))
    lines = text[start:end].splitlines()
    blocks, index = [], 0
    while index < len(lines):
        marker = _MARKER.match(lines[index])
        if marker:
            fence = lines[index + 1]
            assert fence.startswith("```"), f"a new-app marker must stand right above a block, not {fence!r}"
            body_end = lines.index("```", index + 2)
            blocks.append((marker.group(1), fence[3:].strip(), "\n".join(lines[index + 2:body_end]) + "\n"))
            index = body_end
        index += 1
    return blocks


def test_the_section_has_the_steps_the_app_and_the_synth():
    blocks = section_blocks(README.read_text())
    assert [(m, lang) for m, lang, _ in blocks] == [("step", "bash"), ("app.py", "python"), ("step", "bash")]
    pinned = json.loads((REPO / "package.json").read_text())["devDependencies"]["aws-cdk"]
    assert f"aws-cdk@{pinned}" in blocks[0][2], "the README pins the CDK CLI this repository's package.json pins"
    assert "LAMBDA_RUNTIME" in blocks[1][2]


@pytest.mark.slow
def test_the_new_app_blocks_run_verbatim_in_a_fresh_folder(tmp_path):
    setup, app, synth = section_blocks(README.read_text())
    shutil.copytree(
        REPO, tmp_path / "cdk-ts",
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "build", "dist", "cdk.out", "*.egg-info", "__pycache__", ".*_cache"
        ),
    )
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "CDK_OUTDIR"):
        env.pop(name, None)

    def bash(code: str, cwd: Path) -> None:
        done = subprocess.run(["bash", "-e", "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=1200, check=False)
        assert done.returncode == 0, f"{code}\nfailed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    bash(setup[2], tmp_path)
    project = tmp_path / "telemetry-app"
    (project / "app.py").write_text(app[2])
    bash(synth[2], project)

    template = json.loads((project / "cdk.out" / "Telemetry.template.json").read_text())
    functions = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    ingest = [f for f in functions if f["Properties"].get("Handler") == "handler.handler"]
    assert len(ingest) == 1
    assert ingest[0]["Properties"]["Environment"]["Variables"]["CDK_TS_TABLE_PREFIX"] == "readings"
    installed = subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-c", "import cdk_ts; print(cdk_ts.__file__)"],
        cwd=project, capture_output=True, text=True, check=True, env=env,
    )
    assert installed.stdout.startswith(str(project / ".venv")), "cdk-ts must come from the app's venv (the wheel)"
