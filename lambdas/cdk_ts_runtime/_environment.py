"""The environment variables cdk-ts's constructs set and its runtime reads: every name, one prefix (``CDK_TS_``).

The construct side writes these names (``bind``, the functions it creates) and the runtime's ``from_env``
readers read them back, so both import them from here. Variables that had another name before 0.3
(``ARCHIVE_*``, ``COMPACTION_*``, ``SHARDED_*``, ``SHARDING_*``, ``SHARD_METADATA_*``, ``DEVICE_LOG_*``)
are listed in :data:`RENAMED`; readers still accept the old name for one release, with a
``DeprecationWarning``, and the new name wins when both are set.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from cdk_ts_runtime._errors import EnvironmentVariableMissingError

PREFIX = "CDK_TS_"

# -- a rotation's layout and settings (RotatingTimeSeriesTables: its function and the functions it binds) --
TABLE_PREFIX = "CDK_TS_TABLE_PREFIX"
PERIOD = "CDK_TS_PERIOD"
PARTITION_KEY = "CDK_TS_PARTITION_KEY"
PARTITION_KEY_TYPE = "CDK_TS_PARTITION_KEY_TYPE"
SORT_KEY = "CDK_TS_SORT_KEY"
SORT_KEY_TYPE = "CDK_TS_SORT_KEY_TYPE"
TIME_UNIT = "CDK_TS_TIME_UNIT"
ROTATION_CONFIG = "CDK_TS_ROTATION_CONFIG"
ROTATION_LOCK_TABLE = "CDK_TS_ROTATION_LOCK_TABLE"
ROTATION_TIMEOUT_SECONDS = "CDK_TS_ROTATION_TIMEOUT_SECONDS"
STREAM_CONSUMER = "CDK_TS_STREAM_CONSUMER"

# -- the archive (StreamArchiver's function, ArchiveCompaction's function) ---------------------------------
ARCHIVE_BUCKET = "CDK_TS_ARCHIVE_BUCKET"
ARCHIVE_PREFIX = "CDK_TS_ARCHIVE_PREFIX"
ARCHIVE_FAILURE_BUCKET = "CDK_TS_ARCHIVE_FAILURE_BUCKET"
COMPACTION_SETTINGS = "CDK_TS_COMPACTION_SETTINGS"
COMPACTION_ICEBERG = "CDK_TS_COMPACTION_ICEBERG"
ICEBERG_ROUTE = "CDK_TS_ICEBERG_ROUTE"
COMPACTION_QUEUE_URL = "CDK_TS_COMPACTION_QUEUE_URL"
COMPACTION_ENVELOPE = "CDK_TS_COMPACTION_ENVELOPE"

# -- write sharding (ShardMetadataTable.bind) ---------------------------------------------------------------
SHARDED_TABLE_NAME = "CDK_TS_SHARDED_TABLE_NAME"
SHARD_METADATA_TABLE_NAME = "CDK_TS_SHARD_METADATA_TABLE_NAME"
SHARDED_PARTITION_KEY = "CDK_TS_SHARDED_PARTITION_KEY"
SHARDED_SORT_KEY = "CDK_TS_SHARDED_SORT_KEY"
SHARDING_STRATEGY = "CDK_TS_SHARDING_STRATEGY"

# -- the device-status log (DeviceLogTable.bind) ------------------------------------------------------------
DEVICE_LOG_TABLE_NAME = "CDK_TS_DEVICE_LOG_TABLE_NAME"

# -- Timestream for LiveAnalytics (TimestreamTable.bind) ----------------------------------------------------
TIMESTREAM_DATABASE_NAME = "CDK_TS_TIMESTREAM_DATABASE_NAME"
TIMESTREAM_TABLE_NAME = "CDK_TS_TIMESTREAM_TABLE_NAME"

# -- the test harness (cdk_ts.testing): set by the user, never by a construct -------------------------------
DYNALITE_CLI = "CDK_TS_DYNALITE_CLI"

#: Current name -> the name it had until 0.2; read for one release (0.3), with a DeprecationWarning.
RENAMED: dict[str, str] = {
    ARCHIVE_BUCKET: "ARCHIVE_BUCKET",
    ARCHIVE_PREFIX: "ARCHIVE_PREFIX",
    ARCHIVE_FAILURE_BUCKET: "ARCHIVE_FAILURE_BUCKET",
    COMPACTION_SETTINGS: "COMPACTION_SETTINGS",
    COMPACTION_ICEBERG: "COMPACTION_ICEBERG",
    SHARDED_TABLE_NAME: "SHARDED_TABLE_NAME",
    SHARD_METADATA_TABLE_NAME: "SHARD_METADATA_TABLE_NAME",
    SHARDED_PARTITION_KEY: "SHARDED_PARTITION_KEY",
    SHARDED_SORT_KEY: "SHARDED_SORT_KEY",
    SHARDING_STRATEGY: "SHARDING_STRATEGY",
    DEVICE_LOG_TABLE_NAME: "DEVICE_LOG_TABLE_NAME",
}


def current_names(env: Mapping[str, str]) -> Mapping[str, str]:
    """``env`` with each variable set only under its old name (:data:`RENAMED`) also under its current name.

    Each old name used warns (``DeprecationWarning``) with the new name to set. A variable set under both
    names keeps the current name's value. ``env`` itself is not changed; when no old name is used it is
    returned as it is.

    :param env: an environment, usually ``os.environ`` or a function's ``Environment.Variables``.
    """
    return _current_names(env)


def required(env: Mapping[str, str], names: tuple[str, ...], way_out: str) -> Mapping[str, str]:
    """``env`` as :func:`current_names` gives it, once each variable of ``names`` is known to be set (not empty).

    :param env: an environment, usually ``os.environ``.
    :param names: the variables the reader cannot do without.
    :param way_out: what sets them, for the error (e.g. ``"bind the function with DeviceLogTable.bind"``).
    :raises EnvironmentVariableMissingError: (a ``KeyError``) naming every variable that is not set.
    """
    current = _current_names(env)
    missing = [name for name in names if not current.get(name)]
    if missing:
        many = len(missing) > 1
        raise EnvironmentVariableMissingError(
            f"environment variable{'s' if many else ''} {', '.join(missing)} {'are' if many else 'is'} not set; "
            f"{way_out}",
            *missing,
        )
    return current


def read(env: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """The value of the variable ``name`` in ``env``, or of its old name with a ``DeprecationWarning``.

    :param env: an environment, usually ``os.environ``.
    :param name: the variable's current name; it wins when both names are set.
    :param default: the value when neither name is set.
    """
    if name in env:
        return env[name]
    old = RENAMED.get(name)
    if old is None or old not in env:
        return default
    _warn_renamed(old, name, stacklevel=4)
    return env[old]


def _current_names(env: Mapping[str, str]) -> Mapping[str, str]:
    """The work of :func:`current_names` and :func:`required`; its warnings point at whoever called the reader."""
    found = {new: old for new, old in RENAMED.items() if old in env and new not in env}
    for new, old in found.items():
        _warn_renamed(old, new, stacklevel=5)
    return {**env, **{new: env[old] for new, old in found.items()}} if found else env


def _warn_renamed(old: str, new: str, stacklevel: int) -> None:
    """Warn about ``old``; ``stacklevel`` counts from this function to the code that called the reader."""
    warnings.warn(
        f"environment variable {old} is renamed {new} (every cdk-ts variable starts with {PREFIX}); the old "
        "name is still read for one release: set the new one (bind sets it when the function is deployed again)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
