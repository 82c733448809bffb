"""The DynamoDB table-name rule, checked at synth time for every name a user gives a fixed table."""

from __future__ import annotations

from cdk_ts._defaults import is_unresolved
from cdk_ts._validation import Problems
from cdk_ts_runtime._periods import TABLE_NAME_MAX, TABLE_NAME_MIN, TABLE_NAME_PATTERN


def check_table_name(problems: Problems, label: str, name: str | None) -> bool:
    """Record a problem unless ``name`` is None, a deploy-time token, or 3-255 characters of ``[A-Za-z0-9_.-]``.

    The rule is DynamoDB's (CreateTable's ``TableName``); returns whether the name passed.
    """
    if name is None or is_unresolved(name):
        return True
    return problems.check(
        isinstance(name, str)
        and TABLE_NAME_MIN <= len(name) <= TABLE_NAME_MAX
        and bool(TABLE_NAME_PATTERN.fullmatch(name)),
        f"{label} {name!r} is not a DynamoDB table name: use {TABLE_NAME_MIN}-{TABLE_NAME_MAX} characters of "
        "[A-Za-z0-9_.-]",
    )


def check_imported_table_name(problems: Problems, label: str, name: str | None) -> bool:
    """:func:`check_table_name` for an importer, which asks for a name: an ARN gets its own way out."""
    if isinstance(name, str) and name.startswith("arn:"):
        return problems.check(False, f"{label} {name!r} is an ARN: pass the table's name alone (its table_name)")
    return check_table_name(problems, label, name)
