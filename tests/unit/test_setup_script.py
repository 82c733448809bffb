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
    """A checkout holding scripts/setup.sh, with stand-ins for pip and npm that log who ran them."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", repo / "scripts" / "setup.sh")
    fakes = tmp_path / "fakes"
    (fakes / "pip").mkdir(parents=True)
    log = tmp_path / "calls.log"
    (fakes / "pip" / "__init__.py").write_text("")
    (fakes / "pip" / "__main__.py").write_text(
        "import sys\n"
        f"with open({str(log)!r}, 'a') as log:\n"
        "    log.write(f'pip {sys.version_info[0]}.{sys.version_info[1]} {\" \".join(sys.argv[1:])}\\n')\n"
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
    installs = [line for line in log.read_text().splitlines() if line.startswith("pip ")]
    assert installs and all(tuple(map(int, line.split()[1].split("."))) >= SUPPORTED for line in installs), installs


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


def test_the_header_and_the_usage_document_python(checkout):
    repo, env, log = checkout
    script = (repo / "scripts" / "setup.sh").read_text()
    header = "".join(line for line in script.splitlines(keepends=True)[1:] if line.startswith("#"))
    assert "PYTHON" in header
    result = run_captured(["bash", "scripts/setup.sh", "--help"], cwd=repo, env=env)
    assert result.returncode == 0
    assert "PYTHON" in result.stdout and "3.11" in result.stdout
    assert not (repo / ".venv").exists() and not log.exists()  # --help only tells
