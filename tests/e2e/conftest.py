"""The built sdist and wheel, and a venv holding the wheel: built once per test run for the end-to-end modules.

test_wheel.py and test_testing_module.py only read the wheel and the venv (each test writes into its own
tmp_path), so one build and one install serve both modules, on every xdist worker: the first worker to need
them builds them in the run's shared temporary folder while the others wait on a file lock, then all read them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.processes import run_captured
from tests.support.sessions import once_per_session

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def distributions(tmp_path_factory, worker_id) -> Path:
    """The folder holding cdk-ts's sdist and wheel, built once by ``python -m build`` from a copy of this checkout.

    One build serves the wheel tests and ``twine check``: ``python -m build`` makes the sdist, then the wheel
    from that sdist, so the wheel also proves the sdist holds everything a build needs.
    """
    return once_per_session(tmp_path_factory, worker_id, "dist", build_distributions)[0]


def build_distributions(out: Path) -> dict:
    """``python -m build`` of a copy of this checkout, its sdist and wheel written to ``out``; nothing to report."""
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
    return {}


@pytest.fixture(scope="session")
def wheel(distributions) -> Path:
    """cdk-ts's wheel (built from its sdist)."""
    (built,) = distributions.glob("cdk_ts-*.whl")
    return built


@pytest.fixture(scope="session")
def venv_python(wheel, tmp_path_factory, worker_id) -> Path:
    """The python of a fresh venv with the wheel installed (no dependencies: those come from ``venv_env``)."""
    def install(folder: Path) -> dict:
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        python = venv / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True,
                       timeout=300)
        return {}

    return once_per_session(tmp_path_factory, worker_id, "venv", install)[0] / "venv" / "bin" / "python"


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
