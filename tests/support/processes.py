"""Running a script or an interpreter outside the test process, and reading the report it prints."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_captured(
    args: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``args`` run to the end in ``cwd`` with stdout and stderr captured as text; ``check`` raises on failure."""
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=check
    )


def json_report(result: subprocess.CompletedProcess[str]) -> dict:
    """The JSON object a script printed on its last line; the test fails with its stderr if it did not exit 0."""
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
