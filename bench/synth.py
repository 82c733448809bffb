"""Synth time of the sample app vs the same resources without the library; asset sizes; import time.

Run: .venv/bin/python -m bench.synth [--repeat 5]

The baseline is ``bench.plain_stack``: the sample stack written by hand with plain aws-cdk-lib L2
constructs, no cdk-ts code (a test checks it synthesizes the same template). For reference the
sample app's template is also loaded as L1 resources with ``cloudformation_include``. cdk-nag is
left out of all three. Each synth runs in a fresh interpreter, as ``cdk synth`` does, and the three
are interleaved in one run so machine noise hits them alike.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

REPO = Path(__file__).resolve().parents[1]
WITH_LIBRARY = """
import sys
from aws_cdk import App
import app
app.build_app(App(outdir=sys.argv[1]), checks=False).synth()
"""
PLAIN = """
import sys
from aws_cdk import App
from bench.plain_stack import build_plain_app
build_plain_app(App(outdir=sys.argv[1]), *sys.argv[2:5]).synth()
"""
INCLUDED = """
import sys
from aws_cdk import App, Stack, cloudformation_include
app = App(outdir=sys.argv[1])
stack = Stack(app, "CdkTsSample")
cloudformation_include.CfnInclude(stack, "Template", template_file=sys.argv[2])
app.synth()
"""


def zipped_size(directory: Path) -> int:
    """Bytes of ``directory`` zipped with deflate, every file under it (as the CDK CLI zips an asset)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            archive.write(path, path.relative_to(directory))
    return len(buffer.getvalue())


def run(code: str, *args: str) -> float:
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from cdk_ts._assets import staged_asset_dir

    # The plain stack reads the same directories the sample app's constructs stage.
    code_dirs = (str(staged_asset_dir()), str(staged_asset_dir("python")), str(REPO / "examples" / "ingest"))
    with tempfile.TemporaryDirectory() as tmp:
        library_out = Path(tmp, "lib")
        run(WITH_LIBRARY, str(library_out))  # also warms the file cache
        template = Path(tmp, "plain.template.json")
        body = json.loads((library_out / "CdkTsSample.template.json").read_text())
        body.get("Parameters", {}).pop("BootstrapVersion", None)  # the plain stack adds its own
        body.pop("Rules", None)
        template.write_text(json.dumps(body))
        with_library, plain, included = [], [], []
        for index in range(args.repeat):
            with_library.append(run(WITH_LIBRARY, str(Path(tmp, f"l{index}"))))
            plain.append(run(PLAIN, str(Path(tmp, f"p{index}")), *code_dirs))
            included.append(run(INCLUDED, str(Path(tmp, f"i{index}")), str(template)))
        lib, base, l1 = (statistics.median(s) for s in (with_library, plain, included))
        print(f"| synth, fresh interpreter (median of {args.repeat}) | seconds | vs plain aws-cdk-lib |\n|---|---|---|")
        print(f"| sample app with cdk-ts constructs | {lib:.2f} | {lib / base:.2f}x |")
        print(f"| same stack in plain aws-cdk-lib (bench/plain_stack.py) | {base:.2f} | 1.00x |")
        print(f"| same template as L1 resources (CfnInclude) | {l1:.2f} | {l1 / base:.2f}x |")
        print("\nall samples (s): " + "; ".join(
            f"{name} " + ", ".join(f"{x:.2f}" for x in samples)
            for name, samples in (("cdk-ts", with_library), ("plain", plain), ("CfnInclude", included))
        ))

    print("\n| asset (zipped, deflate) | KB |\n|---|---|")
    for name, directory in (
        ("cdk-ts functions' code (cdk_ts_runtime/)", staged_asset_dir()),
        ("RuntimeLayer (python/cdk_ts_runtime/)", staged_asset_dir("python")),
        ("example ingest function (examples/ingest/)", REPO / "examples" / "ingest"),
    ):
        print(f"| {name} | {zipped_size(directory) / 1024:.1f} |")

    print("\n| handler module | import time, fresh interpreter (median ms) |\n|---|---|")
    for module in ("cdk_ts_runtime.handlers.rotation", "cdk_ts_runtime.handlers.archiver", "examples.ingest.ingest"):
        samples = []
        for _ in range(5):
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import time; t=time.perf_counter(); import {module}; print((time.perf_counter()-t)*1000)",
                ],
                cwd=REPO,
                capture_output=True,
                text=True,
                check=True,
            )
            samples.append(float(out.stdout))
        print(f"| {module} (boto3 included) | {statistics.median(samples):.0f} |")


if __name__ == "__main__":
    main()
