"""The docs page "Using cdk-ts from a new CDK app" (docs/new-app.md), run as a user would: cdk-nag clean.

Only the page is read, never the README: its blocks are the snippet files it includes, in the page's order. The
folder holds a copy of this repository named ``cdk-ts`` (what ``git clone`` would give); the shell steps run in
order with ``bash -e``, the first in that folder and the rest in ``telemetry-app``, and the Python file is saved
as ``telemetry-app/app.py``. ``python`` is this test environment's interpreter (it has ``build``); the app's own
venv gets cdk-ts from the wheel, with the ``[nag]`` extra as the page installs it, and the dependencies from the
configured package index. The environment does not silence jsii's Node end-of-life banner: the page must.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs import DOCS, code, page_blocks

REPO = Path(__file__).resolve().parents[2]
PAGE = DOCS / "new-app.md"
BANNER = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"  # jsii's end-of-life banner names the variable


def steps() -> list[str]:
    """The snippet files the page includes, in order."""
    return [block.include for block in page_blocks(PAGE)]


def test_the_page_has_the_steps_the_app_and_the_synth():
    assert steps() == ["new-app/setup.sh", "new-app/app.py", "new-app/synth.sh"]
    setup, app, synth = (code(name) for name in steps())
    pinned = json.loads((REPO / "package.json").read_text())["devDependencies"]["aws-cdk"]
    assert f"aws-cdk@{pinned}" in setup, "the page pins the CDK CLI this repository's package.json pins"
    assert "-py3-none-any.whl[nag]" in setup, "the wheel is installed with the extra that brings cdk-nag"
    assert "LAMBDA_RUNTIME" in app
    assert "Validations.of(app).add_plugins(AwsSolutionsChecks(app))" in app
    assert "Aspects.of(" not in app, "the cdk-nag 2 form fails with cdk-nag 3 (aspect.visit is not a function)"
    assert f"export {BANNER}=20" in synth


@pytest.mark.slow
def test_the_new_app_steps_run_verbatim_in_a_fresh_folder_and_pass_cdk_nag(tmp_path):
    setup, app, synth = steps()
    shutil.copytree(
        REPO, tmp_path / "cdk-ts",
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "build", "dist", "cdk.out", "*.egg-info", "__pycache__", ".*_cache"
        ),
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "CDK_OUTDIR", BANNER):
        env.pop(name, None)

    def bash(script: str, cwd: Path) -> subprocess.CompletedProcess:
        done = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=1200, check=False)
        assert done.returncode == 0, f"{script}\nfailed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    bash(code(setup), tmp_path)
    project = tmp_path / "telemetry-app"
    (project / "app.py").write_text(code(app))
    synthesized = bash(code(synth), project)

    # cdk-nag ran (from the [nag] extra) and found nothing: a finding fails the synth with its rule's name
    output = synthesized.stdout + synthesized.stderr
    assert "AwsSolutions-" not in output
    assert BANNER not in output and "end-of-life" not in output.lower(), output[-2000:]
    installed = subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-c", "import cdk_nag, cdk_ts; print(cdk_ts.__file__)"],
        cwd=project, capture_output=True, text=True, check=True, env=env,
    )
    assert installed.stdout.startswith(str(project / ".venv")), "cdk-ts must come from the app's venv (the wheel)"

    template = json.loads((project / "cdk.out" / "Telemetry.template.json").read_text())
    functions = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    ingest = [f for f in functions if f["Properties"].get("Handler") == "handler.handler"]
    assert len(ingest) == 1
    assert ingest[0]["Properties"]["Environment"]["Variables"]["CDK_TS_TABLE_PREFIX"] == "readings"


@pytest.mark.slow  # the page's claim about cdk-nag 2's form, checked against the cdk-nag 3 this project installs
def test_the_cdk_nag_2_aspects_form_fails_with_cdk_nag_3(tmp_path):
    script = (
        "from aws_cdk import App, Aspects, Stack\nfrom aws_cdk import aws_sqs as sqs\n"
        "from cdk_nag import AwsSolutionsChecks\n"
        "app = App()\nsqs.Queue(Stack(app, 'S'), 'Q')\nAspects.of(app).add(AwsSolutionsChecks())\napp.synth()\n"
    )
    env = {**os.environ, "CDK_OUTDIR": str(tmp_path / "out"), BANNER: "20"}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode != 0
    assert "aspect.visit is not a function" in done.stderr
