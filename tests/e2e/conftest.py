"""The built sdist and wheel, and a venv holding the wheel: built once per test run for the end-to-end modules.

test_wheel.py and test_testing_module.py only read the wheel and the venv (each test writes into its own
tmp_path), so one build and one install serve both modules, on every xdist worker: the first worker to need
them builds them in the run's shared temporary folder while the others wait on a file lock, then all read them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.processes import run_captured

REPO = Path(__file__).resolve().parents[2]


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``build`` once per test run whatever the number of xdist workers.

    Under xdist every worker has its own session (and so its own session fixtures), but the workers of one run
    share the parent of their base temporary folders: the folder goes there, built under an exclusive lock by the
    first worker and only read by the others. A build that fails leaves no marker, so the next worker tries again
    and fails with its own message.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: the session fixture already runs once
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent  # pytest-of-<user>/pytest-<n>: this run's own, new each run
    folder, done = shared / name, shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def distributions(tmp_path_factory) -> Path:
    """The folder holding cdk-ts's sdist and wheel, built once by ``python -m build`` from a copy of this checkout.

    One build serves the wheel tests and ``twine check``: ``python -m build`` makes the sdist, then the wheel
    from that sdist, so the wheel also proves the sdist holds everything a build needs.
    """
    return built_once(tmp_path_factory, "dist", build_distributions)


def build_distributions(out: Path) -> None:
    """``python -m build`` of a copy of this checkout, its sdist and wheel written to ``out``."""
    # Built from a copy of the sources: setuptools reuses a build/ folder, whose stale files
    # (an old lambdas/ package, say) would end up in the wheel.
    source = out.parent / f"{out.name}-src" / "cdk-ts"
    shutil.rmtree(source.parent, ignore_errors=True)
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "build", "dist", "cdk.out", "*.egg-info", "__pycache__", ".*_cache"
        ),
    )
    result = run_captured([sys.executable, "-m", "build", "--outdir", out, source], cwd=source, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]


@pytest.fixture(scope="session")
def wheel(distributions) -> Path:
    """cdk-ts's wheel (built from its sdist)."""
    (built,) = distributions.glob("cdk_ts-*.whl")
    return built


@pytest.fixture(scope="session")
def venv_python(wheel, tmp_path_factory) -> Path:
    """The python of a fresh venv with the wheel installed (no dependencies: those come from ``venv_env``)."""
    def install(folder: Path) -> None:
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        python = venv / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True,
                       timeout=300)

    return built_once(tmp_path_factory, "venv", install) / "venv" / "bin" / "python"


@pytest.fixture
def venv_env() -> dict[str, str]:
    """The environment for ``venv_python``: this test environment's dependencies, cdk-ts only from the wheel."""
    # Dependencies (aws-cdk-lib, boto3, ...) come from this test environment. Its cdk_ts and
    # cdk_ts_runtime are an editable install reached only through a .pth file, which PYTHONPATH does
    # not run, so in the venv both packages can only come from the wheel.
    return {
        **os.environ,
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
