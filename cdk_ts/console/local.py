"""``cdk-ts local``: a local DynamoDB that throttles and refuses as DynamoDB does, in the foreground.

Starts the engine and the rules proxy (``cdk_ts.testing.local_dynamodb``), prints the endpoint, the
``AWS_ENDPOINT_URL`` to export and the rules in force (``--json``: one JSON object, for scripts), then serves until
Ctrl-C or SIGTERM, and stops every process it started. Needs ``pip install 'cdk-ts[testing]'``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any

from cdk_ts_runtime._errors import ValidationError

EXIT_USAGE = 2


def parser() -> argparse.ArgumentParser:
    """The command line of ``cdk-ts local``."""
    p = argparse.ArgumentParser(
        prog="cdk-ts local",
        description="Serve a local DynamoDB that throttles and refuses as DynamoDB does (cdk_ts.testing) until "
        "Ctrl-C. Point any SDK at the endpoint it prints (AWS_ENDPOINT_URL), with any credentials.",
    )
    p.add_argument("--engine", choices=["moto", "dynalite"], default="moto",
                   help="the engine behind the rules (default: moto; dynalite needs node and `npm install dynalite`)")
    p.add_argument("--port", type=int, default=None, help="the endpoint's port on 127.0.0.1 (default: a free one)")
    p.add_argument("--guesses", action="store_true",
                   help="also apply the rules whose numbers no public source gives (default: documented rules only)")
    p.add_argument("--disable", action="append", default=[], metavar="RULE",
                   help="a rule not to apply, by name (repeatable); the rules in force are listed at start")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="settings",
                   help="a RulesSettings field, VALUE in JSON (repeatable), e.g. --set write_units_per_second=10")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return p


def _settings(pairs: list[str]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValidationError(f"--set {pair!r}: write NAME=VALUE, e.g. --set update_seconds=60")
        try:
            settings[name] = json.loads(value)
        except json.JSONDecodeError:
            raise ValidationError(
                f"--set {pair!r}: VALUE must be JSON (a number, true/false, a quoted string)"
            ) from None
    return settings


def report(local) -> dict[str, Any]:
    """What ``cdk-ts local`` prints: endpoint, the variable to export, the engine and the rules in force."""
    return {
        "endpoint_url": local.endpoint_url,
        "export": f"export AWS_ENDPOINT_URL={local.endpoint_url}",
        "engine": local.engine_name,
        "pid": local.pid,
        "rules": [{"name": r.name, "answer": r.answer, "guess": r.guess} for r in local.rules_in_force()],
    }


def _text(info: dict[str, Any]) -> str:
    lines = [f"Local DynamoDB (cdk_ts.testing, engine {info['engine']}) at {info['endpoint_url']}",
             "", info["export"], "", f"Rules in force ({len(info['rules'])}):"]
    lines += [f"  {r['name']:<34} {r['answer']}{'  [guess]' if r['guess'] else ''}" for r in info["rules"]]
    lines += ["", "Ctrl-C stops it."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run ``cdk-ts local``; returns the exit code (0 after Ctrl-C or SIGTERM, 2 on bad input)."""
    args = parser().parse_args(argv)
    from cdk_ts.testing import start_local_dynamodb

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        local = start_local_dynamodb(args.engine, guesses=args.guesses, disabled_rules=args.disable,
                                     port=args.port, **_settings(args.settings))
    except (ValueError, RuntimeError) as error:
        print(f"cdk-ts local: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        info = report(local)
        print(json.dumps(info) if args.json else _text(info), flush=True)
        while not stop.wait(0.5):
            if local.server.process.poll() is not None or local.engine.process.poll() is not None:
                print("cdk-ts local: a server exited on its own; stopping", file=sys.stderr)
                return 1
    finally:
        local.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
