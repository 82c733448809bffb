"""Lambda code for every cdk-ts function, zipped from the installed ``cdk_ts_runtime`` package.

The asset is built from the package's files wherever it is installed (a checkout or a wheel in
site-packages), so constructs work the same for library users and for this repository. Each asset is one zip
file, written once per content under the temporary directory: a synth copies one file into the cloud assembly
instead of walking and copying every module, and ``cdk deploy`` uploads it as it is.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import tempfile
import zipfile
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


#: What every entry of a zipped asset carries, so the same files always make the same bytes: the earliest date a
#: zip can hold, and read permission for everyone (Lambda runs the code as another user than the one who wrote it).
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_ZIP_FILE_MODE = 0o100644 << 16
#: Part of each zip's name: change it whenever the way a zip is made changes, so no older zip is taken for it.
_ZIP_FORMAT = "deflate9"


def asset_root() -> Path:
    """The directory the zips are written to, under the temporary directory."""
    return Path(tempfile.gettempdir()) / "cdk-ts-assets"


@functools.cache
def zipped_asset(parent: str = "", compaction: bool = False) -> tuple[Path, str]:
    """A zip holding only ``{parent}/cdk_ts_runtime/**.py``, and the SHA-256 of its files' names and bytes.

    The zip is deterministic (entries sorted, fixed dates and modes, deflate level 9), named by that digest, and
    written once per content. ``parent=""`` is a function's code (handlers import ``cdk_ts_runtime``);
    ``parent="python"`` is a layer, which Lambda extracts to ``/opt`` and whose ``/opt/python`` is on
    ``sys.path``, without :data:`FUNCTION_ONLY`. The :data:`COMPACTION_MODULES` are in it only with
    ``compaction=True`` (the compaction function's code).
    """
    package_dir = runtime_package_dir()
    files = {
        path.relative_to(package_dir).as_posix(): path.read_bytes()
        for path in _source_files(package_dir, compaction=compaction, layer=parent == "python")
    }
    digest = hashlib.sha256(parent.encode())
    for relative, content in files.items():
        digest.update(relative.encode())
        digest.update(content)
    archive = asset_root() / f"{digest.hexdigest()[:16]}.{_ZIP_FORMAT}.zip"
    if not archive.exists():
        archive.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix="stage-", suffix=".zip", dir=archive.parent)
        scratch = Path(name)
        try:
            with os.fdopen(handle, "wb") as file, zipfile.ZipFile(file, "w") as bundle:
                prefix = (Path(parent) / RUNTIME_PACKAGE).as_posix()
                for relative, content in files.items():
                    entry = zipfile.ZipInfo(f"{prefix}/{relative}", _ZIP_DATE)
                    entry.external_attr = _ZIP_FILE_MODE
                    bundle.writestr(entry, content, zipfile.ZIP_DEFLATED, compresslevel=9)
            scratch.chmod(0o644)
            scratch.replace(archive)  # atomic: another process writing the same content leaves the same bytes
        except BaseException:
            scratch.unlink(missing_ok=True)  # a zip cut short is never taken for the asset
            raise
    return archive, digest.hexdigest()


def _asset_code(parent: str = "", compaction: bool = False) -> lambda_.Code:
    """A code asset of :func:`zipped_asset`, hashed by the digest taken while zipping it.

    Given ``asset_hash``, CDK's asset staging takes it as the asset's fingerprint instead of reading and hashing
    the files again (``AssetHashType.CUSTOM``); the digest covers every file's path and bytes, so any change to
    the code still changes the asset.
    """
    archive, digest = zipped_asset(parent, compaction)
    return lambda_.Code.from_asset(str(archive), asset_hash=digest)


def lambda_code() -> lambda_.Code:
    """The one code asset all cdk-ts functions share (handlers are ``cdk_ts_runtime.handlers.<module>.handler``)."""
    return _asset_code()


def compaction_code() -> lambda_.Code:
    """The compaction function's code: the shared code plus :data:`COMPACTION_MODULES`."""
    return _asset_code(compaction=True)


def layer_code() -> lambda_.Code:
    """The runtime as a layer asset: ``python/cdk_ts_runtime/...``."""
    return _asset_code("python")
