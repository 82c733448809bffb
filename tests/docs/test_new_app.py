"""The docs page "Using cdk-ts from a new CDK app" (docs/new-app.md), run as a user would: issue 42's proof.

A new app written from the docs, installed from a freshly built wheel, synthesizes cdk-nag clean, passes mypy
--strict and runs tests with the ``local_dynamodb`` fixture, with no package installed that the docs did not name.

Only the page is read, never the README: its blocks are the snippet files it includes, in the page's order. The
folder holds a copy of this repository named ``cdk-ts`` (what ``git clone`` would give); the shell steps run in
order with ``bash -e``, the first in that folder and the rest in ``telemetry-app``, and each Python file is saved
in ``telemetry-app`` under its own name (``app.py``, ``handler.py``, ``test_handler.py``). ``python`` is this test
environment's interpreter (it has ``build``); the app's own venv gets cdk-ts from the wheel, with the extras the
page names, and every dependency from the configured package index. The environment does not silence jsii's Node
end-of-life banner: the page must. One addition to the page: before the checks run, the mypy.ini it wrote gains
sections that skip the aws-cdk-lib modules nothing installed reaches (see ``skip_unreached_aws_cdk_modules``).
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

from tests.support.docs import DOCS, code, page_blocks
from tests.support.mypy_config import installed_texts_importing_aws_cdk, reached_modules, sections_following_only

REPO = Path(__file__).resolve().parents[2]
PAGE = DOCS / "new-app.md"
BANNER = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"  # jsii's end-of-life banner names the variable
VENV_SEED = {"pip", "setuptools"}  # what `python -m venv` puts in every venv (setuptools up to Python 3.11)

# Run in the app's venv: the installed distributions that are neither what the page installs by name (the wheel
# with its extras, mypy) nor required by those, following each requirement's extras and markers. pip's own
# vendored packaging reads the requirements: the venv holds only what the page put there.
UNNAMED = """
import json
from importlib import metadata
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

pending, needed = [("cdk-ts", ("nag", "testing")), ("mypy", ())], set()
while pending:
    name, extras = pending.pop()
    if (canonicalize_name(name), extras) in needed:
        continue
    needed.add((canonicalize_name(name), extras))
    for text in metadata.requires(name) or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": extra}) for extra in (*extras, "")):
            pending.append((requirement.name, tuple(sorted(requirement.extras))))
installed = {canonicalize_name(d.metadata["Name"]) for d in metadata.distributions()}
print(json.dumps(sorted(installed - {name for name, _ in needed})))
"""


def steps() -> list[str]:
    """The snippet files the page includes, in order."""
    return [block.include for block in page_blocks(PAGE)]


def test_the_page_has_the_steps_the_app_its_tests_and_the_checks():
    assert steps() == ["new-app/setup.sh", "new-app/app.py", "testing/handler.py", "testing/test_handler.py",
                       "new-app/synth.sh"]
    setup, app, _handler, tests, synth = (code(name) for name in steps())
    pinned = json.loads((REPO / "package.json").read_text())["devDependencies"]["aws-cdk"]
    assert f"aws-cdk@{pinned}" in setup, "the page pins the CDK CLI this repository's package.json pins"
    assert "-py3-none-any.whl[nag,testing]" in setup, "the extras that bring cdk-nag, and the fixture with pytest"
    assert "def test_" in tests and "local_dynamodb" in tests and "conftest" not in tests
    assert "LAMBDA_RUNTIME" in app
    assert "Validations.of(app).add_plugins(AwsSolutionsChecks(app))" in app
    assert "Aspects.of(" not in app, "the cdk-nag 2 form fails with cdk-nag 3 (aspect.visit is not a function)"
    assert f"export {BANNER}=20" in synth


@pytest.mark.slow
def test_the_new_app_steps_run_verbatim_synthesize_cdk_nag_clean_and_pass_its_tests_and_mypy_strict(tmp_path):
    setup, *python, synth = steps()
    shutil.copytree(
        REPO, tmp_path / "cdk-ts",
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "build", "dist", "cdk.out", "*.egg-info", "__pycache__", ".*_cache"
        ),
    )
    # PIP_COMPILE=no (pip's --no-compile): the page's installs skip byte-compiling aws-cdk-lib's 680 modules, about
    # 40 CPU s of which the app imports a few dozen; what is installed, and every step's result, stay the same.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "PIP_COMPILE": "no"}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "CDK_OUTDIR", BANNER):
        env.pop(name, None)

    def bash(script: str, cwd: Path) -> subprocess.CompletedProcess:
        # pip and npm from the index, a synth and mypy: several minutes on a loaded 2-core machine
        done = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=2400, check=False)
        assert done.returncode == 0, f"{script}\nfailed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    bash(code(setup), tmp_path)
    project = tmp_path / "telemetry-app"
    for name in python:
        (project / Path(name).name).write_text(code(name))
    skip_unreached_aws_cdk_modules(project, [code(name) for name in python])
    checked = bash(code(synth), project)

    # cdk-nag ran (from the [nag] extra) and found nothing: a finding fails the synth with its rule's name
    output = checked.stdout + checked.stderr
    assert "AwsSolutions-" not in output
    assert BANNER not in output and "end-of-life" not in output.lower(), output[-2000:]
    # the handler's tests passed on the fixture [testing] registers, and mypy --strict found nothing
    assert re.search(r"^3 passed", checked.stdout, re.MULTILINE), checked.stdout[-3000:]
    assert "Success: no issues found in 3 source files" in checked.stdout, checked.stdout[-3000:]
    installed = subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-c", "import cdk_nag, cdk_ts; print(cdk_ts.__file__)"],
        cwd=project, capture_output=True, text=True, check=True, env=env,
    )
    assert installed.stdout.startswith(str(project / ".venv")), "cdk-ts must come from the app's venv (the wheel)"
    unnamed = subprocess.run([str(project / ".venv" / "bin" / "python"), "-c", UNNAMED], cwd=project,
                             capture_output=True, text=True, check=True, env=env)
    assert set(json.loads(unnamed.stdout)) <= VENV_SEED, "installed, but neither named by the page nor needed"

    template = json.loads((project / "cdk.out" / "Telemetry.template.json").read_text())
    functions = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    ingest = [f for f in functions if f["Properties"].get("Handler") == "handler.handler"]
    assert len(ingest) == 1
    assert ingest[0]["Properties"]["Environment"]["Variables"]["CDK_TS_TABLE_PREFIX"] == "readings"


def skip_unreached_aws_cdk_modules(project: Path, app_texts: list[str]) -> None:
    """Add to the page's mypy.ini the sections that skip the aws-cdk-lib modules nothing installed reaches.

    ``import aws_cdk`` alone makes mypy analyse all ~680 modules of aws-cdk-lib, about 3 CPU minutes cold, for modules
    that neither the app nor anything it imports (cdk_ts, cdk-nag) reaches through its imports; mypy would see them
    only as ``Any`` anyway (tests/support/mypy_config.py). The modules reached are read in full, as before, so mypy
    --strict passes or fails the app's three files the same way; the test is a minute, not four.
    """
    (site_packages,) = (project / ".venv" / "lib").glob("python3.*/site-packages")
    texts = [*app_texts, *installed_texts_importing_aws_cdk(site_packages)]
    reached = reached_modules(texts, site_packages / "aws_cdk")
    assert {"aws_cdk.aws_dynamodb", "aws_cdk.aws_lambda"} <= reached, sorted(reached)[:20]
    with (project / "mypy.ini").open("a") as config:
        config.write("\n" + sections_following_only(reached))


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
