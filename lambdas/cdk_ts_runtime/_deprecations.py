"""Every name cdk-ts has deprecated, in one registry, and the one warning a deprecated name gives.

An entry says what the old name was, what replaces it, and the release that removes it. While that release is
ahead of :data:`RELEASE` the old name still works, through :func:`warn` (or :func:`renamed_attribute` in a
module's ``__getattr__``); from that release on the name is gone from the code and the entry stays, so the
upgrade page (``docs/upgrade.md``) and the public API test (``tests/docs/test_public_api.py``) can check both.
The construct side imports this module too: it is the runtime's because the runtime may not import ``cdk_ts``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from enum import StrEnum

#: The release this code is: entries removed in it or before are gone, the others warn. Bumping it past an
#: entry's ``removed_in`` makes the public API test fail until the old name is taken out of the code.
RELEASE = "0.3.0"


class Kind(StrEnum):
    """What sort of name an entry is, which says how a user meets it and how the tests look it up."""

    MODULE = "module"
    ATTRIBUTE = "attribute"  # of a module or a class: ``package.Name`` or ``package.Class.member``
    ARGUMENT = "argument"  # ``package.Callable(keyword=...)``
    ENVIRONMENT_VARIABLE = "environment variable"
    COMMAND = "command"


@dataclass(frozen=True)
class Deprecation:
    """One deprecated name: the old one, what replaces it, and the release that removes it.

    :param old: the name as users wrote it (a dotted path, ``Callable(keyword=...)``, a variable, a command).
    :param new: what to write instead, in words a user can follow.
    :param removed_in: the release without the old name.
    :param kind: what sort of name ``old`` is.
    """

    old: str
    new: str
    removed_in: str
    kind: Kind

    @property
    def removed(self) -> bool:
        """True when this release no longer has the old name."""
        return _release(self.removed_in) <= _release(RELEASE)

    @property
    def message(self) -> str:
        """What the warning for a deprecated name says: the old name, the release that removes it, what to use."""
        return f"{self.old} is deprecated and goes in {self.removed_in}: use {self.new}"


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


_RUNTIME = "cdk_ts_runtime"
_INTERNAL = "nothing: internal to cdk-ts's own functions now"
_FROM = f"from {_RUNTIME}:"
_ENVIRONMENT = (
    "ARCHIVE_BUCKET", "ARCHIVE_PREFIX", "ARCHIVE_FAILURE_BUCKET", "COMPACTION_SETTINGS", "COMPACTION_ICEBERG",
    "SHARDED_TABLE_NAME", "SHARD_METADATA_TABLE_NAME", "SHARDED_PARTITION_KEY", "SHARDED_SORT_KEY",
    "SHARDING_STRATEGY", "DEVICE_LOG_TABLE_NAME",
)

#: Every deprecation, removed or not: the one place an old name is written down with its replacement.
REGISTRY: tuple[Deprecation, ...] = (
    # -- announced in 0.2.0 for removal in 0.3.0 ---------------------------------------------------------------
    Deprecation("cdk_ts.ShardMetadataTable.grant_read_write", "grant_read_write_data", "0.3.0", Kind.ATTRIBUTE),
    Deprecation("cdk_ts.TimestreamTable.grant_write", "grant_write_data", "0.3.0", Kind.ATTRIBUTE),
    Deprecation("cdk_ts.TimestreamTable.grant_query", "grant_read_data", "0.3.0", Kind.ATTRIBUTE),
    # -- announced during 0.3's development "until 0.3.0", and the runtime's 0.2 module paths --------------------
    Deprecation("cdk_ts.rotating_tables", "cdk_ts (RotatingTimeSeriesTables)", "0.3.0", Kind.MODULE),
    Deprecation("cdk_ts.period_tables", "cdk_ts (RotatingTimeSeriesTablesBase, PeriodTableOptions)", "0.3.0",
                Kind.MODULE),
    Deprecation("cdk_ts.PeriodTablesBase", "cdk_ts.RotatingTimeSeriesTablesBase", "0.3.0", Kind.ATTRIBUTE),
    *(Deprecation(old, f"CDK_TS_{old}", "0.3.0", Kind.ENVIRONMENT_VARIABLE) for old in _ENVIRONMENT),
    # -- the archive's modules, moved into the package cdk_ts.archive in 0.3.0 ----------------------------------
    *(Deprecation(f"cdk_ts.{old}", "cdk_ts (or cdk_ts.archive)", "0.3.0", Kind.MODULE)
      for old in ("stream_archiver", "stream_archiver_base", "archive_compaction", "archive_catalog",
                  "compacted_catalog", "iceberg_table_sink")),
    Deprecation(f"{_RUNTIME}.archive_lines", _INTERNAL, "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.archiver", "cdk_ts.ArchiverMetric; replay: the cdk-ts replay command", "0.3.0",
                Kind.MODULE),
    Deprecation(f"python -m {_RUNTIME}.archiver replay", "cdk-ts replay (same flags)", "0.3.0", Kind.COMMAND),
    Deprecation(f"{_RUNTIME}.compaction", _INTERNAL, "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.compaction_iceberg", _INTERNAL, "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.compaction_plan", "cdk_ts.ColumnSpec, cdk_ts.Granularity", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.contributor_insights", _INTERNAL, "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.device_log", f"{_FROM} DeviceLogRepository, LogEntryExistsError", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.emf", f"{_FROM} EmfWriter, MetricPoint, MetricsSink, WriterMetric", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.errors", f"{_FROM} CdkTsError, ValidationError and every public error", "0.3.0",
                Kind.MODULE),
    Deprecation(f"{_RUNTIME}.items", f"{_FROM} PageLimitError; the rest is internal", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.periods", f"{_FROM} RotationPeriod, period_start, next_start, table_name, "
                "parse_table_name", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.rotation", f"{_INTERNAL} (every submodule too)", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.rotation_config", "cdk_ts.CapacityTier, cdk_ts.AutoScaling, cdk_ts.RightSizing",
                "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.rotation_metrics", "cdk_ts.RotationMetric", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.router", f"{_FROM} PeriodRouter, BatchWriter, BatchWriteError, MissingPeriodTableError",
                "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.sharding", f"{_FROM} ShardedTable, ShardStrategy, ShardGrowth, ShardInfo, ShardReadError, "
                "CorruptShardMetadataError (every submodule too)", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.sharding.CorruptShardMetadata", f"{_RUNTIME}.CorruptShardMetadataError", "0.3.0",
                Kind.ATTRIBUTE),
    Deprecation(f"{_RUNTIME}.stream_consumer", "cdk_ts.StreamConsumer", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.table_layout", f"{_RUNTIME}.TableLayout", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.throttling", f"{_FROM} classify_throttle, Throttle, ThrottleReason, ThrottleScope, "
                "ThrottleLimit, ThrottledError", "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.time_spans", _INTERNAL, "0.3.0", Kind.MODULE),
    Deprecation(f"{_RUNTIME}.timestream", f"{_FROM} TimestreamWriter, WriteResult, build_query", "0.3.0", Kind.MODULE),
    # -- deprecated in 0.3.0, removed in 0.4.0 ---------------------------------------------------------------------
    Deprecation("cdk_ts.StreamArchiver(glue_database_name=...)", "glue_database=name, create_glue_database=True",
                "0.4.0", Kind.ARGUMENT),
    Deprecation("cdk_ts.CapacityTier.on_demand", "tier.is_on_demand (or tier.billing is Billing.ON_DEMAND); "
                "the factory CapacityTier.on_demand(...) stays", "0.4.0", Kind.ATTRIBUTE),
    Deprecation(f"{_RUNTIME}.handlers.custom_resource.UnanswerableRequest", "UnanswerableRequestError", "0.4.0",
                Kind.ATTRIBUTE),
)

_BY_OLD = {entry.old: entry for entry in REGISTRY}


def entry(old: str) -> Deprecation:
    """The registry's entry for ``old``.

    :raises KeyError: when the registry has no entry of that name.
    """
    return _BY_OLD[old]


def warn(old: str, stacklevel: int = 2) -> None:
    """Warn that ``old`` is deprecated: a ``DeprecationWarning`` naming its replacement and the release removing it.

    :param old: the registry name of what the caller was asked for (a ``KeyError`` when it has none).
    :param stacklevel: as :func:`warnings.warn`'s, counted from the function that calls this one.
    """
    warnings.warn(entry(old).message, DeprecationWarning, stacklevel=stacklevel + 1)


def renamed_attribute(module: str, name: str) -> str:
    """The current name of the module attribute ``name``, after :func:`warn`; for a module's ``__getattr__``.

    :param module: the module's ``__name__``.
    :param name: the attribute looked up.
    :raises AttributeError: when ``module.name`` is not a deprecated attribute (as for any unknown name).
    """
    deprecation = _BY_OLD.get(f"{module}.{name}")
    if deprecation is None or deprecation.removed or deprecation.kind is not Kind.ATTRIBUTE:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warn(deprecation.old, stacklevel=3)
    return deprecation.new
