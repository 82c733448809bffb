"""Lambda code for every cdk-ts function, staged from the installed ``cdk_ts_runtime`` package.

The asset is built from the package's files wherever it is installed (a checkout or a wheel in
site-packages), so constructs work the same for library users and for this repository.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import shutil
import tempfile
from pathlib import Path

from aws_cdk import aws_lambda as lambda_

from cdk_ts_runtime._errors import CdkTsError

RUNTIME_PACKAGE = "cdk_ts_runtime"
#: Modules only the compaction functions (with pyarrow from their own layer) and the Iceberg sink's transformation
#: run: left out of the code every other function shares and of the RuntimeLayer, which stay within their 100 KB.
COMPACTION_MODULES = frozenset(
    {"_compaction.py", "_compaction_columns.py", "_compaction_envelope.py", "_compaction_fanout.py",
     "_compaction_iceberg.py", "_compaction_plan.py", "_compaction_ranges.py", "_compaction_sort.py",
     "_compaction_sql.py", "_firehose_iceberg.py",
     "handlers/compaction.py", "handlers/compaction_partition.py", "handlers/firehose_iceberg.py"}
)


class RuntimePackageMissingError(CdkTsError, RuntimeError):
    """``cdk_ts_runtime``, the code every cdk-ts function runs, is not installed beside ``cdk_ts``."""


def runtime_package_dir() -> Path:
    """Directory of the installed ``cdk_ts_runtime`` package."""
    spec = importlib.util.find_spec(RUNTIME_PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimePackageMissingError(
            "the cdk-ts runtime package 'cdk_ts_runtime' is not installed; reinstall cdk-ts"
        )
    return Path(spec.origin).parent


#: What only cdk-ts's own functions run (entry points, the rotation with its stream-consumer mappings and keyword
#: checks, the rule finder, the throttled-keys report and widget): left out of the layer, which
#: holds the clients users' functions import (router, sharding, device log, Timestream, archive replay) and what
#: they import, within 100 KB zipped. cdk-ts's functions get the whole package as their own code.
FUNCTION_ONLY = ("handlers/", "_rotation/", "_stream_consumer.py", "_keywords.py", "_contributor_insights.py",
                 "_throttled_keys_report.py", "_throttled_keys_widget.py")


def _source_files(package_dir: Path, *, compaction: bool, layer: bool = False) -> list[Path]:
    files = sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)
    if not compaction:
        files = [p for p in files if p.relative_to(package_dir).as_posix() not in COMPACTION_MODULES]
    if layer:
        files = [p for p in files if not p.relative_to(package_dir).as_posix().startswith(FUNCTION_ONLY)]
    return files


@functools.cache
def staged_asset_dir(parent: str = "", compaction: bool = False) -> Path:
    """A directory holding only ``{parent}/cdk_ts_runtime/**.py``, named by content hash so it is built once.

    ``parent=""`` is a function's code (handlers import ``cdk_ts_runtime``); ``parent="python"`` is a
    layer, which Lambda extracts to ``/opt`` and whose ``/opt/python`` is on ``sys.path``, without
    :data:`FUNCTION_ONLY`. The :data:`COMPACTION_MODULES` are in it only with ``compaction=True`` (the compaction
    function's code).
    """
    package_dir = runtime_package_dir()
    files = _source_files(package_dir, compaction=compaction, layer=parent == "python")
    digest = hashlib.sha256(parent.encode())
    for path in files:
        digest.update(str(path.relative_to(package_dir)).encode())
        digest.update(path.read_bytes())
    root = Path(tempfile.gettempdir()) / "cdk-ts-assets" / digest.hexdigest()[:16]
    if not (root / parent / RUNTIME_PACKAGE / "__init__.py").exists():
        root.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="stage-", dir=root.parent))
        for path in files:
            target = scratch / parent / RUNTIME_PACKAGE / path.relative_to(package_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        try:
            scratch.rename(root)
        except OSError:  # another process staged the same content first
            shutil.rmtree(scratch, ignore_errors=True)
    return root


def lambda_code() -> lambda_.Code:
    """The one code asset all cdk-ts functions share (handlers are ``cdk_ts_runtime.handlers.<module>.handler``)."""
    return lambda_.Code.from_asset(str(staged_asset_dir()))


def compaction_code() -> lambda_.Code:
    """The compaction function's code: the shared code plus :data:`COMPACTION_MODULES`."""
    return lambda_.Code.from_asset(str(staged_asset_dir(compaction=True)))


def layer_code() -> lambda_.Code:
    """The runtime as a layer asset: ``python/cdk_ts_runtime/...``."""
    return lambda_.Code.from_asset(str(staged_asset_dir("python")))
