"""``cdk-ts``: the operator console — ``status``, ``rotate --dry-run``, ``replay``, ``archive-status``, ``shards`` (a
sharded key's history), ``plan``, and ``local`` (a local DynamoDB that refuses as DynamoDB does, for tests in any
language).

Exit codes: 0 ok; 1 something needs attention; 2 usage or configuration error; 3 an AWS read failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cdk_ts._cli import quiet_on_closed_pipe
from cdk_ts.console import (
    EXIT_USAGE,
    dry_run_exit_code,
    format_report,
    format_status,
    function_environment,
    parse_time,
    settings_env,
    status,
    status_exit_code,
)
from cdk_ts.console._reporting import add_region_flag, reporting_errors, use_region
from cdk_ts.console._settings import checked_flags, checked_function_settings
from cdk_ts_runtime._inputs import whole_flag
from cdk_ts_runtime._periods import RotationPeriod

#: Subcommands handed whole to the commands they replace (their own flags and help).
DELEGATED = ("plan", "replay", "archive-status", "shards", "local")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors: the console's usage code too
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command line of ``cdk-ts``."""
    p = _Parser(
        prog="cdk-ts",
        description="Operate cdk-ts deployments: a rotation's state, dry runs, archive replay, capacity plans.",
        epilog="Exit codes: 0 ok; 1 something needs attention; 2 usage or configuration error; "
        "3 an AWS read failed. AWS credentials, Region and AWS_ENDPOINT_URL come from the usual boto3 settings.",
    )
    commands = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    state = commands.add_parser("status", help="a rotation's tables, tiers, ownership, export proof, next table")
    _rotation_flags(state)
    rotate = commands.add_parser("rotate", help="what a rotation run would change (--dry-run), changing nothing")
    rotate.add_argument("--dry-run", action="store_true", required=True,
                        help="required: the console only reports; real runs are the rotation function's")
    rotate.add_argument("operation", choices=["create_new", "resize_old", "reconcile"])
    _rotation_flags(rotate)
    commands.add_parser("replay", add_help=False, help="archive the stream records kept in an S3 on-failure "
                        "destination; see cdk-ts replay --help")
    commands.add_parser("local", add_help=False, help="a local DynamoDB that throttles and refuses as DynamoDB "
                        "does, in the foreground (cdk_ts.testing); see cdk-ts local --help")
    commands.add_parser("archive-status", add_help=False, help="an archive's partitions: raw, compacted, late "
                        "records waiting; see cdk-ts archive-status --help")
    commands.add_parser("shards", add_help=False, help="a sharded key's shard history: the count in force now "
                        "and when each count began; see cdk-ts shards --help")
    commands.add_parser("plan", add_help=False, help="capacity, partitions and cost (cdk-ts-plan); "
                        "see cdk-ts plan --help")
    return p


def _rotation_flags(p: argparse.ArgumentParser) -> None:
    given = p.add_argument_group("the rotation (from its function, flags, or both: flags win)")
    given.add_argument("--function", help="the rotation function's name or ARN: its environment holds the settings")
    given.add_argument("--table-prefix", help="the tables' prefix (tables are PREFIX_LABEL)")
    given.add_argument("--period", help=f"{', '.join(p.value for p in RotationPeriod)} (default daily)")
    given.add_argument("--partition-key", help="default pk")
    given.add_argument("--partition-key-type", choices=["S", "N", "B"], help="default N")
    given.add_argument("--sort-key", help="default sk")
    given.add_argument("--sort-key-type", choices=["S", "N"], help="default N")
    given.add_argument("--retain-periods", type=whole_flag("--retain-periods", minimum=2),
                       help="periods kept, the current one included (>= 2)")
    given.add_argument("--archive-bucket", help="where expired tables are exported before deletion")
    given.add_argument("--archive-prefix", help="key prefix of the exports")
    given.add_argument("--rotation-config", help="the whole RotationConfig as JSON (CDK_TS_ROTATION_CONFIG)")
    p.add_argument("--at", help="reference time, ISO-8601 (no zone means UTC); default now")
    p.add_argument("--json", action="store_true", help="print JSON for scripts instead of text")
    add_region_flag(p)


def main(argv: list[str] | None = None) -> int:
    """Run ``cdk-ts``; returns the exit code (see the module's docstring). It never shows a traceback.

    A closed stdout (``| head``) ends quietly with 141 (as a shell reports SIGPIPE), Ctrl-C with 130.

    :param argv: the command-line arguments.
        Default: None — ``sys.argv[1:]``.
    """
    return quiet_on_closed_pipe(lambda: _main(list(sys.argv[1:] if argv is None else argv)))


def _main(argv: list[str]) -> int:
    if argv and argv[0] in DELEGATED:
        return reporting_errors(argv[0], lambda: _delegate(argv[0], argv[1:]))
    args = parser().parse_args(argv)
    return reporting_errors(args.command, lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    when = parse_time(args.at)  # a usage error before any AWS call
    rotator = _rotator(args)
    if args.command == "status":
        answer: dict[str, Any] = status(rotator, when)
        code, text = status_exit_code(answer), format_status
    else:
        rotator.clock = lambda: when  # a dry run may look at any time: nothing it decides is acted on
        answer = rotator.run(args.operation, when, dry_run=True)
        code, text = dry_run_exit_code(answer), format_report
    print(json.dumps(answer, indent=2, default=str) if args.json else text(answer))
    return code


def _rotator(args: argparse.Namespace):
    """The rotator the flags and ``--function`` describe; each bad value is refused naming where it was given."""
    import boto3

    from cdk_ts_runtime._retries import CONTROL_PLANE
    from cdk_ts_runtime.handlers.rotation import build_rotator

    base: dict[str, str] = {}
    if not args.function:
        checked_flags(args, base)  # no AWS call before the flags are known to be good
    use_region(args.region)
    if args.function:
        base = function_environment(boto3.client("lambda", config=CONTROL_PLANE), args.function)
        checked_function_settings(args.function, base)
    layout, config = checked_flags(args, base)
    env = settings_env(base, layout=layout, config=config)
    rotator = build_rotator(env)
    rotator.lock = None  # the console never takes the rotation's lock
    return rotator


def _delegate(command: str, argv: list[str]) -> int:
    if command == "plan":
        from cdk_ts.plan.__main__ import main as plan

        return plan(argv, prog="cdk-ts plan")
    if command == "local":
        from cdk_ts.console.local import main as local

        return local(argv)
    if command == "archive-status":
        from cdk_ts.console.archive_status import main as archive_status

        return archive_status(argv)
    if command == "shards":
        from cdk_ts.console.shards import main as shards

        return shards(argv)
    from cdk_ts_runtime._archiver import main as archiver

    return archiver(["replay", *argv])


if __name__ == "__main__":
    raise SystemExit(main())
