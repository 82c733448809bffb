"""Reading a synthesized cloud assembly: which staged asset directory a resource's code comes from."""

from __future__ import annotations

import json
from pathlib import Path


def asset_dir(outdir: Path, stack: str, s3_key: str) -> Path:
    """The staged directory in ``outdir`` of the zip asset that ``stack``'s assets manifest publishes as ``s3_key``."""
    manifest = json.loads((outdir / f"{stack}.assets.json").read_text())["files"]
    sources = [
        asset["source"]
        for asset in manifest.values()
        if any(destination["objectKey"] == s3_key for destination in asset["destinations"].values())
    ]
    assert len(sources) == 1, f"{s3_key} is published by {len(sources)} assets of {stack}, expected 1"
    return outdir / sources[0]["path"]


def asset_files(outdir: Path, stack: str, s3_key: str) -> list[str]:
    """Files (paths relative to the asset's root) of the zip asset published as ``s3_key``."""
    root = asset_dir(outdir, stack, s3_key)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
