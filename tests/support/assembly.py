"""Synthesizing an app in its own folder, and reading the cloud assembly: which staged asset a resource's code is."""

from __future__ import annotations

import json
import os
import sys
import zipfile
from pathlib import Path

from tests.support.processes import run_captured


def asset_dir(outdir: Path, stack: str, s3_key: str) -> Path:
    """The files of the zip asset that ``stack``'s assets manifest publishes as ``s3_key``, as Lambda extracts them.

    A directory asset is that directory in ``outdir``; a zip file asset (cdk-ts's own code) is extracted beside it,
    into ``outdir/extracted/<file name>``.
    """
    manifest = json.loads((outdir / f"{stack}.assets.json").read_text())["files"]
    sources = [
        asset["source"]
        for asset in manifest.values()
        if any(destination["objectKey"] == s3_key for destination in asset["destinations"].values())
    ]
    assert len(sources) == 1, f"{s3_key} is published by {len(sources)} assets of {stack}, expected 1"
    staged = outdir / sources[0]["path"]
    if staged.is_dir():
        return staged
    extracted = outdir / "extracted" / staged.name
    if not extracted.exists():
        with zipfile.ZipFile(staged) as archive:
            archive.extractall(extracted)
    return extracted


def asset_files(outdir: Path, stack: str, s3_key: str) -> list[str]:
    """Files (paths relative to the asset's root) of the zip asset published as ``s3_key``."""
    root = asset_dir(outdir, stack, s3_key)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def synth_app(folder: Path, *, what: str = "app.py") -> Path:
    """Run ``folder/app.py`` as ``cdk synth`` would (``CDK_OUTDIR``: ``folder/cdk.out``); the cloud assembly's folder.

    A subprocess: jsii's Node process resolves relative asset paths against the working directory it started in.
    ``what`` names the app in the failure message (``README.md:120``).
    """
    outdir = folder / "cdk.out"
    env = {**os.environ, "CDK_OUTDIR": str(outdir), "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    result = run_captured([sys.executable, "app.py"], cwd=folder, env=env, timeout=600)
    assert result.returncode == 0, f"{what} failed:\n{result.stderr[-4000:]}"
    return outdir
