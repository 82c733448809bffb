"""A declared column's value from a DynamoDB JSON attribute, and whether the attribute can leave the image for it.

:func:`column_value` and :func:`attribute_from_column` are the rules; :func:`split_image` applies them to each
row, through readers that take the common, well-formed cases (``{"N": "20.55"}`` in a ``decimal(6,2)``) with a
regular expression and fall back to the rules for anything else, so the result is the same either way.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from cdk_ts_runtime._compaction_plan import ColumnSpec

_INT64 = (-(2**63), 2**63 - 1)
#: An integer as ``str(int)`` writes it (no sign on zero, no leading zeros), at most 19 digits.
_CANONICAL_INT = re.compile(r"0|-?[1-9]\d{0,18}")
#: The number text a ``bigint`` column takes (then its integer part), written once for every engine that applies
#: the rule: Python here, DuckDB (``_compaction_sql``) and Athena (the ``_all`` view's raw side). A number in
#: exponent notation (``1E+2``) is NULL in a ``bigint`` or ``decimal`` column on both sides of the view: Athena's
#: casts cannot tell an exact exponent from one they would round. Its image keeps the attribute.
BIGINT_TEXT = r"[+-]?[0-9]+([.]0*)?"
#: An image whose text holds this (``\\u``: a control character's escape) keeps all its attributes, so its text
#: is never written again (DuckDB's JSON writer spells those escapes in upper case, Python's in lower case).
ESCAPE_MARK = "\\u"


def decimal_text(scale: int) -> str:
    """The number text a ``decimal(P,S)`` column takes: plain notation, nothing but zeros past ``scale`` digits.

    Past P digits the cast gives NULL. Shared like :data:`BIGINT_TEXT`.
    """
    return rf"[+-]?[0-9]*([.][0-9]{{0,{scale}}}0*)?"


def column_value(spec: ColumnSpec, attribute: Mapping[str, Any] | None) -> Any:
    """A declared column's value from one DynamoDB JSON attribute; None when absent or not exactly of its type.

    A number that a ``bigint`` or ``decimal(P,S)`` cannot hold exactly is None, not rounded (the image keeps it).
    """
    if not isinstance(attribute, Mapping) or len(attribute) != 1:
        return None
    (kind, value), = attribute.items()
    if spec.type == "string":
        return value if kind in ("S", "N") else None
    if spec.type == "boolean":
        return value if kind == "BOOL" else None
    if kind != "N" or not isinstance(value, str):
        return None
    if spec.type == "double":
        try:
            return float(value)
        except ValueError:
            return None
    if spec.type == "bigint":
        if not re.fullmatch(BIGINT_TEXT, value):
            return None
        number = int(re.match(r"[+-]?[0-9]+", value)[0])
        return number if _INT64[0] <= number <= _INT64[1] else None
    precision, scale = (int(n) for n in spec.type[len("decimal("):-1].split(","))
    if not re.fullmatch(decimal_text(scale), value):
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    with localcontext(prec=80):  # the default 28 digits would refuse DynamoDB's 38
        try:
            exact = number.quantize(Decimal(1).scaleb(-scale))
        except InvalidOperation:
            return None
    if len(exact.as_tuple().digits) > precision:
        return None
    return exact.copy_abs() if exact.is_zero() else exact  # a column has no negative zero


def attribute_from_column(spec: ColumnSpec, value: Any) -> dict[str, Any] | None:
    """The DynamoDB JSON attribute a column value stands for, or None when the column cannot say it exactly.

    Only an attribute of the column's own kind (``S`` for string, ``BOOL`` for boolean, ``N`` for the
    numbers) whose text the value gives back character for character: ``"20.50"`` in a ``decimal(6,2)``,
    ``"41.5"`` in a ``double``, ``"7"`` in a ``bigint``; ``"20.5"`` in a ``decimal(6,2)`` reads back as
    ``"20.50"``, so it is not.
    """
    if value is None:
        return None
    if spec.type == "string":
        return {"S": value}
    if spec.type == "boolean":
        return {"BOOL": value}
    if spec.type == "double":
        return {"N": repr(value)}
    return {"N": format(value, "f") if isinstance(value, Decimal) else str(value)}


def split_image(image: dict[str, Any], columns: tuple[ColumnSpec, ...]) -> tuple[list[Any], bool]:
    """Each declared column's value, and whether attributes were taken out of ``image`` (changed in place).

    An attribute moves out of the image into its column only when :func:`attribute_from_column` gives
    it back exactly; anything else stays in the image (and the column holds what it can, or None).
    """
    values = []
    exact = set()
    for source, read in readers(columns):
        value, moved = read(image.get(source))
        values.append(value)
        if moved:
            exact.add(source)
    for name in exact:
        del image[name]
    return values, bool(exact)


def restore_image(row: Mapping[str, Any], columns: tuple[ColumnSpec, ...]) -> tuple[dict | None, dict | None]:
    """A compacted row's new and old images as the JSON Lines held them (DynamoDB JSON, attribute order aside).

    The declared columns' attributes go back into the image they came from: the new image, or the old
    one for a REMOVE (no new image).
    """
    new = json.loads(row["newimage"]) if row.get("newimage") is not None else None
    old = json.loads(row["oldimage"]) if row.get("oldimage") is not None else None
    target = new if new is not None else old
    if target is not None:
        for spec in columns:
            attribute = attribute_from_column(spec, row.get(spec.name))
            if attribute is not None and spec.source not in target:
                target[spec.source] = attribute
    return new, old


Reader = Callable[[Any], tuple[Any, bool]]


def _reference(spec: ColumnSpec) -> Reader:
    def read(attribute: Any) -> tuple[Any, bool]:
        value = column_value(spec, attribute)
        return value, value is not None and attribute_from_column(spec, value) == attribute
    return read


def _number_reader(spec: ColumnSpec, fast: Callable[[str], tuple[Any, bool] | None]) -> Reader:
    slow = _reference(spec)

    def read(attribute: Any) -> tuple[Any, bool]:
        if type(attribute) is dict and len(attribute) == 1 and type(text := attribute.get("N")) is str:
            found = fast(text)
            if found is not None:
                return found
        return slow(attribute)
    return read


def _decimal_fast(precision: int, scale: int) -> Callable[[str], tuple[Any, bool] | None]:
    pattern = re.compile(r"(-?)(0|[1-9]\d*)" + (rf"\.(\d{{{scale}}})" if scale else "()"))

    def fast(text: str) -> tuple[Any, bool] | None:
        match = pattern.fullmatch(text)
        digits = (match[2] + match[3]).lstrip("0") if match else ""
        if match is None or len(digits or "0") > precision or (match[1] and not digits):
            return None  # the rules decide; "-0.00" reads back as "0.00", so it stays in the image
        return Decimal(text), True
    return fast


def _bigint_fast(text: str) -> tuple[Any, bool] | None:
    if _CANONICAL_INT.fullmatch(text) is None:
        return None
    number = int(text)
    return (number, True) if _INT64[0] <= number <= _INT64[1] else None


def _double_fast(text: str) -> tuple[Any, bool] | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number, repr(number) == text


def _keyed_reader(spec: ColumnSpec, kind: str, exact_kind: str | None) -> Reader:
    """string (``S`` exact, ``N`` as text) and boolean (``BOOL``) columns."""
    slow = _reference(spec)

    def read(attribute: Any) -> tuple[Any, bool]:
        if type(attribute) is dict and len(attribute) == 1:
            if exact_kind in attribute:
                value = attribute[exact_kind]
                return value, value is not None
            if kind in attribute:
                return attribute[kind], False
        return slow(attribute)
    return read


@functools.lru_cache(maxsize=64)
def readers(columns: tuple[ColumnSpec, ...]) -> tuple[tuple[str, Reader], ...]:
    """For each declared column, its source attribute and a reader giving ``(value, exact)`` as the rules do."""
    found = []
    for spec in columns:
        if spec.type == "string":
            read = _keyed_reader(spec, "N", "S")
        elif spec.type == "boolean":
            read = _keyed_reader(spec, "", "BOOL")
        elif spec.type == "bigint":
            read = _number_reader(spec, _bigint_fast)
        elif spec.type == "double":
            read = _number_reader(spec, _double_fast)
        else:
            precision, scale = (int(n) for n in spec.type[len("decimal("):-1].split(","))
            read = _number_reader(spec, _decimal_fast(precision, scale))
        found.append((spec.source, read))
    return tuple(found)
