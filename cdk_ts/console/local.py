"""``cdk-ts local``: a local DynamoDB that throttles and refuses as DynamoDB does, in the foreground.

Starts the engine and the rules proxy (``cdk_ts.testing.local_dynamodb``), prints the endpoint, the
``AWS_ENDPOINT_URL`` to export and the rules in force (``--json``: one JSON object, for scripts), then serves until
Ctrl-C or SIGTERM, and stops every process it started. Needs ``pip install 'cdk-ts[testing]'``.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading
from typing import Any

from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import flag_type, json_setting, whole

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
    p.add_argument("--port", type=flag_type(int, _port, "--port"), default=None,
                   help="the endpoint's port on 127.0.0.1, 1-65535 (default: a free one)")
    p.add_argument("--guesses", action="store_true",
                   help="also apply the rules whose numbers no public source gives (default: documented rules only)")
    p.add_argument("--disable", action="append", default=[], metavar="RULE",
                   help="a rule not to apply, by name (repeatable); the rules in force are listed at start")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="settings",
                   help="a RulesSettings field, VALUE in JSON (repeatable), e.g. --set write_units_per_second=10")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return p


def _port(name: str, value: object) -> int | None:
    return whole(name, value, minimum=1, maximum=65535, hint="a TCP port; leave --port out for a free one")


def check_port_free(port: int | None) -> None:
    """Refuse a ``--port`` something already listens on, saying whether it answers as DynamoDB does.

    The proxy would fail to bind it after the engine started; a reader of ``--json`` must never get a banner
    for a server that is not this command's.

    :raises ValidationError: naming ``--port`` and what holds it.
    """
    if port is None:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the proxy binds: TIME_WAIT is no owner
        try:
            probe.bind(("127.0.0.1", port))
            return
        except OSError:
            pass
    holder = ("a DynamoDB endpoint (another cdk-ts local, DynamoDB Local or moto_server)"
              if _answers_as_dynamodb(port) else "another program")
    raise ValidationError(
        f"--port {port} is in use by {holder}: stop it, pick another port, or leave --port out for a free one"
    )


def _answers_as_dynamodb(port: int) -> bool:
    """Whether the server on ``port`` answers a ListTables as DynamoDB does (a JSON body with ``TableNames``)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("POST", "/", body=b"{}", headers={
            "X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0",
            "Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, "
                             "SignedHeaders=host, Signature=0",
        })
        return "TableNames" in json.loads(connection.getresponse().read() or b"{}")
    except (OSError, ValueError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _one_line(error: BaseException) -> str:
    """``error``'s message without a server's traceback (its first line, then the exception it ended with)."""
    text = str(error)
    if "Traceback (most recent call last)" not in text:
        return text
    lines = [line for line in text.splitlines() if line.strip()]
    return f"{text.split('Traceback')[0].strip()} {lines[-1].strip()}"


def _settings(pairs: list[str]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ValidationError(f"--set {pair!r}: write NAME=VALUE, e.g. --set update_seconds=60")
        try:
            settings[name] = json_setting(f"--set {pair!r}", value)
        except ValidationError:
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
        settings = _settings(args.settings)
        check_port_free(args.port)
        local = start_local_dynamodb(args.engine, guesses=args.guesses, disabled_rules=args.disable,
                                     port=args.port, **settings)
    except (ValueError, TypeError, RuntimeError, OSError) as error:
        print(f"cdk-ts local: error: {_one_line(error)}", file=sys.stderr)
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
