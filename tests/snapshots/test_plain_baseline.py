"""The synth benchmark's baseline (plain aws-cdk-lib) builds exactly the sample app's template."""

from __future__ import annotations

import json

from aws_cdk import App

import app as sample_app
from bench.plain_stack import build_plain_app
from cdk_ts._assets import staged_asset_dir


def stack_template(app: App) -> dict:
    return app.synth().get_stack_by_name(sample_app.STACK_NAME).template


def test_plain_stack_synthesizes_the_same_template_as_the_sample_app(tmp_path):
    # given the sample app built with cdk-ts and the hand-written stack bench.synth compares it with,
    # fed the same code directories (function asset, layer asset, the example ingest handler)
    library = stack_template(sample_app.build_app(App(outdir=str(tmp_path / "lib")), checks=False))
    plain_app = build_plain_app(
        App(outdir=str(tmp_path / "plain")),
        str(staged_asset_dir()),
        str(staged_asset_dir("python")),
        str(sample_app.EXAMPLES / "ingest"),
    )
    plain = stack_template(plain_app)
    # then every resource, output and parameter is the same, so the synth-time ratio compares equal work
    assert len(library["Resources"]) >= 40
    different = {
        name: {"cdk-ts": library["Resources"].get(name), "plain": plain["Resources"].get(name)}
        for name in sorted(library["Resources"].keys() | plain["Resources"].keys())
        if library["Resources"].get(name) != plain["Resources"].get(name)
    }
    assert not different, "resources that differ:\n" + json.dumps(different, indent=1, sort_keys=True)[:6000]
    assert plain == library
