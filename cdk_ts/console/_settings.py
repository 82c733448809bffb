"""The rotation's settings as an operator gives them to ``cdk-ts status``/``rotate``, each checked where it was given.

A setting can come from a flag (``--period``, ``--rotation-config``, ``--retain-periods``...) or from the
deployed function's environment (``--function``). Each source is checked on its own before it is merged, so a
refusal names what the operator typed: ``--period 'hourly'``, not ``CDK_TS_PERIOD``; ``function 'f':
environment variable CDK_TS_ROTATION_CONFIG``, not a flag the operator never gave.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from cdk_ts.console import ConsoleError
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import json_object_env, json_setting
from cdk_ts_runtime._periods import RotationPeriod
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG, RotationConfig
from cdk_ts_runtime._stream_consumer import StreamConsumer
from cdk_ts_runtime._table_layout import ENV_VARIABLES, TableLayout

#: The layout's fields and the flags that give them.
LAYOUT_FLAGS = {
    "table_prefix": "--table-prefix", "period": "--period", "partition_key": "--partition-key",
    "partition_key_type": "--partition-key-type", "sort_key": "--sort-key", "sort_key_type": "--sort-key-type",
}
#: The rotation settings that have a flag of their own.
CONFIG_FLAGS = {"retain_periods": "--retain-periods", "archive_bucket": "--archive-bucket",
                "archive_prefix": "--archive-prefix"}


def checked_flags(args: argparse.Namespace, base: dict[str, str]) -> tuple[dict[str, str | None], dict[str, Any]]:
    """The layout fields and rotation settings the flags give, laid over ``base``, each refused naming its source.

    :param args: the parsed flags.
    :param base: the rotation function's environment (``--function``), or empty.
    :return: ``(layout, config)`` for :func:`cdk_ts.console.settings_env`.
    :raises ConsoleError: naming the flag and its value (or the function's variable, for a value it gave).
    """
    if not args.function and not args.table_prefix:
        raise ConsoleError("no rotation given: pass --function NAME (the rotation function) or --table-prefix")
    layout = {field: getattr(args, field) for field in LAYOUT_FLAGS}
    _check_layout(layout, base, args.function)
    given: dict[str, str] = {}  # each config key given by a flag, and how that flag is named in an error
    config: dict[str, Any] = {}
    if args.rotation_config is not None:
        config = json_setting("--rotation-config", args.rotation_config)
        if not isinstance(config, dict):
            raise ConsoleError(f"--rotation-config must be a JSON object, got {type(config).__name__}")
        given = dict.fromkeys(map(str, config), "--rotation-config")
    for key, flag in CONFIG_FLAGS.items():
        value = getattr(args, key)
        if value is not None:
            config[key] = value
            given[key] = f"{flag} {value!r}"
    _check_config(config, given, base, args.function)
    return layout, config


def checked_function_settings(function: str, env: dict[str, str]) -> None:
    """Refuse a function whose own settings do not parse, naming the function and the variable.

    :raises ConsoleError: ``function 'NAME': environment variable ...: why``.
    """
    try:
        TableLayout.from_env(env)
        RotationConfig.from_env(env)
        StreamConsumer.from_env(env)
    except (ValidationError, TypeError, KeyError) as error:
        raise ConsoleError(f"function {function!r}: {error.args[0] if error.args else error}") from None


def _named(error: Exception, given: dict[str, str], function: str | None, variable: str) -> str:
    """Where the values ``error`` is about came from: the flags that gave them, else the function's variable."""
    words = set(re.findall(r"\w+", str(error)))
    flags = list(dict.fromkeys(source for key, source in given.items() if key in words))
    if flags:
        return ", ".join(flags)
    if function:
        return f"function {function!r}: environment variable {variable}"
    return ", ".join(dict.fromkeys(given.values())) or "the flags"


def _check_layout(layout: dict[str, str | None], base: dict[str, str], function: str | None) -> None:
    flags = {field: value for field, value in layout.items() if value is not None}
    if "period" in flags:
        try:
            RotationPeriod.parse(flags["period"])
        except ValueError as error:
            raise ConsoleError(f"--period {flags['period']!r}: {error}") from None
    from_function = {field: base[variable] for field, variable in ENV_VARIABLES.items() if variable in base}
    try:
        TableLayout(**{**from_function, **flags})
    except (ValueError, TypeError) as error:
        given = {field: f"{LAYOUT_FLAGS[field]} {value!r}" for field, value in flags.items()}
        raise ConsoleError(f"{_named(error, given, function, 'CDK_TS_...')}: {error}") from None


def _check_config(config: dict[str, Any], given: dict[str, str], base: dict[str, str], function: str | None) -> None:
    merged = {**(json_object_env(base, ENV_ROTATION_CONFIG) or {}), **config}
    try:
        RotationConfig.from_dict(merged)
    except (ValidationError, TypeError) as error:
        raise ConsoleError(f"{_named(error, given, function, ENV_ROTATION_CONFIG)}: {error}") from None
