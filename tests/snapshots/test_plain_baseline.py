"""The synth benchmark's baseline (plain aws-cdk-lib) builds exactly the sample app's template."""

from __future__ import annotations

from aws_cdk import App

import app as sample_app
from bench.plain_stack import build_plain_app
from cdk_ts._assets import staged_asset_dir


def stack_template(app: App) -> dict:
    return app.synth().get_stack_by_name(sample_app.STACK_NAME).template


def test_plain_stack_synthesizes_the_same_template_as_the_sample_app(tmp_path):
    # given the sample app built with cdk-ts and the hand-written stack bench.synth compares it with
    library = stack_template(sample_app.build_app(App(outdir=str(tmp_path / "lib")), checks=False))
    plain = stack_template(build_plain_app(App(outdir=str(tmp_path / "plain")), str(staged_asset_dir())))
    # then every resource, output and parameter is the same, so the synth-time ratio compares equal work
    assert len(library["Resources"]) >= 40
    different = sorted(
        name
        for name in library["Resources"].keys() | plain["Resources"].keys()
        if library["Resources"].get(name) != plain["Resources"].get(name)
    )
    assert different == []
    assert plain == library
