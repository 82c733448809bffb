"""Work done once per test session, however many pytest-xdist workers ask for it.

A module-scoped fixture runs once in every worker that runs one of the module's tests: with ``-n 2`` an expensive
build runs twice. :func:`once_per_session` runs it in the first worker that asks, under a lock in the folder all of
the session's workers share (pytest-xdist's documented pattern, with ``fcntl`` in place of the ``filelock`` package),
and hands the others its result (the docs site, the wheel and its venv).
"""

from __future__ import annotations

import fcntl
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def once_per_session(tmp_path_factory: pytest.TempPathFactory, worker_id: str, name: str,
                     make: Callable[[Path], dict]) -> tuple[Path, dict]:
    """``make(folder)`` run once this session for ``name``; the folder and the JSON-able report ``make`` returned.

    ``worker_id`` is pytest-xdist's fixture (``"master"`` without workers: then ``make`` simply runs).
    """
    if worker_id == "master":
        folder = tmp_path_factory.mktemp(name)
        return folder, make(folder)
    shared = tmp_path_factory.getbasetemp().parent  # this session's folder, above each worker's own
    folder, report = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not report.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker whose make failed left behind
            folder.mkdir()
            report.write_text(json.dumps(make(folder)))
    return folder, json.loads(report.read_text())
