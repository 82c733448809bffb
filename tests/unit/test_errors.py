"""One error hierarchy: every error cdk-ts raises on purpose is a CdkTsError, under its old built-in base too."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import cdk_ts_runtime
from cdk_ts_runtime import CdkTsError, ValidationError, _deprecations


def runtime_exceptions() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(cdk_ts_runtime.__path__, "cdk_ts_runtime."):
        module = importlib.import_module(info.name)
        for _name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                found.append(value)
    return found


def test_every_runtime_exception_is_a_cdk_ts_error_named_error():
    exceptions = runtime_exceptions()
    assert len(exceptions) >= 10
    for exception in exceptions:
        assert issubclass(exception, CdkTsError), exception
        assert exception.__name__.endswith("Error"), exception


def test_a_renamed_error_keeps_its_old_name_until_0_4_0_with_the_registry_s_warning():
    module, old, new = "cdk_ts_runtime.handlers.custom_resource", "UnanswerableRequest", "UnanswerableRequestError"
    imported = importlib.import_module(module)
    message = _deprecations.entry(f"{module}.{old}").message
    assert message.startswith(f"{module}.{old} is deprecated and goes in 0.4.0: use {new}")
    with pytest.warns(DeprecationWarning, match=re.escape(message)):
        alias = getattr(imported, old)
    assert alias is getattr(imported, new)


@pytest.mark.parametrize("module", ["cdk_ts_runtime", "cdk_ts_runtime._sharding", "cdk_ts_runtime._sharding.metadata"])
def test_the_shard_metadata_error_s_0_2_name_is_gone_with_its_module(module):
    # 0.2 had it at cdk_ts_runtime.sharding, a path 0.3.0 removed (docs/upgrade.md)
    assert not hasattr(importlib.import_module(module), "CorruptShardMetadata")


def test_refused_values_are_still_value_errors():
    from cdk_ts_runtime._rotation.config import CapacityTier

    with pytest.raises(ValidationError, match="table_class 'GLACIER'") as refused:
        CapacityTier.on_demand(table_class="GLACIER")
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, CdkTsError)


def test_an_unknown_name_is_still_an_attribute_error():
    import cdk_ts_runtime._sharding as sharding

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        sharding.Nope  # noqa: B018


def test_a_refused_construct_is_a_construct_validation_error_with_its_path():
    from aws_cdk import App, Stack

    import cdk_ts

    with pytest.raises(cdk_ts.ConstructValidationError, match=r"^S/Readings: ") as refused:
        cdk_ts.RotatingTimeSeriesTables(Stack(App(), "S"), "Readings", table_prefix="readings", retain_periods=1)
    assert isinstance(refused.value, cdk_ts.CdkTsError) and isinstance(refused.value, ValueError)
    assert issubclass(cdk_ts.ConstructValidationError, cdk_ts.ValidationError)


def test_a_construct_validation_error_carries_the_path_and_each_problem():
    import pickle

    from aws_cdk import App, Stack

    import cdk_ts

    stack = Stack(App(), "S")
    with pytest.raises(cdk_ts.ConstructValidationError) as one:
        cdk_ts.RotatingTimeSeriesTables(stack, "One", table_prefix="readings", retain_periods=1)
    assert one.value.construct_path == "S/One"
    assert one.value.problems == (str(one.value).removeprefix("S/One: "),)
    assert one.value.problems[0].startswith("retain_periods 1 must be >= 2")

    with pytest.raises(cdk_ts.ConstructValidationError) as many:
        cdk_ts.RotatingTimeSeriesTables(stack, "Many", table_prefix="bad prefix!", retain_periods=1, period="hourly")
    assert many.value.construct_path == "S/Many"
    assert [p.split(" ")[0] for p in many.value.problems] == ["table_prefix", "period", "retain_periods"]
    assert str(many.value) == "S/Many: 3 problems:\n" + "\n".join(f"  - {p}" for p in many.value.problems)

    copy = pickle.loads(pickle.dumps(many.value))
    assert (copy.construct_path, copy.problems, str(copy)) == ("S/Many", many.value.problems, str(many.value))


def test_a_missing_environment_variable_is_a_cdk_ts_error_and_still_a_key_error():
    from cdk_ts_runtime import TableLayout
    from cdk_ts_runtime._errors import EnvironmentVariableMissingError

    with pytest.raises(KeyError) as missing:
        TableLayout.from_env({})
    assert isinstance(missing.value, EnvironmentVariableMissingError) and isinstance(missing.value, CdkTsError)
    assert missing.value.names == ("CDK_TS_TABLE_PREFIX",)
    assert str(missing.value).startswith("environment variable CDK_TS_TABLE_PREFIX is not set; bind the function")
