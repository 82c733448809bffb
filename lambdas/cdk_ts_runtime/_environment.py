"""The environment variables cdk-ts's constructs set and its runtime reads: every name, one prefix (``CDK_TS_``).

The construct side writes these names (``bind``, the functions it creates) and the runtime's ``from_env``
readers read them back, so both import them from here. Variables that had another name before 0.3
(``ARCHIVE_*``, ``COMPACTION_*``, ``SHARDED_*``, ``SHARDING_*``, ``SHARD_METADATA_*``, ``DEVICE_LOG_*``)
are listed in :data:`RENAMED`: 0.3.0 removed the old names, and a reader that finds one set without the new
one fails at once, naming the variable to set (``cdk_ts_runtime._deprecations`` holds the renames).
"""

from __future__ import annotations

from collections.abc import Mapping

from cdk_ts_runtime._deprecations import REGISTRY, Kind, entry
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

#: Current name -> the name it had until 0.2, removed in 0.3.0 (the registry's environment variables).
RENAMED: dict[str, str] = {
    renamed.new: renamed.old for renamed in REGISTRY if renamed.kind is Kind.ENVIRONMENT_VARIABLE and renamed.removed
}


def refuse_removed(env: Mapping[str, str], names: tuple[str, ...]) -> None:
    """Fail when a variable of ``names`` is set in ``env`` only under its removed name (:data:`RENAMED`).

    Only the reader's own variables are checked: a function may set ``ARCHIVE_BUCKET`` for code of its own.
    A variable set under both names is read under its current name, as the constructs set it.

    :param env: an environment, usually ``os.environ`` or a function's ``Environment.Variables``.
    :param names: the variables the reader reads, by their current names.
    :raises EnvironmentVariableMissingError: (a ``KeyError``) naming each such variable and the name to set
        instead: quietly taking a default in its place would change what the code does.
    """
    stale = {name: RENAMED[name] for name in names if name in RENAMED and RENAMED[name] in env and name not in env}
    if stale:
        raise EnvironmentVariableMissingError(
            "; ".join(f"environment variable {old} was renamed {new} and is no longer read (removed in "
                      f"{entry(old).removed_in})" for new, old in stale.items())
            + f": set {', '.join(stale)} instead (every cdk-ts variable starts with {PREFIX}; bind sets them "
            "when the function is deployed again)",
            *stale,
        )


def required(
    env: Mapping[str, str], names: tuple[str, ...], way_out: str, *, optional: tuple[str, ...] = ()
) -> Mapping[str, str]:
    """``env``, once each variable of ``names`` is known to be set (not empty).

    :param env: an environment, usually ``os.environ``.
    :param names: the variables the reader cannot do without.
    :param way_out: what sets them, for the error (e.g. ``"bind the function with DeviceLogTable.bind"``).
    :param optional: the other variables the reader reads, checked only for a removed name (:func:`refuse_removed`).
    :raises EnvironmentVariableMissingError: (a ``KeyError``) naming every variable that is not set, or set only
        under its removed name.
    """
    refuse_removed(env, names + optional)
    missing = [name for name in names if not env.get(name)]
    if missing:
        many = len(missing) > 1
        raise EnvironmentVariableMissingError(
            f"environment variable{'s' if many else ''} {', '.join(missing)} {'are' if many else 'is'} not set; "
            f"{way_out}",
            *missing,
        )
    return env


def read(env: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """The value of the variable ``name`` in ``env``, or ``default`` when it is not set.

    :param env: an environment, usually ``os.environ``.
    :param name: the variable's name.
    :param default: the value when it is not set.
    :raises EnvironmentVariableMissingError: when ``name`` is set only under its removed name (:func:`refuse_removed`).
    """
    refuse_removed(env, (name,))
    return env.get(name, default)
