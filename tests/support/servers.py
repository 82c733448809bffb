"""Start and stop local DynamoDB-compatible servers on 127.0.0.1 for the test session."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LocalServer:
    """A server process the tests started; ``stop()`` ends it (and is safe to call twice)."""

    name: str
    endpoint_url: str
    process: subprocess.Popen

    def stop(self) -> None:
        """Terminate the process and wait for it, killing it if it does not exit in 10 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _wait_until_listening(name: str, url: str, process: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode} before listening on {url}")
        try:
            urllib.request.urlopen(url, timeout=1)  # noqa: S310 - loopback URL we built
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer means it is up
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{name} did not listen on {url} within {timeout:.0f} s")


def start_moto_server(host: str = "127.0.0.1") -> LocalServer:
    """Start ``moto_server`` (all services) as a subprocess on a free port."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", host, "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://{host}:{port}"
    _wait_until_listening("moto_server", url, process)
    return LocalServer("moto_server", url, process)


def dynalite_command() -> list[str]:
    """The command that runs the npm-installed dynalite; a clear error when it is not installed."""
    script = REPO / "node_modules" / "dynalite" / "cli.js"
    node = shutil.which("node")
    if not script.exists() or node is None:
        raise RuntimeError(
            f"dynalite is not installed at {script}: run `npm ci` in {REPO} "
            "(scripts/test.sh does this) so the second DynamoDB-compatible server is available"
        )
    return [node, str(script)]


def start_dynalite() -> LocalServer:
    """Start dynalite (in-memory, fast table state changes) on 127.0.0.1 and a free port."""
    port = free_port()
    process = subprocess.Popen(
        [*dynalite_command(), "--host", "127.0.0.1", "--port", str(port),
         "--createTableMs", "20", "--deleteTableMs", "20", "--updateTableMs", "20"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    url = f"http://127.0.0.1:{port}"
    _wait_until_listening("dynalite", url, process)
    return LocalServer("dynalite", url, process)


def server_client_for(server: LocalServer, service: str = "dynamodb", region: str = "us-east-1"):
    """A boto3 client for ``service`` on a local server, with dummy credentials."""
    import boto3

    return boto3.client(
        service,
        region_name=region,
        endpoint_url=server.endpoint_url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
