"""Every number a user gives is checked: NaN, infinities and values outside the parameter's meaning are refused.

The numeric parameters are found by introspection over the public API (each package's ``__all__``; for a
runtime module without one, the classes and functions it defines), so a new parameter is covered without
editing this file. A new public callable with numeric parameters needs a valid call in ``VALID_CALLS`` (or
an exemption with its reason): the completeness test names it.
"""

from __future__ import annotations

import importlib
import inspect
import math
import typing
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts_runtime import CdkTsError

PUBLIC_MODULES = (
    "cdk_ts",
    "cdk_ts.plan",
    "cdk_ts_runtime._router",
    "cdk_ts_runtime._device_log",
    "cdk_ts_runtime._timestream",
    "cdk_ts_runtime._periods",
    "cdk_ts_runtime._table_layout",
    "cdk_ts_runtime._items",
    "cdk_ts_runtime._stream_consumer",
    "cdk_ts_runtime._rotation.config",
    "cdk_ts_runtime._archiver",
    "cdk_ts_runtime._rotation.rotator",
    "cdk_ts_runtime._sharding",
)

#: Callables whose numbers are not a user's input, each with the reason.
EXEMPT = {
    "BatchWriteError": "an error the router raises; its attempts count is the router's",
    "WriteResult": "a result the Timestream writer returns",
    "CapacityPlan": "a result capacity() returns from checked inputs",
    "StrategyCost": "a result compare_strategies() returns",
    "StrategyComparison": "a result compare_strategies() returns",
    "ShardInfo": "read from the metadata table and checked there (CorruptShardMetadataError)",
    "ShardInfo.count_at": "a method of a value read from the metadata table",
    "ShardInfo.count_from": "a method of a value read from the metadata table",
    "ShardInfo.shards_over": "a method of a value read from the metadata table (its window may be unbounded)",
}

#: Parameters where a negative number means something (a shift backwards, a time before 1970).
NEGATIVE_MEANS_SOMETHING = {
    ("shift", "count"),
    ("PeriodRouter.table_for", "when"),
    ("PeriodRouter.tables_between", "start"),
    ("PeriodRouter.tables_between", "end"),
    ("PeriodRouter.query", "start"),
    ("PeriodRouter.query", "end"),
    ("TableLayout.time_of", "sort_value"),
}

_NUMBER_TYPES = (int, float, Decimal)
_STAND_IN_CALLED = "'object' object has no attribute"


def _stack():
    from aws_cdk import App, Stack

    return Stack(App(), "S")


def _device_log(**kw):
    from cdk_ts import DeviceLogTable

    return DeviceLogTable(_stack(), "Log", **kw)


def _archiver(**kw):
    from aws_cdk import aws_dynamodb as dynamodb

    from cdk_ts import DeviceLogTable, StreamArchiver

    stack = _stack()
    source = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    return StreamArchiver(stack, "Archiver", source=source, **kw)


def _rotating(**kw):
    from cdk_ts import RotatingTimeSeriesTables

    return RotatingTimeSeriesTables(_stack(), "Tables", table_prefix="readings", **kw)


def _period_throttled_keys(**kw):
    from cdk_ts import MonitoringDashboard

    tables = _rotating(throttled_keys_insights=True)
    return MonitoringDashboard(tables.node.scope, "Dashboard").show_period_throttled_keys(tables, **kw)


def _iceberg_sink(**kw):
    from aws_cdk import aws_dynamodb as dynamodb

    from cdk_ts import DeviceLogTable, IcebergTableSink

    stack = _stack()
    source = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    return IcebergTableSink(stack, "Sink", table_bucket_name="telemetry-sink", source=source, **kw)


def _shard_metadata(**kw):
    from aws_cdk import aws_dynamodb as dynamodb

    from cdk_ts import ShardMetadataTable

    stack = _stack()
    main = dynamodb.Table(
        stack, "Main", partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
        sort_key=dynamodb.Attribute(name="sk", type=dynamodb.AttributeType.NUMBER),
    )
    return ShardMetadataTable(stack, "Meta", main_table=main, **kw)


def _router(**kw):
    from cdk_ts_runtime import PeriodRouter

    return PeriodRouter("readings", dynamodb_client=object(), **kw)


def _sharded(**kw):
    from cdk_ts_runtime import ShardedTable

    return ShardedTable("t", "m", partition_key="pk", sort_key="sk", dynamodb_client=object(), **kw)


def _store(**kw):
    from cdk_ts_runtime._sharding import ShardMetadataStore

    base = {"partition_key": "pk", "dynamodb": object, "cooldown_seconds": 10, "cache_ttl_seconds": 5,
            "clock": lambda: 0.0}
    return ShardMetadataStore("m", **{**base, **kw})


def _window(**kw):
    from cdk_ts_runtime._sharding import ThrottleWindow

    return ThrottleWindow(**{"window_seconds": 10, "clock": lambda: 0.0, **kw})


def _rotator():
    from cdk_ts_runtime import TableLayout
    from cdk_ts_runtime._rotation.config import RotationConfig
    from cdk_ts_runtime._rotation.rotator import TableRotator

    rotator = TableRotator(TableLayout("readings"), RotationConfig(), dynamodb=object())
    rotator.clock = _at
    return rotator


def _info():
    from cdk_ts_runtime import ShardInfo

    return ShardInfo(1, 0, ((0, 1),), 1, 0, 64)


def _at():
    return datetime(2026, 3, 1, tzinfo=UTC)


#: A valid call of each public callable with numeric parameters; the test replaces one keyword with a bad value.
VALID_CALLS: dict[str, Callable[..., Any]] = {
    "AutoScaling": lambda **kw: _rt("rotation.config").AutoScaling(**kw),
    "CapacityTier": lambda **kw: _rt("rotation.config").CapacityTier(**{"read_capacity": 5, "write_capacity": 5, **kw}),
    "CapacityTier.provisioned": lambda **kw: _rt("rotation.config").CapacityTier.provisioned(
        **{"read": 5, "write": 5, **kw}
    ),
    "RightSizing": lambda **kw: _rt("rotation.config").RightSizing(**kw),
    "RightSizing.size": lambda **kw: _rt("rotation.config").RightSizing().size(**{"peak": 10.0, **kw}),
    "RotationConfig": lambda **kw: _rt("rotation.config").RotationConfig(**kw),
    "StreamConsumer": lambda **kw: _rt("stream_consumer").StreamConsumer(**{"function_name": "f", **kw}),
    "DeviceLogTable": _device_log,
    "StreamArchiver": _archiver,
    "IcebergTableSink": _iceberg_sink,
    "CompactionOptions": lambda **kw: __import__("cdk_ts").CompactionOptions(
        **{"pyarrow_layer_arn": "arn:aws:lambda:us-east-1:336392948345:layer:AWSSDKPandas-Python312:16", **kw}
    ),
    "RotatingTimeSeriesTables": _rotating,
    "MonitoringDashboard.show_period_throttled_keys": _period_throttled_keys,
    "ShardMetadataTable": _shard_metadata,
    "PeriodRouter": _router,
    "PeriodRouter.table_for": lambda **kw: _router().table_for(**{"when": _at(), **kw}),
    "PeriodRouter.tables_between": lambda **kw: _router().tables_between(**{"start": _at(), "end": _at(), **kw}),
    "PeriodRouter.query": lambda **kw: _router().query(**{"partition_value": 1, "start": _at(), "end": _at(), **kw}),
    "TableLayout.time_of": lambda **kw: _rt("table_layout").TableLayout("readings").time_of(**{"sort_value": 0, **kw}),
    "DeviceLogRepository": lambda **kw: _rt("device_log").DeviceLogRepository("log", dynamodb_client=object(), **kw),
    "TimestreamWriter": lambda **kw: _rt("timestream").TimestreamWriter(
        "db", "t", dimensions=["device"], client=object(), **kw
    ),
    "query_all": lambda **kw: _rt("items").query_all(object(), {"TableName": "t"}, **kw),
    "shift": lambda **kw: _rt("periods").shift("daily", _at(), **{"count": 1, **kw}),
    "TableRotator.run": lambda **kw: _rotator().run("create_new", _at(), **kw),
    "ShardedTable": _sharded,
    "ShardedTable.grow": lambda **kw: _sharded().grow("key", _info(), **kw),
    "ShardedTable.physical_key": lambda **kw: _sharded().physical_key("key", **{"shard": 1, **kw}),
    "ShardMetadataStore": _store,
    "ShardMetadataStore.read": lambda **kw: _store().read("key", **kw),
    "ShardMetadataStore.ensure": lambda **kw: _store().ensure("key", _info(), **{"cap": 64, **kw}),
    "ShardMetadataStore.grow": lambda **kw: _store().grow("key", _info(), **{"target": 2, "cap": 64, **kw}),
    "ShardMetadataStore.shrink": lambda **kw: _store().shrink("key", _info(), **{"target": 1, **kw}),
    "ShardMetadataStore.changed_within": lambda **kw: _store().changed_within("key", _info(), **{"seconds": 1, **kw}),
    "ShardShrink": lambda **kw: __import__("cdk_ts_runtime").ShardShrink(**kw),
    "ThrottleWindow": _window,
    "ThrottleWindow.record": lambda **kw: _window().record(
        "key", **{"count": 1, "first": True, "accepted": False, **kw}
    ),
    "ThrottleWindow.settling": lambda **kw: _window().settling("key", **{"count": 1, **kw}),
    "ThrottleWindow.saturated_share": lambda **kw: _window().saturated_share("key", **{"count": 1, **kw}),
    "ThrottleWindow.share": lambda **kw: _window().share("key", **{"count": 1, **kw}),
    "CloudWatchScope": lambda **kw: _rt("sharding").CloudWatchScope(
        "t", object, lambda: 0.0, **{"table_headroom": 0.8, **kw}
    ),
    "shards_needed": lambda **kw: _rt("sharding").shards_needed(
        **{"count": 1, "throttled_share": 0.5, "growth": "double", "cap": 64, **kw}
    ),
    "write_units_per_item": lambda **kw: _plan().write_units_per_item(**{"item_size_bytes": 100, **kw}),
    "read_units_per_item": lambda **kw: _plan().read_units_per_item(**{"item_size_bytes": 100, **kw}),
    "capacity": lambda **kw: _plan().capacity(**{"writes_per_second": 10, "reads_per_second": 10,
                                                 "item_size_bytes": 100, **kw}),
    "compare_strategies": lambda **kw: _plan().compare_strategies(**{
        "peak_writes_per_second": 10, "average_writes_per_second": 5, "peak_reads_per_second": 10,
        "average_reads_per_second": 5, "item_size_bytes": 100, "period": "daily", "retain_periods": 30, **kw}),
}


def _rt(module: str):
    return importlib.import_module(f"cdk_ts_runtime._{module}")


def _plan():
    return importlib.import_module("cdk_ts.plan")


# ---- discovery ----------------------------------------------------------------------------------


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [
        name for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
        and (inspect.isclass(value) or inspect.isfunction(value))
    ]


def _hints(function: Callable) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function, include_extras=True)
    except Exception:  # noqa: BLE001 - names imported only for type checkers: read the text
        return {}


def _is_numeric(annotation: Any) -> bool:
    if isinstance(annotation, typing.ForwardRef):
        annotation = annotation.__forward_arg__
    if isinstance(annotation, str):
        words = {w.strip() for w in annotation.replace("|", " ").replace(",", " ").split()}
        return bool(words & {"int", "float", "Decimal"}) and "[" not in annotation
    if annotation in _NUMBER_TYPES:
        return True
    return typing.get_origin(annotation) in (typing.Union, type(int | None)) and any(
        a in _NUMBER_TYPES for a in typing.get_args(annotation)
    )


def _unpacked_keys(function: Callable, annotation: Any) -> dict[str, Any]:
    """The keys of ``**kwargs: Unpack[SomeTypedDict]`` with their annotations (the TypedDict's own, as text)."""
    if isinstance(annotation, str) and annotation.startswith("Unpack[") and annotation.endswith("]"):
        name = annotation[len("Unpack[") : -1]
        module = importlib.import_module(function.__module__)
        typed_dict = getattr(module, name, None) or getattr(importlib.import_module("cdk_ts"), name)
    elif typing.get_origin(annotation) is typing.Unpack:
        (typed_dict,) = typing.get_args(annotation)
    else:
        return {}
    return dict(typed_dict.__annotations__)


def _numeric_parameters(function: Callable) -> list[str]:
    signature = inspect.signature(function)
    hints = _hints(function)
    found = []
    for parameter in signature.parameters.values():
        annotation = hints.get(parameter.name, parameter.annotation)
        if parameter.kind is parameter.VAR_KEYWORD:
            found += [key for key, value in _unpacked_keys(function, annotation).items() if _is_numeric(value)]
        elif parameter.kind is not parameter.VAR_POSITIONAL and _is_numeric(annotation):
            found.append(parameter.name)
    return found


def _callables(name: str, value: Any) -> list[tuple[str, Callable]]:
    if inspect.isfunction(value):
        return [(name, value)]
    if not inspect.isclass(value) or typing.is_typeddict(value) or getattr(value, "_is_protocol", False):
        return []
    found = [(name, value.__init__)]
    for attribute, member in vars(value).items():
        if attribute.startswith("_"):
            continue
        if isinstance(member, classmethod | staticmethod):
            found.append((f"{name}.{attribute}", member.__func__))
        elif inspect.isfunction(member):
            found.append((f"{name}.{attribute}", member))
    return found


def discover() -> dict[str, list[str]]:
    """Every public callable's numeric parameters, by qualified name."""
    found: dict[str, list[str]] = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in _public_names(module):
            for qualified, function in _callables(name, getattr(module, name)):
                if not inspect.isfunction(function):
                    continue  # a constructor inherited from a builtin (Exception, dict): nothing of ours to check
                numeric = _numeric_parameters(function)
                if numeric:
                    found.setdefault(qualified, [])
                    found[qualified] += [p for p in numeric if p not in found[qualified]]
    return found


NUMERIC = discover()
CASES = sorted(
    (name, parameter) for name, parameters in NUMERIC.items() if name not in EXEMPT for parameter in parameters
)


def test_every_public_numeric_parameter_has_a_valid_call_or_an_exemption():
    missing = sorted(name for name in NUMERIC if name not in VALID_CALLS and name not in EXEMPT)
    assert not missing, f"add a valid call to VALID_CALLS (or an exemption with its reason) for: {missing}"


def test_discovery_finds_the_known_parameters():
    # a guard on the discovery itself: were it to find nothing, every property below would pass vacuously
    assert "cooldown_seconds" in NUMERIC["ShardedTable"]
    assert "backoff_base_seconds" in NUMERIC["PeriodRouter"]
    assert "max_read_request_units" in NUMERIC["DeviceLogTable"]  # a key of **capacity: Unpack[...]
    assert "retain_periods" in NUMERIC["RotatingTimeSeriesTables"]
    assert "item_size_bytes" in NUMERIC["capacity"]
    assert len(CASES) > 60


def _bad_values(name: str, parameter: str) -> st.SearchStrategy:
    not_finite = st.sampled_from([math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("sNaN"), Decimal("-Infinity")])
    if (name, parameter) in NEGATIVE_MEANS_SOMETHING:
        return not_finite
    negative = st.one_of(st.integers(max_value=-1), st.floats(max_value=-1e-9, allow_infinity=False))
    return st.one_of(not_finite, negative)


@pytest.mark.parametrize(("name", "parameter"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_bad_number_is_refused_naming_the_parameter(name, parameter, data):
    value = data.draw(_bad_values(name, parameter), label=parameter)
    with pytest.raises((ValueError, CdkTsError)) as raised:
        VALID_CALLS[name](**{parameter: value})
    assert parameter in str(raised.value), f"{name}({parameter}={value!r}) refused without naming it: {raised.value}"


@pytest.mark.parametrize("name", sorted(VALID_CALLS))
def test_the_valid_calls_are_valid(name):
    # the property above means something only if the call succeeds with good numbers
    try:
        VALID_CALLS[name]()
    except (ValueError, CdkTsError, AttributeError) as error:
        # the stand-in client has no methods: reaching it means the input was accepted
        assert _STAND_IN_CALLED in str(error), f"{name}'s valid call is refused: {error}"
