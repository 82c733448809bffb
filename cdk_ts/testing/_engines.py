"""The local engines behind the rules proxy: moto_server and dynalite on 127.0.0.1.

``start_moto_server`` (every service moto has; ``pip install 'cdk-ts[testing]'``) and ``start_dynalite`` (a
second DynamoDB-compatible server, from npm, run under ``dynalite_server.js`` beside this file) run as
subprocesses in their own process groups on free ports; ``LocalServer.stop`` ends the group, and every server
still running when the interpreter exits is stopped then (``atexit``). Where an emulator differs from DynamoDB in
a way the code under test meets, the fix is made here, on the server side, never in the code under test.
``RequestCounter`` counts the API calls a boto3 client makes. ``python -m cdk_ts.testing._engines moto PORT``
serves moto_server in this process, optionally with mapped functions not invoked (``--keep-stream-records``);
it exits when the process that started it is gone.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cdk_ts_runtime import _environment
from cdk_ts_runtime._errors import CdkTsError

#: Where dynalite's command line is looked for when ``dynalite_command`` is not told: this variable, else
#: ``node_modules/dynalite/cli.js`` in the working directory or a parent of it.
DYNALITE_CLI_VARIABLE = _environment.DYNALITE_CLI

_RUNNING: dict[int, LocalServer] = {}  # servers started here and not yet stopped, by PID: stopped at exit


class LocalServerError(CdkTsError, RuntimeError):
    """A local server (an engine or the rules proxy) that could not start: missing, exited, or not listening."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_all() -> None:
    """Stop every server started in this process and not stopped yet (registered with ``atexit``)."""
    for server in list(_RUNNING.values()):
        server.stop()


atexit.register(stop_all)


def exit_with_parent(interval: float = 0.5) -> None:
    """End this process (a server started by ``start_*``) once the process that started it is gone.

    A parent killed outright (SIGKILL, a crashed test run) runs no ``atexit``: the server would live on. Its own
    process group keeps it from the terminal's Ctrl-C, so it watches its parent instead: when the parent dies, the
    server is handed to another process and ``os.getppid`` changes.

    :param interval: seconds between looks at the parent.

        Default: 0.5.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


@dataclass
class LocalServer:
    """A server process started here; ``stop()`` ends it (and is safe to call twice)."""

    name: str
    endpoint_url: str
    process: subprocess.Popen

    def __post_init__(self) -> None:
        if self.process is not None:  # None: an address with nothing started here (tests of the proxy's faults)
            _RUNNING[self.process.pid] = self

    def stop(self) -> None:
        """Terminate the process group and wait for it, killing it if it does not exit in 10 s."""
        _RUNNING.pop(self.process.pid, None)
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            except ProcessLookupError:  # the group ended between the poll and the signal
                self.process.wait(timeout=10)

    @property
    def pid(self) -> int:
        """The server's process ID."""
        return self.process.pid


def _wait_until_listening(name: str, url: str, process: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalServerError(f"{name} exited with code {process.returncode} before listening on {url}")
        try:
            urllib.request.urlopen(url, timeout=1)  # noqa: S310 - loopback URL we built
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer means it is up
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise LocalServerError(f"{name} did not listen on {url} within {timeout:.0f} s")


def start_moto_server(
    host: str = "127.0.0.1", *, port: int | None = None, keep_stream_records: bool = False, url_host: str | None = None
) -> LocalServer:
    """Start ``moto_server`` (all services) as a subprocess listening on ``host``.

    :param host: the address it binds.

        Default: 127.0.0.1.
    :param port: the port.
        Default: None — a free one.
    :param keep_stream_records: do not hand stream records to mapped functions (see ``serve_moto``).
        Default: False — moto's own behaviour.
    :param url_host: the host name in ``endpoint_url``.
        Default: None — ``host``. The CDK CLI's template
        URLs are resolved by moto only with the host name ``localhost``.
    """
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cdk_ts.testing._engines", "moto", str(port), "--host", host]
        + (["--keep-stream-records"] if keep_stream_records else []),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _wait_until_listening("moto_server", f"http://{host}:{port}", process)
    return LocalServer("moto_server", f"http://{url_host or host}:{port}", process)


def serve_moto(host: str, port: int, *, keep_stream_records: bool = False) -> None:
    """Run moto_server in this process until it is stopped.

    With ``keep_stream_records`` mapped functions are not invoked: moto hands each new record of a
    mapped stream to the mapped function, which it cannot start without Docker, and then drops the
    record; it also keeps that hook after the mapping is deleted. Records then stay readable with
    GetRecords, and the sample scenario runs the archiver's code on them as the mapping would.

    :param keep_stream_records: see above.

        Default: False -- moto's own behaviour.
    """
    try:
        from moto.server import main as moto_server
    except ImportError as error:
        raise LocalServerError(
            "moto_server is not installed: pip install 'cdk-ts[testing]' (moto[server,dynamodb])"
        ) from error

    _model_alarms_in_cloudformation()
    if keep_stream_records:
        from moto.awslambda.models import LambdaBackend

        def keep(self: LambdaBackend, function_arn: str, items: list, source: str) -> None:
            return None

        LambdaBackend.send_dynamodb_items = keep  # type: ignore[method-assign,assignment]
    moto_server(["-H", host, "-p", str(port)])


def _model_alarms_in_cloudformation() -> None:
    """Give moto's CloudFormation an ``AWS::CloudWatch::Alarm`` (name and ``Arn``), which it otherwise skips.

    moto resolves a skipped resource's ``Ref`` but fails on its ``Fn::GetAtt``, which a dashboard's alarm
    widget uses. The stand-in stores nothing: alarms are asserted in template tests, not in the emulator.
    Defined before moto reads its list of CloudFormation models (on the first stack).
    """
    from moto.core.common_models import CloudFormationModel

    class AlarmStandIn(CloudFormationModel):
        __module__ = "moto.cloudwatch.cdk_ts_harness"  # moto files each model under the service in its module path

        def __init__(self, name: str, arn: str) -> None:
            self.name, self.arn = name, arn

        @staticmethod
        def cloudformation_name_type() -> str:
            return "AlarmName"

        @staticmethod
        def cloudformation_type() -> str:
            return "AWS::CloudWatch::Alarm"

        @classmethod
        def has_cfn_attr(cls, attr: str) -> bool:
            return attr == "Arn"

        def get_cfn_attribute(self, attribute_name: str) -> str:
            return self.arn

        @property
        def physical_resource_id(self) -> str:
            return self.name

        @classmethod
        def create_from_cloudformation_json(  # type: ignore[override]
            cls, resource_name: str, cloudformation_json: dict, account_id: str, region_name: str, **kwargs: object
        ) -> AlarmStandIn:
            name = cloudformation_json.get("Properties", {}).get("AlarmName") or resource_name
            return cls(name, f"arn:aws:cloudwatch:{region_name}:{account_id}:alarm:{name}")

        @classmethod
        def update_from_cloudformation_json(  # type: ignore[override]
            cls, original_resource: object, new_resource_name: str, cloudformation_json: dict, account_id: str,
            region_name: str,
        ) -> AlarmStandIn:
            return cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)

        @classmethod
        def delete_from_cloudformation_json(  # type: ignore[override]
            cls, resource_name: str, cloudformation_json: dict, account_id: str, region_name: str
        ) -> None:
            return None


def find_dynalite_cli(start: Path | None = None) -> Path | None:
    """dynalite's ``cli.js``: ``$CDK_TS_DYNALITE_CLI``, else ``node_modules/dynalite/cli.js`` in ``start`` (default:
    the working directory) or the nearest parent that has one; None when there is none.

    :param start: the folder to look from.

        Default: None -- the working directory.
    """
    named = os.environ.get(DYNALITE_CLI_VARIABLE)
    if named:
        return Path(named)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        script = folder / "node_modules" / "dynalite" / "cli.js"
        if script.exists():
            return script
    return None


def dynalite_command(cli: Path | None = None) -> list[str]:
    """The command that runs the npm-installed dynalite; a clear error when node or dynalite is missing.

    dynalite runs under ``dynalite_server.js`` (beside this file), which makes its CreateTable apply the
    request's ``Tags`` as DynamoDB does; dynalite 4.0.0 drops them.

    :param cli: dynalite's ``cli.js``.

        Default: None -- ``find_dynalite_cli()``.
    """
    script = cli or find_dynalite_cli()
    node = shutil.which("node")
    if script is None or not script.exists() or node is None:
        raise LocalServerError(
            f"dynalite needs node and the npm package: `npm install dynalite` in your project (found cli.js: "
            f"{script}, node: {node}), or set {DYNALITE_CLI_VARIABLE} to its cli.js; engine='moto' needs neither"
        )
    return [node, str(Path(__file__).with_name("dynalite_server.js")), str(script)]


def start_dynalite(cli: Path | None = None) -> LocalServer:
    """Start dynalite (in-memory, fast table state changes) on 127.0.0.1 and a free port.

    :param cli: dynalite's ``cli.js``.

        Default: None -- found by ``find_dynalite_cli()``.
    """
    port = free_port()
    process = subprocess.Popen(
        [*dynalite_command(cli), "--host", "127.0.0.1", "--port", str(port),
         "--createTableMs", "20", "--deleteTableMs", "20", "--updateTableMs", "20"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    _wait_until_listening("dynalite", url, process)
    return LocalServer("dynalite", url, process)


def server_client_for(server: LocalServer, service: str = "dynamodb", region: str = "us-east-1"):
    """A boto3 client for ``service`` on a local server, with dummy credentials.

    :param service: the AWS service.

        Default: ``"dynamodb"``.
    :param region: the Region name.
        Default: ``"us-east-1"``.
    """
    import boto3

    return boto3.client(
        service,
        region_name=region,
        endpoint_url=server.endpoint_url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


class RequestCounter:
    """Counts every API call a boto3 client makes, by operation name (thread-safe)."""

    def __init__(self, client) -> None:
        self.calls: Counter[str] = Counter()
        self.params: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        self._client = client
        client.meta.events.register("provide-client-params.*.*", self._record)

    def _record(self, params, model, **_kwargs) -> None:
        with self._lock:
            self.calls[model.name] += 1
            self.params.append((model.name, dict(params)))

    def reset(self) -> None:
        """Forget the calls counted so far."""
        with self._lock:
            self.calls.clear()
            self.params.clear()

    def stop(self) -> None:
        """Stop counting."""
        self._client.meta.events.unregister("provide-client-params.*.*", self._record)


def main(argv: list[str] | None = None) -> None:
    """``python -m cdk_ts.testing._engines moto PORT [--host H] [--keep-stream-records]``: serve moto here.

    :param argv: the arguments.

        Default: None -- ``sys.argv[1:]``.
    """
    parser = argparse.ArgumentParser(description="Serve moto_server in this process")
    parser.add_argument("server", choices=["moto"])
    parser.add_argument("port", type=int)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--keep-stream-records", action="store_true")
    args = parser.parse_args(argv)
    exit_with_parent()
    serve_moto(args.host, args.port, keep_stream_records=args.keep_stream_records)


if __name__ == "__main__":
    main()
