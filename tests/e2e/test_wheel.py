"""The built wheel carries both packages, and its constructs find the Lambda code without the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SYNTH_FROM_WHEEL = """
import json, os, pathlib, sys
import cdk_ts, lambdas
from aws_cdk import App, Stack
from cdk_ts import RotatingTimeSeriesTables
app = App(outdir=sys.argv[1])
RotatingTimeSeriesTables(Stack(app, "S"), "T", table_prefix="telemetry", retain_periods=3)
assembly = app.synth()
assets = json.loads(pathlib.Path(sys.argv[1], "S.assets.json").read_text())["files"]
paths = [pathlib.Path(sys.argv[1], a["source"]["path"])
         for a in assets.values() if a["source"].get("packaging") == "zip"]
print(json.dumps({
    "cdk_ts": cdk_ts.__file__,
    "lambdas": lambdas.__file__,
    "asset_files": sorted(str(p.relative_to(d)) for d in paths for p in d.rglob("*.py")),
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = out.glob("cdk_ts-*.whl")
    return built


@pytest.mark.slow
def test_wheel_contains_the_construct_and_runtime_packages(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "cdk_ts/__init__.py" in names
    assert "cdk_ts/rotating_tables.py" in names
    assert "lambdas/rotation.py" in names
    assert not [n for n in names if n.startswith("tests/")]


@pytest.mark.slow
def test_constructs_installed_from_the_wheel_build_their_lambda_asset(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True, timeout=300)
    # Dependencies (aws-cdk-lib, ...) come from this test environment; PYTHONPATH does not run the .pth
    # file of our editable install, so cdk_ts and lambdas can only come from the wheel.
    env = {
        **os.environ,
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    result = subprocess.run(
        [str(python), "-c", SYNTH_FROM_WHEEL, str(tmp_path / "cdk.out")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    import json

    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["cdk_ts"].startswith(str(venv)), report
    assert report["lambdas"].startswith(str(venv)), report
    assert "lambdas/rotation.py" in report["asset_files"]
    assert not [f for f in report["asset_files"] if not f.startswith("lambdas/")], "the asset holds only lambdas/"
