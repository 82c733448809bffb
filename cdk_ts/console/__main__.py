"""``cdk-ts``: the operator console — ``status``, ``rotate --dry-run``, ``replay``, ``archive-status``, ``shards`` (a
sharded key's history), ``plan``, and ``local`` (a local DynamoDB that refuses as DynamoDB does, for tests in any
language).

Exit codes: 0 ok; 1 something needs attention; 2 usage or configuration error; 3 an AWS read failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from cdk_ts._cli import quiet_on_closed_pipe
from cdk_ts.console import (
    EXIT_AWS,
    EXIT_USAGE,
    ConsoleError,
    dry_run_exit_code,
    format_report,
    format_status,
    function_environment,
    parse_time,
    settings_env,
    status,
    status_exit_code,
)
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


def main(argv: list[str] | None = None) -> int:
    """Run ``cdk-ts``; returns the exit code (see the module's docstring). It never shows a traceback.

    A closed stdout (``| head``) ends quietly with 141 (as a shell reports SIGPIPE), Ctrl-C with 130.

    :param argv: the command-line arguments.
        Default: None — ``sys.argv[1:]``.
    """
    return quiet_on_closed_pipe(lambda: _main(list(sys.argv[1:] if argv is None else argv)))


def _main(argv: list[str]) -> int:
    if argv and argv[0] in DELEGATED:
        return _reporting_errors(argv[0], lambda: _delegate(argv[0], argv[1:]))
    args = parser().parse_args(argv)
    return _reporting_errors(args.command, lambda: _run(args))


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


def _reporting_errors(command: str, run: Callable[[], int]) -> int:
    """``run()``'s exit code; an error is one line on stderr and its exit code (2 usage, 3 AWS), never a traceback."""
    try:
        return run()
    except (ConsoleError, ValueError, KeyError) as error:
        message = str(error.args[0] if error.args else error)
        print(f"cdk-ts {command}: error: {_with_aws_variables(message)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise  # the reader went away: main ends quietly
    except Exception as error:  # noqa: BLE001 - botocore's errors: credentials, permissions, endpoint
        print(f"cdk-ts {command}: AWS error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_AWS


#: Variables botocore reads and reports a bad value of without naming them ("Invalid endpoint: not a url").
_AWS_VARIABLES = {
    "endpoint": ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL_S3"),
    "region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
}


def _with_aws_variables(message: str) -> str:
    """``message``, naming the set AWS variables it is about (an endpoint or a Region botocore refused)."""
    named = [
        f"{variable}={os.environ[variable]!r}"
        for word, variables in _AWS_VARIABLES.items() if word in message.lower()
        for variable in variables if variable in os.environ
    ]
    return f"{message} (from the environment: {', '.join(named)})" if named else message


def _rotator(args: argparse.Namespace):
    import boto3

    from cdk_ts_runtime._retries import CONTROL_PLANE
    from cdk_ts_runtime.handlers.rotation import build_rotator

    base = function_environment(boto3.client("lambda", config=CONTROL_PLANE), args.function) if args.function else {}
    layout = {
        "table_prefix": args.table_prefix, "period": args.period, "partition_key": args.partition_key,
        "partition_key_type": args.partition_key_type, "sort_key": args.sort_key, "sort_key_type": args.sort_key_type,
    }
    config: dict[str, Any] = {}
    if args.rotation_config:
        try:
            config = json.loads(args.rotation_config)
        except json.JSONDecodeError as error:
            raise ConsoleError(f"--rotation-config is not JSON: {error}") from None
        if not isinstance(config, dict):
            raise ConsoleError("--rotation-config must be a JSON object")
    for key in ("retain_periods", "archive_bucket", "archive_prefix"):
        if getattr(args, key) is not None:
            config[key] = getattr(args, key)
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
