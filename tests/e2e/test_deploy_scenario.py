"""End to end: deploy the sample app to moto_server, run the scenario, destroy, leave no process behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
@pytest.mark.slow
def test_sample_app_deploys_runs_the_scenario_and_tears_down(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    results_file = tmp_path / "results.json"
    result = subprocess.run(
        [sys.executable, "-m", "examples.scenario", "--results", str(results_file)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    output = result.stdout + result.stderr
    assert results_file.exists(), output[-6000:]
    results = json.loads(results_file.read_text())
    failed = [s for s in results["steps"] if not s["ok"]]
    assert failed == [], output[-6000:]
    steps = {s["step"] for s in results["steps"]}
    assert {
        "reconcile creates the current period's table",
        "ingest writes every reading",
        "every write read back across the shards",
        "every stream record is one archived line",
    } <= steps
    assert len(results["steps"]) >= 17
    assert results["destroyed"] is True
    assert result.returncode == 0, output[-3000:]
    assert not Path(f"/proc/{results['emulator_pid']}").exists(), "the emulator process is still running"
