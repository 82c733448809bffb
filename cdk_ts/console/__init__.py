"""The operator console behind ``cdk-ts``: a rotation's state at a glance and dry runs of its operations.

Pure Python on boto3 and :mod:`cdk_ts_runtime` (it never imports aws_cdk), so it runs wherever an
operator has AWS credentials. The rotation's settings come from the deployed rotation function's
environment (``--function``: Lambda ``GetFunctionConfiguration``), from flags, or both (flags win).

Exit codes (every subcommand of ``cdk-ts``):

- ``0`` — done, nothing needs attention;
- ``1`` — done, and something needs attention (listed under "Needs attention" / ``attention``);
- ``2`` — usage or configuration error (bad flags, no such function, not a rotation's settings);
- ``3`` — AWS refused or failed a read (credentials, permissions, endpoint), so no state is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._inputs import json_object_env, table_time
from cdk_ts_runtime._periods import next_start, period_start, shift, table_name
from cdk_ts_runtime._rotation._settings import TTL_DRIFT_ACTION, ttl_drift
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG
from cdk_ts_runtime._rotation.expiry import TableExpiry
from cdk_ts_runtime._rotation.ownership import is_owned
from cdk_ts_runtime._rotation.report import ChangeBudget, PeriodTable, describe_table
from cdk_ts_runtime._rotation.tiers import tier_steps
from cdk_ts_runtime._table_layout import ENV_TABLE_PREFIX, ENV_VARIABLES

EXIT_OK = 0
EXIT_ATTENTION = 1
EXIT_USAGE = 2
EXIT_AWS = 3

#: The rotation function's handler (``RotatingTimeSeriesTables.function``).
ROTATION_HANDLER = "cdk_ts_runtime.handlers.rotation.handler"

#: Report actions that need an operator: a failed table, tables the rotation leaves alone, a failed export, a
#: table whose TTL is on for another attribute (the rotation cannot change it).
ATTENTION_ACTIONS = ("error", "not_owned", "future", "export_failed", TTL_DRIFT_ACTION)


class ConsoleError(CdkTsError):
    """A usage or configuration error: the console prints the message and exits with :data:`EXIT_USAGE`."""


def function_environment(lambda_client, function_name: str) -> dict[str, str]:
    """The environment of the deployed rotation function ``function_name`` (name or ARN).

    :param lambda_client: the boto3 Lambda client.
    :param function_name: the rotation function's name or ARN (``RotatingTimeSeriesTables.function``).
    :raises ConsoleError: when there is no such function, or it holds no rotation's settings (a function
        ``bind`` prepared holds the tables' layout only: it is told apart by its handler and environment).
    """
    from botocore.exceptions import ClientError

    try:
        configuration = lambda_client.get_function_configuration(FunctionName=function_name)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            raise ConsoleError(f"no Lambda function {function_name!r} in this account and Region") from None
        raise
    env = dict((configuration.get("Environment") or {}).get("Variables") or {})
    if not env.get(ENV_TABLE_PREFIX):
        raise ConsoleError(
            f"function {function_name!r} has no {ENV_TABLE_PREFIX} in its environment: pass the rotation "
            "function of a RotatingTimeSeriesTables (its .function), or give --table-prefix"
        )
    if ENV_ROTATION_CONFIG not in env and configuration.get("Handler") != ROTATION_HANDLER:
        # bind gives a user function the tables' layout but not the rotation's settings: a report from it
        # would show defaults (no retention, no archive) as if they were the rotation's
        raise ConsoleError(
            f"function {function_name!r} is not a rotation function: it has the tables' layout "
            f"({ENV_TABLE_PREFIX}={env[ENV_TABLE_PREFIX]}, as bind sets it) but no {ENV_ROTATION_CONFIG}, and its "
            f"handler is {configuration.get('Handler')!r}; pass the rotation function of the "
            "RotatingTimeSeriesTables (its .function), or --table-prefix with --retain-periods and --archive-bucket"
        )
    return env


def settings_env(
    base: Mapping[str, str], *, layout: Mapping[str, str | None], config: Mapping[str, Any]
) -> dict[str, str]:
    """The rotation's environment: ``base`` (a function's) with layout fields and config settings laid over it.

    :param base: the environment read from the function, or empty.
    :param layout: :class:`~cdk_ts_runtime.TableLayout` field names to values; None keeps ``base``'s.
    :param config: :class:`~cdk_ts_runtime._rotation.config.RotationConfig` settings to set or replace.
    :raises ConsoleError: when no table prefix is known, or the base's rotation config is not JSON.
    """
    import json

    env = dict(base)
    for field, value in layout.items():
        if value is not None:
            env[ENV_VARIABLES[field]] = value
    if config:
        data = json_object_env(env, ENV_ROTATION_CONFIG) or {}
        data.update(config)
        env[ENV_ROTATION_CONFIG] = json.dumps(data)
    if not env.get(ENV_TABLE_PREFIX):
        raise ConsoleError("no rotation given: pass --function NAME (the rotation function) or --table-prefix")
    return env


def status(rotator, when: datetime) -> dict[str, Any]:
    """A rotation's state at ``when``, from reads only: its tables, the next table, what is due for deletion.

    :param rotator: a :class:`~cdk_ts_runtime._rotation.rotator.TableRotator` for the rotation (its clients are used
        for reads only).
    :param when: the reference time (aware); "current" is the period holding it.
    :return: ``rotation`` (prefix, period, retention, archive), ``tables`` (one entry per period table:
        ``name``, ``start``, ``role``, ``status``, ``tier`` as described, ``wanted`` tier, ``steps_left``,
        ``owned``, ``expired`` and, for expired tables, ``export``), ``next_table``, ``due_for_deletion``
        (``table`` and ``why_not_yet``) and ``attention`` (texts; empty when all is well).
    """
    layout, config = rotator.layout, rotator.config
    period = layout.period
    current = period_start(period, when)
    upcoming = next_start(period, when)
    previous = shift(period, current, -1)
    expiry = TableExpiry(
        dynamodb=rotator.dynamodb, config=config, period=period, budget=ChangeBudget(1),
        owned=lambda d: is_owned(rotator.dynamodb, d, layout), dry_run=True,
    )
    tables = rotator.list_tables()
    _kept, expired = expiry.split([t for t in tables if t.start <= upcoming], current)
    expired_names = {t.name for t in expired}
    entries, due, attention = [], [], []
    for table in tables:
        description = describe_table(rotator.dynamodb, table.name)
        role = _role(table.start, current, upcoming, previous)
        owned = bool(description) and is_owned(rotator.dynamodb, description, layout)
        entry: dict[str, Any] = {
            "name": table.name,
            "start": table.start.isoformat(),
            "role": role,
            "status": description.get("TableStatus", "MISSING"),
            "tier": described_tier(description),
            "owned": owned,
            "expired": table.name in expired_names,
        }
        if role != "future" and table.name not in expired_names:
            wanted = rotator.tier_for(table.start, current)
            steps = tier_steps(description, wanted) if description else []
            entry["wanted"] = wanted.describe()
            entry["steps_left"] = [_step_kind(step) for step in steps]
        if description and not owned:  # a table gone since ListTables is no look-alike
            attention.append(f"{table.name} is a look-alike (no cdk-ts:prefix/period tags of this rotation): "
                             "the rotation never resizes or deletes it")
        if role == "future":
            attention.append(f"{table.name} is dated after the next period: the rotation leaves it as it is")
        drift = _ttl_drift(rotator, table.name, description, owned, role)
        if drift:
            entry["ttl_drift"] = drift
            attention.append(f"{table.name}: {drift}")
        if table.name in expired_names:
            why, export = _why_not_deleted(expiry, table, description, owned, config)
            entry["export"] = export
            due.append({"table": table.name, "why_not_yet": why})
            if export and export.get("failed") and not export.get("proven"):
                attention.append(f"{table.name}: {export['failed']} export(s) to the archive failed")
        entries.append(entry)
    names = {t.name for t in tables}
    current_name = table_name(layout.table_prefix, period, current)
    if current_name not in names:
        attention.append(f"the current period's table {current_name} is missing: run reconcile")
    next_name = table_name(layout.table_prefix, period, upcoming)
    in_lead = upcoming - when <= timedelta(seconds=config.create_lead_seconds)
    if next_name not in names and in_lead:
        attention.append(f"the next period's table {next_name} is missing {upcoming - when} before it is needed")
    return {
        "rotation": {
            "table_prefix": layout.table_prefix,
            "period": period.value,
            "time": when.isoformat(),
            "retain_periods": config.retain_periods,
            "archive": f"s3://{config.archive_bucket}/{config.archive_prefix}" if config.archive_bucket else None,
        },
        "tables": entries,
        "next_table": {"name": next_name, "present": next_name in names, "starts": upcoming.isoformat(),
                       "inside_create_lead": in_lead},
        "due_for_deletion": due,
        "attention": attention,
    }


def _ttl_drift(rotator, name: str, description: Mapping[str, Any], owned: bool, role: str) -> str | None:
    """Why the TTL of a live table of the rotation is not the configured one (None when it is, or not asked)."""
    if not rotator.config.ttl_attribute or not owned or role not in ("current", "next"):
        return None
    if description.get("TableStatus") != "ACTIVE":
        return None
    ttl = rotator.dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    return ttl_drift(ttl, rotator.config.ttl_attribute)


def _role(start: datetime, current: datetime, upcoming: datetime, previous: datetime) -> str:
    if start == current:
        return "current"
    if start == upcoming:
        return "next"
    if start > upcoming:
        return "future"
    return "previous" if start == previous else "older"


def _step_kind(step: Mapping[str, Any]) -> str:
    if "TableClass" in step:
        return "table class"
    if "WarmThroughput" in step:
        return "warm throughput"
    return "billing mode" if "BillingMode" in step else "capacity"


def described_tier(description: Mapping[str, Any]) -> dict[str, Any]:
    """A described table's tier: billing mode, units or on-demand caps, warm throughput, table class.

    :param description: DescribeTable's ``Table`` (empty for a missing table).
    """
    if not description:
        return {}
    on_demand = (description.get("BillingModeSummary") or {}).get("BillingMode") == "PAY_PER_REQUEST"
    tier: dict[str, Any] = {"billing_mode": "PAY_PER_REQUEST" if on_demand else "PROVISIONED"}
    if on_demand:
        caps = description.get("OnDemandThroughput") or {}
        tier["max_read_request_units"] = caps.get("MaxReadRequestUnits")
        tier["max_write_request_units"] = caps.get("MaxWriteRequestUnits")
    else:
        throughput = description.get("ProvisionedThroughput") or {}
        tier["read_capacity"] = throughput.get("ReadCapacityUnits")
        tier["write_capacity"] = throughput.get("WriteCapacityUnits")
    warm = description.get("WarmThroughput") or {}
    tier["warm_read_units_per_second"] = warm.get("ReadUnitsPerSecond")
    tier["warm_write_units_per_second"] = warm.get("WriteUnitsPerSecond")
    tier["table_class"] = (description.get("TableClassSummary") or {}).get("TableClass", "STANDARD")
    return tier


def _why_not_deleted(expiry, table: PeriodTable, description, owned: bool, config) -> tuple[str, dict | None]:
    if not description:
        return "already gone", None
    status = description.get("TableStatus")
    if not owned:
        return "a look-alike (no ownership tags): never deleted by the rotation", None
    export = expiry.export_proof(table, description) if config.archive_bucket else None
    if status != "ACTIVE":
        return f"status {status}: expiry retried when it is ACTIVE", export
    if export is None:
        return "nothing holds it back: the next resize_old or reconcile run deletes it", None
    if export["proven"]:
        return "export proven: the next resize_old or reconcile run deletes it", export
    if export["in_progress"]:
        return "export to the archive in progress: deleted after it completes", export
    retry = f" ({export['failed']} failed so far)" if export["failed"] else ""
    return f"no completed export at or after the period's end{retry}: the next run starts one", export


def parse_time(text: str | None, now: datetime | None = None, *, name: str = "--at") -> datetime:
    """``--at``: ISO-8601 (``Z`` or an offset; no zone means UTC, as every boundary in cdk-ts); None is now.

    :param text: the flag's value.
    :param now: what None means.
        Default: None — the clock, in UTC.
    :param name: the flag, as errors name it.
        Default: ``"--at"``.
    :raises ConsoleError: when the text is not ISO-8601, or is outside the years 1000-9999 a table name holds.
    """
    if text is None:
        return now or datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConsoleError(f"{name} {text!r} is not ISO-8601 (e.g. 2026-03-01T23:45:00Z)") from None
    try:
        return table_time(name, parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
    except ValidationError as error:
        raise ConsoleError(str(error)) from None


def status_exit_code(state: Mapping[str, Any]) -> int:
    """:data:`EXIT_ATTENTION` when ``state`` (from :func:`status`) lists anything needing attention, else 0."""
    return EXIT_ATTENTION if state["attention"] else EXIT_OK


def dry_run_exit_code(report: Mapping[str, Any]) -> int:
    """:data:`EXIT_ATTENTION` when a dry run's report holds an :data:`ATTENTION_ACTIONS` action, else 0."""
    return EXIT_ATTENTION if any(a["action"] in ATTENTION_ACTIONS for a in report["actions"]) else EXIT_OK


def format_status(state: Mapping[str, Any]) -> str:
    """:func:`status`'s answer as text for people."""
    rotation = state["rotation"]
    lines = [
        f"Rotation {rotation['table_prefix']} ({rotation['period']}) at {rotation['time']}",
        f"  retention: {rotation['retain_periods'] or 'unlimited'} period(s); "
        f"archive: {rotation['archive'] or 'none (expired tables are deleted without an export)'}",
        "",
    ]
    rows = [("TABLE", "ROLE", "STATUS", "TIER", "WARM R/W", "CLASS", "OWNED", "WANTED")]
    for table in state["tables"]:
        tier = table["tier"]
        if not tier:
            have = "-"
        elif tier["billing_mode"] == "PAY_PER_REQUEST":
            caps = (tier["max_read_request_units"], tier["max_write_request_units"])
            have = "on-demand" + (f" max {caps[0] or '-'}/{caps[1] or '-'}" if any(caps) else "")
        else:
            have = f"provisioned {tier['read_capacity']}/{tier['write_capacity']}"
        warm = f"{tier.get('warm_read_units_per_second') or '-'}/{tier.get('warm_write_units_per_second') or '-'}"
        if table["expired"]:
            wanted = "expired"
        elif "wanted" in table:
            steps = table["steps_left"]
            wanted = table["wanted"] + (" (at tier)" if not steps else f" (next: {', '.join(steps)})")
        else:
            wanted = "left as it is"
        owned = "yes" if table["owned"] else "LOOK-ALIKE"
        rows.append((table["name"], table["role"], table["status"], have, warm,
                     tier.get("table_class", "-"), owned, wanted))
    if len(rows) == 1:
        lines.append("  no tables of this rotation")
    else:
        widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]) - 1)]
        for row in rows:
            lines.append("  " + "  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=False)) + "  " + row[-1])
    upcoming = state["next_table"]
    presence = "present" if upcoming["present"] else "not created yet"
    lines += ["", f"Next table: {upcoming['name']} (from {upcoming['starts']}): {presence}"]
    lines.append("Due for deletion:" if state["due_for_deletion"] else "Due for deletion: none")
    for due in state["due_for_deletion"]:
        lines.append(f"  {due['table']}: {due['why_not_yet']}")
    lines.append("Needs attention:" if state["attention"] else "Needs attention: nothing")
    lines += [f"  - {text}" for text in state["attention"]]
    return "\n".join(lines)


def format_report(report: Mapping[str, Any]) -> str:
    """A dry run's report as text for people: one line per action a real run would take, table by table.

    Lines are sorted by table (a table's own actions keep the run's order); lists are written as words
    (``changes=ProvisionedThroughput, TableClass``), details separated by ``;``. ``--json`` keeps the run's order.
    """
    lines = [f"Dry run of {report['operation']} at {report['time']}: nothing was changed."]
    if not report["actions"]:
        lines.append("  a real run would change nothing")
    for action in sorted(report["actions"], key=lambda a: str(a["table"])):
        details = "; ".join(
            f"{key}={_words(value)}" for key, value in action.items() if key not in ("action", "table", "dry_run")
        )
        lines.append(f"  {action['action']:<24} {action['table']}" + (f"  ({details})" if details else ""))
    return "\n".join(lines)


def _words(value: Any) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(sorted(map(str, value))) if isinstance(value, set | frozenset) else ", ".join(map(str, value))
    return str(value)
