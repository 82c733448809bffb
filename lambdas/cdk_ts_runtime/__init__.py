"""cdk-ts's runtime: the clients and types user code imports (standard library + boto3 only).

Every public name is here, at one path: ``from cdk_ts_runtime import PeriodRouter``. :data:`__all__` lists them,
and the API reference and the deprecation promise cover these names (and the Lambda entry points
``cdk_ts_runtime.handlers.<name>.handler``) only; everything else lives in ``_``-prefixed modules that may change
in any release. The module paths of 0.2 (``cdk_ts_runtime.router``, ``cdk_ts_runtime.sharding``, ...) are gone
since 0.3.0: ``docs/upgrade.md`` lists each with what replaced it.

- Writing and reading rotating period tables: :class:`PeriodRouter` (with :class:`BatchWriter`), their
  layout :class:`TableLayout`, and the period arithmetic (:class:`RotationPeriod`, :func:`period_start`,
  :func:`next_start`, :func:`table_name`, :func:`parse_table_name`).
- Hot keys spread over shards: :class:`ShardedTable`, :class:`ShardStrategy`, :class:`ShardGrowth`,
  :class:`ShardShrink`, :class:`ShardInfo`.
- The device status log: :class:`DeviceLogRepository`. Timestream: :class:`TimestreamWriter`,
  :class:`WriteResult`, :func:`build_query`.
- Throttles: :func:`classify_throttle` and what it returns (:class:`Throttle`, :class:`ThrottleReason`,
  :class:`ThrottleScope`, :class:`ThrottleLimit`); :class:`ThrottledError` when the SDK's retries ran out.
- Writer metrics: pass ``metrics=`` a :data:`MetricsSink`, such as an :class:`EmfWriter`; it receives
  :class:`MetricPoint` values named by :class:`WriterMetric`.
- Errors: every error cdk-ts raises on purpose is a :class:`CdkTsError`; the ones these clients raise are here
  (:class:`EnvironmentVariableMissingError` from every ``from_env``, the argument errors, the clients' own).

Importing this package is cheap and imports no boto3: the clients that need it load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cdk_ts_runtime._emf import EmfWriter, MetricPoint, MetricsSink, WriterMetric
from cdk_ts_runtime._errors import (
    CdkTsError,
    EnvironmentVariableMissingError,
    UnknownKeywordError,
    ValidationError,
    WrongTypeError,
)
from cdk_ts_runtime._periods import RotationPeriod, next_start, parse_table_name, period_start, table_name
from cdk_ts_runtime._table_layout import TableLayout

if TYPE_CHECKING:  # editors and type checkers see the real classes; at run time they load on first use
    from cdk_ts_runtime._device_log import DeviceLogRepository, LogEntryExistsError, LogEntryMissingError
    from cdk_ts_runtime._items import PageLimitError
    from cdk_ts_runtime._router import BatchWriteError, BatchWriter, MissingPeriodTableError, PeriodRouter
    from cdk_ts_runtime._sharding._shrink import ShardShrink
    from cdk_ts_runtime._sharding.metadata import CorruptShardMetadataError, ShardInfo
    from cdk_ts_runtime._sharding.policy import ShardGrowth, ShardStrategy
    from cdk_ts_runtime._sharding.table import ShardedTable, ShardReadError
    from cdk_ts_runtime._throttling import (
        Throttle,
        ThrottledError,
        ThrottleLimit,
        ThrottleReason,
        ThrottleScope,
        classify_throttle,
    )
    from cdk_ts_runtime._timestream import TimestreamWriter, WriteResult, build_query

# Modules that import boto3 (or botocore), loaded when one of their names is first asked for.
_LAZY = {
    "DeviceLogRepository": "cdk_ts_runtime._device_log",
    "LogEntryExistsError": "cdk_ts_runtime._device_log",
    "LogEntryMissingError": "cdk_ts_runtime._device_log",
    "PageLimitError": "cdk_ts_runtime._items",
    "BatchWriteError": "cdk_ts_runtime._router",
    "BatchWriter": "cdk_ts_runtime._router",
    "MissingPeriodTableError": "cdk_ts_runtime._router",
    "PeriodRouter": "cdk_ts_runtime._router",
    "CorruptShardMetadataError": "cdk_ts_runtime._sharding.metadata",
    "ShardInfo": "cdk_ts_runtime._sharding.metadata",
    "ShardGrowth": "cdk_ts_runtime._sharding.policy",
    "ShardShrink": "cdk_ts_runtime._sharding._shrink",
    "ShardStrategy": "cdk_ts_runtime._sharding.policy",
    "ShardReadError": "cdk_ts_runtime._sharding.table",
    "ShardedTable": "cdk_ts_runtime._sharding.table",
    "Throttle": "cdk_ts_runtime._throttling",
    "ThrottleLimit": "cdk_ts_runtime._throttling",
    "ThrottleReason": "cdk_ts_runtime._throttling",
    "ThrottleScope": "cdk_ts_runtime._throttling",
    "ThrottledError": "cdk_ts_runtime._throttling",
    "classify_throttle": "cdk_ts_runtime._throttling",
    "TimestreamWriter": "cdk_ts_runtime._timestream",
    "WriteResult": "cdk_ts_runtime._timestream",
    "build_query": "cdk_ts_runtime._timestream",
}

#: The public face: every name users import from cdk-ts's runtime, the one place they are listed.
__all__ = [
    # rotating period tables
    "PeriodRouter",
    "BatchWriter",
    "TableLayout",
    "RotationPeriod",
    "period_start",
    "next_start",
    "table_name",
    "parse_table_name",
    # sharded hot keys
    "ShardedTable",
    "ShardStrategy",
    "ShardGrowth",
    "ShardShrink",
    "ShardInfo",
    # device status log, Timestream
    "DeviceLogRepository",
    "TimestreamWriter",
    "WriteResult",
    "build_query",
    # throttles
    "classify_throttle",
    "Throttle",
    "ThrottleReason",
    "ThrottleScope",
    "ThrottleLimit",
    # writer metrics
    "MetricsSink",
    "EmfWriter",
    "MetricPoint",
    "WriterMetric",
    # errors
    "CdkTsError",
    "ValidationError",
    "EnvironmentVariableMissingError",
    "WrongTypeError",
    "UnknownKeywordError",
    "BatchWriteError",
    "MissingPeriodTableError",
    "PageLimitError",
    "ShardReadError",
    "CorruptShardMetadataError",
    "LogEntryExistsError",
    "LogEntryMissingError",
    "ThrottledError",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # asked once: later lookups find it without this function
        return value
    raise AttributeError(f"module 'cdk_ts_runtime' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
