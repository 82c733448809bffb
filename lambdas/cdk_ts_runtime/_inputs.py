"""Checks for the numbers and times users pass, written once: every refusal names the parameter and its range.

Public constructors, functions and command-line flags call these at their entry, so NaN, infinities and
values outside a parameter's meaning fail where they are given, not later as a hung loop, a negative sleep
or a table name the rotation cannot parse.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from cdk_ts_runtime._errors import ValidationError

#: The years a table label can hold: four digits, so ``{prefix}_{label}`` parses back to the same period.
MIN_YEAR, MAX_YEAR = 1000, 9999


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def _shown(bound: float) -> str:
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


def _range_text(minimum: float | None, maximum: float | None, above: bool) -> str:
    low = "" if minimum is None else (f"> {_shown(minimum)}" if above else f">= {_shown(minimum)}")
    high = "" if maximum is None else f"<= {_shown(maximum)}"
    return " and ".join(part for part in (low, high) if part)


def _checked(
    name: str, value: object, kind: str, of_kind: bool, minimum: float | None, maximum: float | None, *,
    above: bool, optional: bool, hint: str,
) -> object:
    """``value`` when it is None and ``optional``, or of ``kind`` and in range; else a refusal naming ``name``."""
    if value is None and optional:
        return None
    ok = of_kind
    if ok and minimum is not None:
        ok = value > minimum if above else value >= minimum  # type: ignore[operator]
    if ok and maximum is not None:
        ok = value <= maximum  # type: ignore[operator]
    if not ok:
        wanted = " ".join(part for part in (kind, _range_text(minimum, maximum, above)) if part)
        tail = " (or None)" if optional else ""
        raise ValidationError(f"{name} {value!r} must be {wanted}{tail}" + (f": {hint}" if hint else ""))
    return value


def number(
    name: str, value: object, *, minimum: float | None = 0, maximum: float | None = None, above: bool = False,
    optional: bool = False, hint: str = "",
) -> float | int | Decimal | None:
    """``value`` when it is a finite number in range; else a :class:`ValidationError` naming ``name``.

    :param name: the parameter's name, as the caller spells it.
    :param value: what was given.
    :param minimum: the smallest value that means something (None for no lower bound).
        Default: 0.
    :param maximum: the largest.
        Default: None — no upper bound.
    :param above: ``minimum`` itself is refused (a strict bound).
        Default: False.
    :param optional: None is accepted (and returned).
        Default: False.
    :param hint: what the value is for, appended to the message (the way out).
        Default: none.
    """
    finite = _is_number(value) and (
        value.is_finite() if isinstance(value, Decimal) else not isinstance(value, float) or math.isfinite(value)
    )
    return _checked(name, value, "a finite number", finite, minimum, maximum, above=above, optional=optional, hint=hint)


def whole(
    name: str, value: object, *, minimum: int | None = 1, maximum: int | None = None, optional: bool = False,
    hint: str = "",
) -> int | None:
    """``value`` when it is a whole number (an ``int``, not a bool) in range; else a :class:`ValidationError`.

    :param name: the parameter's name.
    :param value: what was given.
    :param minimum: the smallest value that means something (None for no lower bound).
        Default: 1.
    :param maximum: the largest.
        Default: None — no upper bound.
    :param optional: None is accepted (and returned).
        Default: False.
    :param hint: what the value is for (the way out).
        Default: none.
    """
    integer = isinstance(value, int) and not isinstance(value, bool)
    return _checked(name, value, "a whole number", integer, minimum, maximum, above=False, optional=optional, hint=hint)


def table_time(name: str, when: datetime) -> datetime:
    """``when`` in UTC, if a period table can be named for it (years 1000-9999); else a :class:`ValidationError`.

    A naive datetime is refused too (every boundary is UTC; a missing zone is not guessed).
    """
    if not isinstance(when, datetime):
        raise ValidationError(f"{name} {when!r} is not a datetime")
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValidationError(f"{name} {when.isoformat()} has no time zone; pass an aware datetime (UTC)")
    try:
        utc = when.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or not MIN_YEAR <= utc.year <= MAX_YEAR:
        raise ValidationError(
            f"{name} {when.isoformat()} is outside the years {MIN_YEAR}-{MAX_YEAR} that period table names hold "
            "(four-digit years)"
        )
    return utc


#: The deepest nesting an operator's JSON setting may have: cdk-ts's own settings nest three levels at most,
#: and Python's decoder fails with a ``RecursionError`` (not a ``ValueError``) near its recursion limit.
MAX_JSON_DEPTH = 32


def json_depth(text: str) -> int:
    """How deep the arrays and objects of JSON ``text`` nest, counted without recursion (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def json_setting(name: str, text: str) -> Any:
    """The JSON value ``text`` holds, from the setting ``name`` (a flag or an environment variable, as given).

    :raises ValidationError: naming ``name``, for text that is not JSON or nests deeper than
        :data:`MAX_JSON_DEPTH`.
    """
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ValidationError(f"{name} nests JSON deeper than {MAX_JSON_DEPTH} levels; no cdk-ts setting does")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise ValidationError(f"{name} is not JSON: {error}") from None


def json_object_env(env: Mapping[str, str], variable: str) -> dict | None:
    """The JSON object environment variable ``variable`` holds; None when it is unset or empty.

    A value that is not JSON, nests too deep, or is JSON but not an object, is a :class:`ValidationError`
    naming the variable.
    """
    raw = env.get(variable)
    if not raw:
        return None
    data = json_setting(f"environment variable {variable}", raw)
    if not isinstance(data, dict):
        raise ValidationError(f"environment variable {variable} must be a JSON object, got {type(data).__name__}")
    return data


def flag_type(convert: Callable[[str], object], check: Callable[[str, object], object], flag: str) -> Callable:
    """An argparse ``type=`` that converts a flag's text, then checks it; a refusal is a usage error naming ``flag``.

    argparse reports an ``ArgumentTypeError`` as ``error: argument --flag: <message>`` with exit status 2.
    """
    import argparse  # only command lines need it; the runtime's Lambda functions never import it

    kind = {int: "a whole number", float: "a number"}.get(convert, convert.__name__)  # type: ignore[call-overload]

    def parse(text: str) -> object:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        try:
            return check(flag, value)
        except ValidationError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix(f"{flag} ")) from None

    parse.__name__ = kind  # argparse names the type in its own messages
    return parse


def non_negative_float(flag: str) -> Callable:
    """An argparse ``type=`` for a finite number >= 0 (rates, sizes, prices)."""
    return flag_type(float, lambda name, value: number(name, value, minimum=0), flag)


def share_float(flag: str) -> Callable:
    """An argparse ``type=`` for a share in [0, 1]."""
    return flag_type(float, lambda name, value: number(name, value, minimum=0, maximum=1), flag)


def positive_float(flag: str) -> Callable:
    """An argparse ``type=`` for a finite number > 0 (sizes)."""
    return flag_type(float, lambda name, value: number(name, value, minimum=0, above=True), flag)


def whole_flag(flag: str, *, minimum: int = 1) -> Callable:
    """An argparse ``type=`` for a whole number >= ``minimum`` (counts)."""
    return flag_type(int, lambda name, value: whole(name, value, minimum=minimum), flag)
