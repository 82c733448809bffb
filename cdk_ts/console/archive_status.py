"""``cdk-ts archive-status``: an archive's partitions, raw and compacted, and late records waiting to be compacted.

Reads the settings from the compaction function's environment (``--function``) or from flags, lists the
raw layer and the manifests (S3 reads only; nothing is changed), and prints one line per partition.
Exit codes: 0 ok; 1 a partition needs attention (late raw objects whose partition's raw objects expired,
so the next run cannot merge them); 2 usage or configuration error; 3 an AWS read failed.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from datetime import datetime
from typing import Any

from cdk_ts.console import EXIT_ATTENTION, EXIT_OK, ConsoleError, parse_time
from cdk_ts.console._reporting import add_region_flag, reporting_errors, use_region
from cdk_ts_runtime import _environment
from cdk_ts_runtime._compaction_plan import (
    ENV_SETTINGS,
    ArchiveInventory,
    CompactionSettings,
    PartitionState,
    PartitionStatus,
)
from cdk_ts_runtime._inputs import json_setting


def parser() -> argparse.ArgumentParser:
    """The command line of ``cdk-ts archive-status``."""
    p = argparse.ArgumentParser(
        prog="cdk-ts archive-status",
        description="An archive's partitions: open, pending, compacted, late (raw objects the Parquet lacks), "
        "stale (compacted with other settings; only with --function).",
    )
    given = p.add_argument_group("the archive (from the compaction function, or flags: flags win)")
    given.add_argument("--function", help="the compaction function's name or ARN (ArchiveCompaction.function)")
    given.add_argument("--bucket", help="the archive bucket")
    given.add_argument("--prefix", help="the raw layer's prefix (default dynamodb/)")
    given.add_argument("--compacted-prefix", help="the compacted layer's prefix (default parquet/ + prefix)")
    given.add_argument("--granularity", choices=["hour", "day"], help="default hour")
    p.add_argument("--since", help="earliest day to look at (default: the lookback before --at)")
    p.add_argument("--at", help="reference time, ISO-8601 (no zone means UTC); default now")
    p.add_argument("--json", action="store_true", help="print JSON for scripts instead of text")
    add_region_flag(p)
    return p


def settings_from(args: argparse.Namespace, lambda_client=None) -> CompactionSettings:
    """The compaction settings: the function's ``CDK_TS_COMPACTION_SETTINGS``, then the flags over them."""
    document: dict[str, Any] = {}
    if args.function:
        from botocore.exceptions import ClientError

        try:
            configuration = lambda_client.get_function_configuration(FunctionName=args.function)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                raise ConsoleError(f"no Lambda function {args.function!r} in this account and Region") from None
            raise
        env = (configuration.get("Environment") or {}).get("Variables") or {}
        _environment.refuse_removed(env, (ENV_SETTINGS,))
        if not env.get(ENV_SETTINGS):
            raise ConsoleError(f"function {args.function!r} has no {ENV_SETTINGS}: pass ArchiveCompaction.function")
        document = json_setting(f"function {args.function!r}: environment variable {ENV_SETTINGS}", env[ENV_SETTINGS])
        if not isinstance(document, dict):
            raise ConsoleError(f"function {args.function!r}: environment variable {ENV_SETTINGS} is not a JSON object")
        _settings(f"function {args.function!r}: environment variable {ENV_SETTINGS}", document)
    for flag in _FLAGS:
        if getattr(args, flag) is not None:
            document[flag] = getattr(args, flag)
    if not document.get("bucket"):
        raise ConsoleError("give --function (the compaction function) or --bucket")
    if "compacted_prefix" not in document:
        document["compacted_prefix"] = "parquet/" + document.get("prefix", "dynamodb/")
    try:
        return _settings("the settings", document)
    except ConsoleError as error:
        words = set(re.findall(r"\w+", str(error)))  # the settings the message names, and so their flags
        given = [f"--{flag.replace('_', '-')} {getattr(args, flag)!r}" for flag in _FLAGS
                 if getattr(args, flag) is not None and flag in words]
        if not given:
            raise
        raise ConsoleError(f"{', '.join(given)}: {str(error).removeprefix('the settings: ')}") from None


#: The flags that give (or replace) a compaction setting of the same name.
_FLAGS = ("bucket", "prefix", "compacted_prefix", "granularity")


def _settings(source: str, document: dict[str, Any]) -> CompactionSettings:
    """``document`` as settings; a refusal names ``source`` (the flags or the function's variable)."""
    try:
        return CompactionSettings.from_json({"bucket": "stand-in", **document})
    except (ValueError, TypeError, KeyError) as error:
        raise ConsoleError(f"{source}: {error.args[0] if error.args else error}") from None


def summary(statuses: list[PartitionStatus]) -> dict[str, Any]:
    """Counts by state, late objects waiting, and the partitions that need attention."""
    return {
        "partitions": len(statuses),
        "states": dict(sorted(Counter(s.state.value for s in statuses).items())),
        "late_objects": sum(len(s.late) for s in statuses),
        "attention": [s.partition.path for s in statuses if s.state is PartitionState.RAW_EXPIRED and s.late],
    }


def format_text(settings: CompactionSettings, when: datetime, statuses: list[PartitionStatus]) -> str:
    """One line per partition, then the totals."""
    lines = [
        f"archive s3://{settings.bucket}/{settings.prefix} -> {settings.compacted_prefix} "
        f"(per {settings.granularity.value}, grace {settings.grace}), as of {when.isoformat()}",
        f"{'table':<32} {'dt':<10} {'hour':<4} {'state':<11} {'raw':>5} {'late':>5} {'rows':>10}",
    ]
    for s in statuses:
        rows = "" if s.manifest is None else f"{s.manifest.rows:,}"
        lines.append(f"{s.partition.table:<32} {s.partition.dt:<10} {s.partition.hour or '':<4} "
                     f"{s.state.value:<11} {len(s.raw):>5} {len(s.late):>5} {rows:>10}")
    total = summary(statuses)
    states = ", ".join(f"{n} {state}" for state, n in total["states"].items()) or "none"
    lines.append(f"{total['partitions']} partitions: {states}; {total['late_objects']} late raw objects waiting")
    lines += [f"ATTENTION {path}: late objects, but raw objects the Parquet was built from expired"
              for path in total["attention"]]
    return "\n".join(lines)


def _read(args: argparse.Namespace, clients: dict[str, Any], outcome: list) -> int:
    """Read the settings and the archive's partitions into ``outcome``; every refusal names its flag or variable."""
    import boto3

    if not args.function and not args.bucket:
        raise ConsoleError("give --function (the compaction function) or --bucket")
    when = parse_time(args.at)
    since = parse_time(args.since, name="--since") if args.since else None
    if (args.function and not clients.get("lambda")) or not clients.get("s3"):
        use_region(args.region)  # before any client is made: a missing Region is named, with how to set one
    lambda_client = clients.get("lambda") or (boto3.client("lambda") if args.function else None)
    settings = settings_from(args, lambda_client)
    inventory = ArchiveInventory(settings, s3_client=clients.get("s3") or boto3.client("s3"))
    # flags alone do not say which columns the function declares: judge settings only with --function
    outcome += [settings, when, inventory.statuses(now=when, since=since, check_settings=bool(args.function))]
    return EXIT_OK


def main(argv: list[str], *, clients: dict[str, Any] | None = None) -> int:
    """Run ``cdk-ts archive-status``; returns the exit code (see the module's docstring).

    :param argv: the arguments after ``archive-status``.
    :param clients: boto3 clients by service (``s3``, ``lambda``). Default: None — created here.
    """
    args = parser().parse_args(argv)
    outcome: list = []
    code = reporting_errors("archive-status", lambda: _read(args, clients or {}, outcome))
    if code != EXIT_OK:
        return code
    settings, when, statuses = outcome
    if args.json:
        print(json.dumps({"summary": summary(statuses), "partitions": [s.as_json() for s in statuses]}, indent=2))
    else:
        print(format_text(settings, when, statuses))
    return EXIT_ATTENTION if summary(statuses)["attention"] else EXIT_OK
