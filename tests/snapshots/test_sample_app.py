"""The synthesized sample app: cdk-nag clean with reasoned acknowledgements, and a reviewed snapshot."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import App
from syrupy.extensions.json import JSONSnapshotExtension

import app as sample_app
from tests.support.nag import new_app, unacknowledged_findings

REPO = Path(__file__).resolve().parents[2]
ASSET_HASH = re.compile(r"[0-9a-f]{64}")


def cdk_json_context() -> dict:
    return json.loads((REPO / "cdk.json").read_text())["context"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The sample app as `cdk synth` builds it: cdk.json context, no account or region."""
    app = App(outdir=str(tmp_path_factory.mktemp("cdk.out")), context=cdk_json_context())
    sample_app.build_app(app, checks=False)
    return app


@pytest.mark.slow  # cdk-nag over the whole sample app: 30-40 s
def test_sample_app_has_no_unacknowledged_cdk_nag_findings():
    app = new_app(context=cdk_json_context())
    sample_app.build_app(app, checks=False)
    assert unacknowledged_findings(app) == []


def test_every_acknowledgement_of_ours_gives_a_specific_reason(sample):
    reasons = {}
    for construct in sample.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == "aws:cdk:acknowledged-rules":
                reasons.update({k: v for k, v in entry.data.items() if "AwsSolutions" in k})
    assert reasons, "the sample app acknowledges no finding: this test would prove nothing"
    for rule, reason in reasons.items():
        assert len(reason) >= 30, f"{rule}: reason too short to say why: {reason!r}"
        assert not re.search(r"\b(needed|required|lorem|todo|n/a)\b", reason, re.IGNORECASE), (rule, reason)


def test_synthesized_template_matches_the_reviewed_snapshot(sample, snapshot):
    template = sample.synth().get_stack_by_name(sample_app.STACK_NAME).template
    masked = json.loads(ASSET_HASH.sub("<asset-hash>", json.dumps(template, sort_keys=True)))
    assert masked == snapshot(extension_class=JSONSnapshotExtension)


@pytest.mark.slow  # cfn-lint over the sample app's template: ~8 s
def test_synthesized_template_is_cfn_lint_clean(sample, tmp_path):
    template = sample.synth().get_stack_by_name(sample_app.STACK_NAME).template
    path = tmp_path / "CdkTsSample.template.json"
    path.write_text(json.dumps(template))
    result = subprocess.run(
        [
            str(Path(sys.executable).with_name("cfn-lint")),
            "--config-file",
            str(REPO / ".cfnlintrc.yaml"),
            "--",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_compaction_takes_the_managed_pandas_layer_of_the_stacks_region_or_the_one_the_context_names(sample):
    def layers(app):
        template = app.synth().get_stack_by_name(sample_app.STACK_NAME).template
        (function,) = [r for name, r in template["Resources"].items()
                       if name.startswith("TelemetryArchiverCompactionFunction")
                       and r["Type"] == "AWS::Lambda::Function"]
        return function["Properties"]["Layers"], function["Properties"]["Runtime"]

    default, runtime = layers(sample)
    assert default == [{"Fn::Join": ["", [
        "arn:aws:lambda:", {"Ref": "AWS::Region"}, ":336392948345:layer:AWSSDKPandas-Python314-Arm64:6"]]}]
    assert runtime == "python3.14"
    own = "arn:aws:lambda:eu-west-1:123456789012:layer:AWSSDKPandas-Python313-Arm64:2"
    app = App(context={**cdk_json_context(), "pandas_layer_arn": own})
    sample_app.build_app(app, checks=False)
    assert layers(app) == ([own], "python3.13")  # the construct follows the layer's Python
