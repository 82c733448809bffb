"""aws-cdk-lib's built-in CloudFormation Validate finds nothing in the sample app's template.

The rest of the suite turns the check off (``CDK_VALIDATION=false`` in tests/conftest.py): it starts a WebAssembly
engine in every process that synthesizes, and without the ``@aws-cdk/core:validateAgainstDefaultRules`` flag its
findings are warnings that fail no synth. Here it runs as ``cdk synth`` runs it, on the sample app with cdk.json's
context and cdk-nag, beside a template it must fault, so a check that stopped running would fail this test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # one synth with the WebAssembly engine: about 20 CPU s

ROOT = Path(__file__).resolve().parents[2]

# argv: the sample app's output folder, the faulty app's output folder
SYNTH = """
import json, sys
from aws_cdk import App, CfnResource, Stack
import app as sample
context = json.load(open("cdk.json"))["context"]
sample.build_app(App(outdir=sys.argv[1], context=context)).synth()
faulty = App(outdir=sys.argv[2])
CfnResource(Stack(faulty, "Faulty"), "Bucket", type="AWS::S3::Bucket", properties={"BucketNamee": "x"})
faulty.synth()
"""


def findings(outdir: Path) -> list[str]:
    """The rule names of every violation in a cloud assembly's validation-report.json."""
    report = json.loads((outdir / "validation-report.json").read_text())
    return [violation["ruleName"] for plugin in report["pluginReports"] for violation in plugin["violations"]]


def test_the_sample_app_passes_cloudformation_validate_which_faults_an_unknown_property(tmp_path):
    env = {name: value for name, value in os.environ.items() if name != "CDK_VALIDATION"}
    done = subprocess.run([sys.executable, "-c", SYNTH, str(tmp_path / "sample"), str(tmp_path / "faulty")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert findings(tmp_path / "faulty") == ["F3002"], "the check ran: an unknown property is schema rule F3002"
    assert findings(tmp_path / "sample") == [], done.stderr[-3000:]
    assert done.stderr.count("Template validation found issues") == 1, done.stderr[-3000:]  # the faulty app's
