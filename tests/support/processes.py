"""Running a script or an interpreter outside the test process, and reading the report it prints."""

from __future__ import annotations

import json
import os
import subprocess
import time
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


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def still_alive(pids: list[int], timeout: float = 20) -> list[int]:
    """The ``pids`` still running after waiting up to ``timeout`` seconds for all of them to exit."""
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [pid for pid in pids if alive(pid)]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children...), from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[-1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                continue
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found
