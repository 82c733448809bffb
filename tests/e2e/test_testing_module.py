"""cdk-ts[testing] from the wheel: the module, its extra and its pytest plugin ship, and the fixture leaves no process
behind when a test fails, on Ctrl-C, or when pytest is killed.

As in test_wheel.py, the wheel is installed with ``--no-deps`` into a fresh venv and its dependencies (moto[server]
included) come from this environment through PYTHONPATH: the machine installs nothing from an index. What the
``testing`` extra would install is checked in the wheel's metadata. docs/testing.md's worked example runs, and mypy
--strict checks it, in the new app of docs/new-app.md (tests/docs/test_new_app.py), whose venv installs the wheel
with ``[testing]`` from the package index: one venv, one mypy run over aws-cdk-lib, for the app and its tests.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from tests.support.processes import alive, still_alive

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


# A test that records the fixture's processes, then fails or waits to be interrupted.
LEFT_BEHIND = '''
import json, os, time

def test_records_its_servers(local_dynamodb):
    pids = [local_dynamodb.pid, local_dynamodb.engine.pid]
    with open(os.environ["PIDS_FILE"], "w") as out:
        json.dump(pids, out)
    if os.environ.get("WAIT"):
        time.sleep(600)
    assert False, "this test fails on purpose"
'''


def test_the_wheel_ships_the_testing_module_its_extra_and_its_pytest_plugin(wheel):
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    assert {"cdk_ts/testing/__init__.py", "cdk_ts/testing/_server.py", "cdk_ts/testing/py.typed",
            "cdk_ts/testing/dynalite_server.js", "cdk_ts/testing/pytest_plugin.py"} <= names
    dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    metadata = archive.read(f"{dist_info}/METADATA").decode()
    assert "Provides-Extra: testing" in metadata
    assert re.search(r'^Requires-Dist: moto\[[^\]]*dynamodb[^\]]*\].*extra == "testing"', metadata, re.MULTILINE)
    # the fixture is a pytest plugin: the extra brings pytest
    assert re.search(r'^Requires-Dist: pytest>=8.*extra == "testing"', metadata, re.MULTILINE)
    entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    assert re.search(r"^\[pytest11\]\ncdk_ts = cdk_ts\.testing\.pytest_plugin$", entry_points, re.MULTILINE)
    shipped = [n for n in names if n.startswith("cdk_ts/") and n.endswith(".py")]
    importing_tests = re.compile(r"^\s*(from|import) tests\b|\"-m\", \"tests\.", re.MULTILINE)
    assert [n for n in shipped if importing_tests.search(archive.read(n).decode())] == []


# pytest -q -p no:cacheprovider, taking Ctrl-C as a terminal gives it. A process started in the background by a
# shell without job control (`cmd &` in a script, as a CI runner may start the suite) inherits SIGINT ignored, and
# Python then installs no KeyboardInterrupt handler: the interrupted run would sleep on.
PYTEST_WITH_CTRL_C = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv = ['pytest', '-q', '-p', 'no:cacheprovider']; runpy.run_module('pytest', run_name='__main__')"
)


def _start_recording_test(venv_python, venv_env, folder: Path, *, wait: bool):
    (folder / "test_left_behind.py").write_text(LEFT_BEHIND)
    pids_file = folder / "pids.json"
    env = {**venv_env, "PIDS_FILE": str(pids_file), **({"WAIT": "1"} if wait else {})}
    process = subprocess.Popen([venv_python, "-c", PYTEST_WITH_CTRL_C], cwd=folder, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not (pids_file.exists() and pids_file.read_text()) and time.monotonic() < deadline:
        if process.poll() is not None:
            break
        time.sleep(0.2)
    return process, json.loads(pids_file.read_text())


def test_a_failing_test_leaves_no_process(venv_python, venv_env, tmp_path):
    process, pids = _start_recording_test(venv_python, venv_env, tmp_path, wait=False)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 1 and "this test fails on purpose" in output, output[-3000:]
    assert still_alive(pids) == []


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "killed"])
def test_an_interrupted_or_killed_pytest_leaves_no_process(stop, venv_python, venv_env, tmp_path):
    process, pids = _start_recording_test(venv_python, venv_env, tmp_path, wait=True)
    try:
        assert all(alive(pid) for pid in pids)
        os.kill(process.pid, stop)
        process.communicate(timeout=60)
        # then every server the fixture started exits: torn down (Ctrl-C) or by watching its parent (killed)
        assert still_alive(pids) == []
    finally:
        if process.poll() is None:
            process.kill()
