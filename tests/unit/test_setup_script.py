"""``scripts/setup.sh`` run by bash as a user runs it: a ``.venv`` of an unsupported Python is made again, not kept.

The script runs in a copy of the checkout's layout (``scripts/setup.sh`` alone) so the real ``.venv`` is never
touched. pip and npm are stood in for (a ``pip`` package first on ``PYTHONPATH``, an ``npm`` first on ``PATH``)
so no package is downloaded; each records the interpreter that ran it, which is what the tests assert on.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_captured

pytestmark = pytest.mark.slow  # each test makes one or two venvs: a few seconds
ROOT = Path(__file__).resolve().parents[2]
SUPPORTED = (3, 11)  # pyproject.toml's requires-python


def _unsupported_python() -> str | None:
    """An interpreter older than 3.11 on this machine (on PATH, or one pyenv installed), or None."""
    for version in ("3.10", "3.9", "3.8"):
        found = shutil.which(f"python{version}")
        if found and run_captured([found, "--version"], cwd=ROOT).returncode == 0:
            return found
        for candidate in sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}")):
            return str(candidate)
    return None


OLD_PYTHON = _unsupported_python()
needs_old_python = pytest.mark.skipif(OLD_PYTHON is None, reason="no Python older than 3.11 on this machine")


@pytest.fixture
def checkout(tmp_path):
    """A checkout holding scripts/setup.sh, with stand-ins for pip, uv and npm that log who ran them."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", repo / "scripts" / "setup.sh")
    fakes = tmp_path / "fakes"
    log = tmp_path / "calls.log"
    for installer in ("pip", "uv"):
        (fakes / installer).mkdir(parents=True)
        (fakes / installer / "__init__.py").write_text("")
        (fakes / installer / "__main__.py").write_text(
            "import sys\n"
            f"with open({str(log)!r}, 'a') as log:\n"
            f"    version = f'{{sys.version_info[0]}}.{{sys.version_info[1]}}'\n"
            f"    log.write(f'{installer} {{version}} {{\" \".join(sys.argv[1:])}}\\n')\n"
        )
    (fakes / "npm").write_text(f"#!/bin/sh\necho \"npm $*\" >> {log}\n")
    (fakes / "npm").chmod(0o755)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHON", "VIRTUAL_ENV", "PYTHONHOME")},
        "PATH": f"{fakes}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(fakes),
    }
    return repo, env, log


def venv_version(repo: Path) -> tuple[int, int]:
    """The (major, minor) of the Python the checkout's .venv runs."""
    result = run_captured(
        [repo / ".venv" / "bin" / "python", "-c", "import sys; print(*sys.version_info[:2])"],
        cwd=repo, env={"PATH": os.environ["PATH"]},
    )
    major, minor = result.stdout.split()
    return int(major), int(minor)


def run_setup(repo: Path, env: dict[str, str], **variables: str):
    """``bash scripts/setup.sh`` in ``repo``, with ``variables`` set in its environment."""
    return run_captured(["bash", "scripts/setup.sh"], cwd=repo, env={**env, **variables}, timeout=300)


@needs_old_python
def test_a_venv_of_an_unsupported_python_is_made_again_with_the_supported_one(checkout):
    # given a .venv a first run made with Python 3.10 (before the user had 3.11)
    repo, env, log = checkout
    run_captured([OLD_PYTHON, "-m", "venv", "--without-pip", repo / ".venv"], cwd=repo, check=True)
    old = venv_version(repo)
    assert old < SUPPORTED
    # when setup.sh runs again with a supported Python
    result = run_setup(repo, env, PYTHON=sys.executable)
    # then the .venv is replaced, says so, and the install runs in the new one
    assert result.returncode == 0, result.stdout + result.stderr
    assert venv_version(repo) >= SUPPORTED
    assert ".venv" in result.stderr and f"{old[0]}.{old[1]}" in result.stderr, result.stderr
    installs = [line for line in log.read_text().splitlines() if line.startswith(("pip ", "uv "))]
    assert [line.split()[0] for line in installs] == ["pip", "uv"], installs  # pip installs uv, uv the project
    assert all(tuple(map(int, line.split()[1].split("."))) >= SUPPORTED for line in installs), installs


@needs_old_python
def test_an_unsupported_python_is_refused_before_anything_is_made_naming_python(checkout):
    repo, env, log = checkout
    result = run_setup(repo, env, PYTHON=OLD_PYTHON)
    assert result.returncode != 0
    assert "PYTHON" in result.stderr and "3.11" in result.stderr, result.stderr
    assert not (repo / ".venv").exists()
    assert not log.exists()  # nothing installed


def test_a_supported_venv_is_kept_and_installed_into(checkout):
    repo, env, log = checkout
    assert run_setup(repo, env, PYTHON=sys.executable).returncode == 0
    marker = repo / ".venv" / "kept"
    marker.write_text("")
    result = run_setup(repo, env, PYTHON=sys.executable)
    assert result.returncode == 0, result.stderr
    assert marker.exists()
    assert "npm ci" in log.read_text()


# An interpreter that says it is Python 3.99 (sys.version_info patched for -c code) and otherwise runs this one;
# the venv it makes runs a copy of itself, so that venv says 3.99 too.
FAKE_PYTHON = """#!/usr/bin/env bash
real={real}
case "$1" in
  -c) code=$2; shift 2; exec "$real" -c "import sys; sys.version_info = (3, 99, 0, 'final', 0); $code" "$@" ;;
  -m) if [ "$2" = venv ]; then
        "$real" -m venv --without-pip "$3" && rm "$3/bin/python" && cp "$0" "$3/bin/python"; exit
      fi ;;
esac
exec "$real" "$@"
"""


@pytest.fixture
def python_3_99(tmp_path) -> Path:
    """A stand-in ``python3.99`` (see FAKE_PYTHON)."""
    fake = tmp_path / "bin" / "python3.99"
    fake.parent.mkdir()
    fake.write_text(FAKE_PYTHON.format(real=sys.executable))
    fake.chmod(0o755)
    return fake


def test_a_venv_of_another_version_than_the_given_python_is_made_again_with_it(checkout, python_3_99):
    # given a .venv made with this Python (3.11 or newer)
    repo, env, log = checkout
    run_captured([sys.executable, "-m", "venv", "--without-pip", repo / ".venv"], cwd=repo, check=True)
    mine = venv_version(repo)
    (repo / ".venv" / "old").write_text("")
    # when setup.sh runs with PYTHON naming another version
    result = run_setup(repo, env, PYTHON=str(python_3_99))
    # then .venv is made again with that one, and the run says why
    assert result.returncode == 0, result.stderr
    assert venv_version(repo) == (3, 99)
    assert not (repo / ".venv" / "old").exists()
    assert f"{mine[0]}.{mine[1]}" in result.stderr and "3.99" in result.stderr, result.stderr


def test_without_python_any_supported_venv_is_kept(checkout, python_3_99):
    # given a .venv the user made with PYTHON=python3.99 (test.sh and main.sh then run setup.sh without PYTHON)
    repo, env, log = checkout
    assert run_setup(repo, env, PYTHON=str(python_3_99)).returncode == 0
    # when setup.sh runs with no PYTHON (python3 on PATH is another version)
    result = run_setup(repo, env)
    # then that .venv is kept
    assert result.returncode == 0, result.stderr
    assert venv_version(repo) == (3, 99)
    assert "making it again" not in result.stderr


def test_in_a_git_checkout_git_is_pointed_at_the_repositorys_hooks(checkout, python_3_99):
    repo, env, log = checkout
    run_captured(["git", "init", "--quiet"], cwd=repo, env=env, check=True)
    assert run_setup(repo, env, PYTHON=str(python_3_99)).returncode == 0
    hooks = run_captured(["git", "config", "--get", "core.hooksPath"], cwd=repo, env=env)
    assert hooks.stdout.strip() == "scripts/hooks"


def test_outside_a_git_checkout_no_git_setting_is_made(checkout, python_3_99, tmp_path):
    # given a copy inside another repository (its own folder is not a checkout's top)
    repo, env, log = checkout
    run_captured(["git", "init", "--quiet"], cwd=tmp_path, env=env, check=True)
    assert run_setup(repo, env, PYTHON=str(python_3_99)).returncode == 0
    hooks = run_captured(["git", "config", "--get", "core.hooksPath"], cwd=tmp_path, env=env)
    assert hooks.stdout.strip() == ""


def test_the_header_and_the_usage_document_python(checkout):
    repo, env, log = checkout
    script = (repo / "scripts" / "setup.sh").read_text()
    header = "".join(line for line in script.splitlines(keepends=True)[1:] if line.startswith("#"))
    assert "PYTHON" in header
    result = run_captured(["bash", "scripts/setup.sh", "--help"], cwd=repo, env=env)
    assert result.returncode == 0
    assert "PYTHON" in result.stdout and "3.11" in result.stdout
    assert not (repo / ".venv").exists() and not log.exists()  # --help only tells


def test_a_second_run_installs_nothing_until_a_manifest_changes(checkout, python_3_99):
    repo, env, log = checkout
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (repo / "package-lock.json").write_text("{}\n")
    (repo / "node_modules").mkdir()  # what npm ci makes (the stand-in only logs)
    assert run_setup(repo, env).returncode == 0
    first = log.read_text().splitlines()
    assert any(line.startswith("pip ") for line in first) and "npm ci" in log.read_text()

    assert run_setup(repo, env).returncode == 0
    assert log.read_text().splitlines() == first  # nothing installed again

    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\nversion = '2'\n")
    assert run_setup(repo, env).returncode == 0
    again = log.read_text().splitlines()[len(first):]
    assert [line.split()[0] for line in again] == ["pip", "uv"]  # only the changed manifest's installers ran

    (repo / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    assert run_setup(repo, env).returncode == 0
    assert [line.split()[0] for line in log.read_text().splitlines()[len(first) + 2:]] == ["npm"]
