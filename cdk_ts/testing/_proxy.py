"""A local DynamoDB that says no where DynamoDB says no.

``start_rules_proxy(engine)`` starts an HTTP proxy on 127.0.0.1 in front of a local engine (moto_server or
dynalite, from ``cdk_ts.testing._engines``) that applies DynamoDB's documented rules: UpdateTable's one-change
and no-op rules, CREATING/UPDATING/DELETING windows with ``ResourceInUseException``, the daily budget of
capacity decreases, on-demand switches and table-class changes, warm throughput that only rises, the
account's limit of tables in transition, data-plane throughput (partitions, provisioned capacity with burst,
on-demand peaks, maximums and quotas, GSI pushback, each throttle in the shape of the table's billing mode), and
what settles after a moment (PITR refused right after a new table turns ACTIVE, tags that lag, TTL changed once
an hour). boto3 and botocore talk to it unmodified, their own retries included. ``_rules.py`` and ``_settling.py``
hold the control-plane rules (with their sources), ``_throughput.py`` the data plane's limits, ``_server.py`` the
HTTP side, ``_registry.py`` the rules by name; see docs/testing.md.

```python
proxy = start_rules_proxy(moto_server, start_time=datetime(2026, 3, 10, tzinfo=UTC), update_seconds=60)
ddb = proxy.client()
proxy.advance(61)             # the table is ACTIVE again
proxy.stop()
```
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

from cdk_ts.testing._engines import LocalServer, LocalServerError, free_port, server_client_for
from cdk_ts.testing._rules import RuleError, RulesSettings, TableState
from cdk_ts.testing._setting_checks import aware_time
from cdk_ts_runtime._errors import ValidationError

__all__ = ["RuleError", "RulesProxy", "RulesSettings", "TableState", "start_rules_proxy"]

#: The codes ``RulesProxy.throttles`` counts: the throttles of both billing modes and batches' partial throttles.
THROTTLE_CODES = ("ThrottlingException", "ProvisionedThroughputExceededException", "UnprocessedItems",
                  "UnprocessedKeys")


class RulesProxy:
    """A running rules proxy: its endpoint, its clock and settings, and the state it tracks per table."""

    def __init__(self, server: LocalServer, engine: LocalServer) -> None:
        self.server = server
        self.engine = engine

    @property
    def endpoint_url(self) -> str:
        """Where boto3 clients connect."""
        return self.server.endpoint_url

    @property
    def pid(self) -> int:
        """The proxy's process ID (its own process group)."""
        return self.server.pid

    def stop(self) -> None:
        """Stop the proxy's process group (safe to call twice); the engine keeps running."""
        self.server.stop()

    def client(self, service: str = "dynamodb", **client_kwargs):
        """A boto3 client for the proxy: dummy credentials, us-east-1; ``client_kwargs`` pass through.

        :param service: the service (DynamoDB Streams passes through the proxy too).

            Default: ``"dynamodb"``.
        """
        if not client_kwargs:
            return server_client_for(self.server, service)
        import boto3

        options = {
            "region_name": "us-east-1",
            "endpoint_url": self.endpoint_url,
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            **client_kwargs,
        }
        return boto3.client(service, **options)

    # -- admin requests ---------------------------------------------------------------------------------------
    def _admin(self, path: str, payload: dict | None = None) -> dict:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(  # noqa: S310 - loopback URL we built
            f"{self.endpoint_url}/_rules/{path}", data=data, method="GET" if data is None else "POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise ValidationError(f"rules proxy refused /_rules/{path}: {error.read().decode()}") from error

    def now(self) -> datetime:
        """The proxy's current time (aware UTC)."""
        return datetime.fromisoformat(self._admin("time")["now"])

    def set_time(self, when: datetime) -> None:
        """Set the proxy's clock to ``when`` (a naive time is taken as UTC); the clock stays frozen there."""
        self._admin("time", {"set": when.isoformat()})

    def advance(self, seconds: float | timedelta) -> None:
        """Move the clock forward; a real clock is frozen at the current time first (the test takes control)."""
        if isinstance(seconds, timedelta):
            seconds = seconds.total_seconds()
        self._admin("time", {"advance": seconds})

    def configure(self, **settings) -> RulesSettings:
        """Change ``RulesSettings`` fields at run time; returns the settings now in force."""
        return RulesSettings(**self._admin("settings", settings)["settings"])

    @property
    def settings(self) -> RulesSettings:
        """The settings in force."""
        return RulesSettings(**self._admin("settings")["settings"])

    def table_state(self, name: str) -> dict:
        """What the harness tracks for ``name`` (see ``TableState``; datetimes as aware datetimes); {} if nothing."""
        state = self._admin(f"tables/{name}")["state"]
        return {} if state is None else _parse_times(state)

    def reset(self) -> None:
        """Forget tracked tables, partition buckets and pending deletes (settings and clock stay)."""
        self._admin("reset", {})

    def stats(self) -> dict:
        """Counts since the last ``reset_stats``: ``requests`` that arrived, by operation (the proxy's own reads
        of stored items are not among them); ``refusals`` by ``Operation:Code``; ``refusal_reasons`` by
        ``Operation:Code:reason``, one per throttling reason; ``table_refusals`` by ``table:Operation:Code``;
        ``refusal_details``, a list of ``{table, operation, code, reasons, key, count}`` (``key``: the partition key
        value refused, for single-item operations and Query; None otherwise), which ``refusals`` filters."""
        return self._admin("stats")

    def refusals(self, *, table: str | None = None, code: str | None = None, operation: str | None = None,
                 reason: str | None = None, key: dict | None = None) -> int:
        """How many requests the proxy refused since the last ``reset_stats``, of those matching every filter given.

        :param table: the table name.

            Default: None -- any.
        :param code: the error code (``ResourceInUseException``; batches' partial throttles count as
            ``UnprocessedItems``/``UnprocessedKeys``). Default: None -- any.
        :param operation: the API operation (``PutItem``).
            Default: None -- any.
        :param reason: a throttling reason (``TableWriteKeyRangeThroughputExceeded``).
            Default: None -- any.
        :param key: the partition key value as an AttributeValue, ``dict(S="device-1")`` for instance.
            Default: None -- any.
        """
        total = 0
        for entry in self.stats()["refusal_details"]:
            if ((table is None or entry["table"] == table) and (code is None or entry["code"] == code)
                    and (operation is None or entry["operation"] == operation)
                    and (reason is None or reason in entry["reasons"]) and (key is None or entry["key"] == key)):
                total += entry["count"]
        return total

    def throttles(self, *, table: str | None = None, reason: str | None = None, operation: str | None = None,
                  key: dict | None = None) -> int:
        """How many requests the proxy throttled (``ThrottlingException``, ``ProvisionedThroughputExceededException``
        or a batch's unprocessed part) since the last ``reset_stats``, of those matching every filter given.

        :param table: the table name.

            Default: None -- any.
        :param reason: a throttling reason (``TableWriteKeyRangeThroughputExceeded``).
            Default: None -- any.
        :param operation: the API operation.
            Default: None -- any.
        :param key: the partition key value as an AttributeValue, ``dict(S="device-1")`` for instance.
            Default: None -- any.
        """
        return sum(self.refusals(table=table, code=code, operation=operation, reason=reason, key=key)
                   for code in THROTTLE_CODES)

    def reset_stats(self) -> None:
        """Zero the request and refusal counts."""
        self._admin("stats", {})

    def __enter__(self) -> RulesProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _parse_times(value):
    if isinstance(value, dict):
        return {k: _parse_times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_parse_times(v) for v in value]
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and "T" in value:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value
    return value


def start_rules_proxy(engine: LocalServer, *, start_time: datetime | None = None, port: int | None = None,
                      **settings) -> RulesProxy:
    """Start the rules proxy in front of ``engine`` as a subprocess on 127.0.0.1 and a free port.

    :param engine: moto_server or dynalite (``start_moto_server``, ``start_dynalite``), already running.
    :param start_time: a frozen clock starting there, an aware datetime (time moves only by ``set_time``/``advance``,
        deterministic tests). Default: None — the real UTC clock (benchmarks).
    :param port: the proxy's port on 127.0.0.1.
        Default: None -- a free one.
    :param settings: ``RulesSettings`` fields; unknown names are refused.
    """
    merged = RulesSettings().updated(**settings)
    port = port or free_port()
    command = [sys.executable, "-m", "cdk_ts.testing._server", "--engine", engine.endpoint_url,
               "--port", str(port), "--settings", json.dumps(asdict(merged))]
    if start_time is not None:
        command += ["--start-time", aware_time("start_time", start_time).astimezone(UTC).isoformat()]
    # A file, not a pipe: a pipe nobody reads would block the proxy once full. Closed with the process.
    log = tempfile.TemporaryFile()  # noqa: SIM115
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    server = LocalServer("dynamodb-rules", url, process)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            log.seek(0)
            raise LocalServerError(f"rules proxy exited with code {process.returncode}: {log.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_rules/health", timeout=1):  # noqa: S310
                break
        except OSError:
            if time.monotonic() > deadline:
                server.stop()
                raise LocalServerError(f"rules proxy did not listen on {url} within 30 s") from None
            time.sleep(0.05)
    return RulesProxy(server, engine)
