"""End to end: deploy the sample app to moto_server, run the scenario, destroy, leave no process behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
@pytest.mark.slow
def test_sample_app_deploys_runs_the_scenario_and_tears_down():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    result = subprocess.run(
        [sys.executable, "scenario.py"], cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert re.search(r"^\d+ passed, 0 failed$", result.stdout, re.MULTILINE), output[-3000:]
    assert "destroy: CdkTsSample deleted" in result.stdout
    (pid,) = re.findall(r"emulator: stopped pid (\d+)", result.stdout)
    assert not Path(f"/proc/{pid}").exists(), f"emulator process {pid} is still running"
