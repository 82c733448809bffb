"""A project outside the repository tests its own Lambda handler with cdk-ts[testing]'s fixture, from the wheel.

The project is docs/testing.md's worked example (its ``# handler.py`` and ``# test_handler.py`` blocks, written as
they stand): no conftest.py, only the ``local_dynamodb`` fixture the installed plugin registers. It sees a hot key
of an on-demand table throttled with ``throttlingReasons``, a second UpdateTable refused while UPDATING and
CreateTable refused past the tables-in-transition limit, and mypy checks it. The fixture leaves no process behind
when a test fails, on Ctrl-C, or when pytest is killed.

As in test_wheel.py, the wheel is installed with ``--no-deps`` into a fresh venv and its dependencies (moto[server]
included) come from this environment through PYTHONPATH: the machine installs nothing from an index. What the
``testing`` extra would install is checked in the wheel's metadata.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.support.processes import alive, run_captured, still_alive

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "testing.md"
MYPY_INI = "[mypy]\nstrict = True\n\n[mypy-boto3,boto3.*,botocore,botocore.*]\nignore_missing_imports = True\n"

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


def worked_example(folder: Path) -> list[str]:
    """Write docs/testing.md's worked example (docs/snippets/testing/handler.py, test_handler.py) into ``folder``."""
    names = re.findall(r"<!-- snippet: testing/((?:test_)?handler\.py) -->", DOC.read_text())
    for name in names:
        (folder / name).write_text((REPO / "docs" / "snippets" / "testing" / name).read_text())
    return names


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


def test_a_new_project_tests_its_handler_with_the_fixture_alone_and_mypy_checks_it(
    venv_python, venv_env, tmp_path
):
    # given a project with its handler and tests (docs/testing.md), and no conftest.py
    assert worked_example(tmp_path) == ["handler.py", "test_handler.py"]
    (tmp_path / "mypy.ini").write_text(MYPY_INI)
    where = run_captured([venv_python, "-c", "import cdk_ts.testing as t; print(t.__file__)"], cwd=tmp_path,
                         env=venv_env, check=True)
    assert where.stdout.startswith(str(venv_python.parents[1])), where.stdout  # the wheel's copy

    # when its own pytest runs, with the plugin found through the installed entry point
    result = run_captured([venv_python, "-m", "pytest", "-v", "-p", "no:cacheprovider"], cwd=tmp_path, env=venv_env,
                          timeout=600)

    # then the handler meets the throttle, ResourceInUseException and LimitExceededException
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "3 passed" in result.stdout
    for test in ("test_a_hot_device_is_throttled_with_its_reason", "test_a_second_update_while_updating_is_refused",
                 "test_tables_past_the_limit_in_transition_are_refused"):
        assert re.search(rf"{test} PASSED", result.stdout), result.stdout[-3000:]
    # and mypy (strict) checks the project against the wheel's annotations
    mypy = run_captured([sys.executable, "-m", "mypy", "--python-executable", venv_python, "--no-incremental",
                         "handler.py", "test_handler.py"], cwd=tmp_path, env=venv_env, timeout=600)
    assert mypy.returncode == 0, mypy.stdout[-3000:] + mypy.stderr[-2000:]


def _start_recording_test(venv_python, venv_env, folder: Path, *, wait: bool):
    (folder / "test_left_behind.py").write_text(LEFT_BEHIND)
    pids_file = folder / "pids.json"
    env = {**venv_env, "PIDS_FILE": str(pids_file), **({"WAIT": "1"} if wait else {})}
    process = subprocess.Popen([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, env=env,
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
