"""The rules proxy's HTTP side: a threaded server on 127.0.0.1 in front of a local DynamoDB engine.

Run as ``python -m cdk_ts.testing._server --engine URL --port PORT [--start-time ISO]
[--settings JSON]``; ``start_rules_proxy`` does that. botocore POSTs every DynamoDB call to ``/``; the
proxy's own admin requests use paths under ``/_rules/``. Bodies the proxy writes or rewrites get a fresh
``x-amz-crc32`` (botocore checks it for DynamoDB and refuses a response whose checksum does not match).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import threading
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from cdk_ts.testing._control_plane import ControlPlane
from cdk_ts.testing._data_plane import DataPlaneRules
from cdk_ts.testing._engines import exit_with_parent
from cdk_ts.testing._rules import (
    HARNESS_OWNED_FIELDS,
    RuleError,
    RulesSettings,
    json_answer,
    parse_time,
    table_name_of,
)
from cdk_ts.testing._setting_checks import LARGEST
from cdk_ts.testing._settling import Settling
from cdk_ts.testing._throughput import (
    TableShape,
    Throughput,
    reasons_of,
)
from cdk_ts.testing._validity import EngineDecides, check_names, check_request
from cdk_ts_runtime._errors import ValidationError

TARGET_PREFIX = "DynamoDB_20120810."
# Request headers not passed on to the engine (hop-by-hop, or recomputed).
_DROP_REQUEST = {"host", "content-length", "connection", "keep-alive", "accept-encoding", "transfer-encoding"}
_REPLACED_REQUEST = {"x-amz-target", "content-type"}  # set by ``forward`` for the operation it sends
_DROP_RESPONSE = {"content-length", "connection", "keep-alive", "transfer-encoding", "x-amz-crc32", "date", "server"}

# A fault of the proxy itself: HTTP 400 with a code botocore does not retry (its retries cover 5xx, throttles and
# a few named codes: botocore/retries/standard.py, data/_retry.json), so a harness bug fails the test at once and
# says it is the harness's, never looking like DynamoDB's retryable InternalServerError.
HARNESS_FAULT = "HarnessFaultException"
JSON_1_0 = "application/x-amz-json-1.0"
HARNESS_FAULT_TYPE = "cdk_ts.testing#" + HARNESS_FAULT


class Clock:
    """The harness clock: frozen at a start time and moved only by ``set``/``advance``, or the real UTC clock."""

    def __init__(self, start: datetime | None) -> None:
        self._frozen = start

    def now(self) -> datetime:
        """The current harness time (aware UTC)."""
        return self._frozen if self._frozen is not None else datetime.now(UTC)

    @property
    def frozen(self) -> bool:
        """Whether time moves only when told to."""
        return self._frozen is not None

    def set(self, when: datetime) -> None:
        """Jump to ``when`` (freezes a real clock there)."""
        self._frozen = when

    def advance(self, seconds: float) -> None:
        """Move the clock forward; a real clock is frozen at the current time first (the test takes control)."""
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
            raise ValidationError(f"advance takes a finite number of seconds >= 0, not {seconds!r}")
        if seconds < 0:
            raise ValidationError(f"advance takes seconds >= 0, not {seconds}: time does not go back (use set)")
        if seconds > LARGEST:
            raise ValidationError(f"advance takes at most {LARGEST:g} seconds, not {seconds:g}")
        if self._frozen is None:
            self._frozen = datetime.now(UTC)
        self._frozen += timedelta(seconds=seconds)


class Engine:
    """Keep-alive HTTP connections to the engine, one per server thread."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        return conn

    def send(self, method: str, path: str, body: bytes, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        """One request to the engine; a connection the engine closed is reopened once."""
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                if response.will_close:
                    conn.close()
                return response.status, response.getheaders(), data
            except (http.client.HTTPException, ConnectionError, OSError):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


class RulesState:
    """Everything the proxy knows: settings, clock, control-plane state, throughput buckets, request counts."""

    def __init__(self, engine_url: str, settings: RulesSettings, start: datetime | None) -> None:
        self.settings = settings
        self.clock = Clock(start)
        self.control = ControlPlane(settings)
        self.settling = Settling(lambda: self.settings)  # backups window, tag lag, TTL (sources in _settling.py)
        self.throughput = Throughput(settings)
        self.engine = Engine(engine_url)
        self.lock = threading.RLock()  # control plane and admin: one at a time
        self.table_info: dict[str, TableShape] = {}  # keys, ARN, indexes learnt from the engine's DescribeTable
        self.pending_deletes: dict[str, tuple[bytes, dict]] = {}  # name -> the DeleteTable to replay
        self.insights: dict[str, dict] = {}  # name -> Contributor Insights state (neither engine has the API)
        self.requests: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()  # "Operation:Code"
        self.refusal_reasons: Counter[str] = Counter()  # "Operation:Code:reason", one per throttling reason
        self.table_refusals: Counter[str] = Counter()  # "table:Operation:Code"
        # (table, Operation, Code, reasons, partition key identity or None): what ``LocalDynamoDB.throttles`` reads
        self.refusal_details: Counter[tuple] = Counter()
        self.stats_lock = threading.Lock()
        # The path (with its query string) of the request each server thread answers: forwarded as the client sent
        # it, so query-string signing reaches the engine.
        self.request_path = threading.local()

    def count(self, counter: Counter, key: str) -> None:
        """Count one request or refusal (thread-safe: the benchmarks read these counts)."""
        with self.stats_lock:
            counter[key] += 1

    def count_refusal(self, operation: str, code: str, reasons: Sequence[dict] = (), tables: Sequence[str] = (),
                      key: str | None = None) -> None:
        """Count one refusal by ``Operation:Code``, by each throttling reason, and by table (the reasons' resources,
        else ``tables``); with ``key`` (a partition key's identity: single-item operations and Query) by key too."""
        named = [_table_of_arn(r["resource"]) for r in reasons] or list(tables)
        reason_names = tuple(sorted({r["reason"] for r in reasons}))
        with self.stats_lock:
            self.refusals[f"{operation}:{code}"] += 1
            for reason in reasons:
                self.refusal_reasons[f"{operation}:{code}:{reason['reason']}"] += 1
            for table in dict.fromkeys(named):
                self.table_refusals[f"{table}:{operation}:{code}"] += 1
            for detail_table in dict.fromkeys(named) or [None]:
                self.refusal_details[(detail_table, operation, code, reason_names, key)] += 1

    def clear_stats(self) -> None:
        """Zero every count."""
        with self.stats_lock:
            for counter in (self.requests, self.refusals, self.refusal_reasons, self.table_refusals,
                            self.refusal_details):
                counter.clear()

    # -- engine helpers ---------------------------------------------------------------------------------------
    def forward(self, operation: str, body: bytes, headers: dict,
                content_type: str | None = None) -> tuple[int, list[tuple[str, str]], bytes]:
        """Send ``operation`` with ``body`` to the engine, with the caller's auth headers.

        :param content_type: the body's content type.
            Default: None -- the client's, or none when it sent none (the engine answers that as DynamoDB does).
        """
        # Header names are case-insensitive (RFC 9110, 5.1): the client's own target and content type go, however
        # it spells them (the AWS SDK for JavaScript v3 sends lower case), or the engine would see two of each.
        out = {k: v for k, v in headers.items() if k.lower() not in _DROP_REQUEST | _REPLACED_REQUEST}
        out["X-Amz-Target"] = TARGET_PREFIX + operation
        # DynamoDB answers in the JSON content type it was sent, application/json when none (dynalite's connection
        # tests, recorded against DynamoDB).
        content_type = content_type or _content_type(headers)
        if content_type:
            out["Content-Type"] = content_type
        return self.engine.send("POST", getattr(self.request_path, "value", "/"), body, out)

    def call(self, operation: str, request: dict, headers: dict) -> tuple[int, dict]:
        """``forward`` with JSON in and out."""
        status, _headers, data = self.forward(operation, json.dumps(request).encode(), headers, JSON_1_0)
        return status, (json.loads(data) if data else {})

    def describe(self, name: str, headers: dict) -> dict | None:
        """The engine's description of ``name``, or None when the engine does not have it."""
        status, body = self.call("DescribeTable", {"TableName": name}, headers)
        return body.get("Table") if status == 200 else None

    def shape(self, name: str, headers: dict) -> TableShape | None:
        """Keys, ARN and indexes of ``name`` (cached; None if the engine has no such table)."""
        shape = self.table_info.get(name)
        if shape is None:
            description = self.describe(name, headers)
            if description is None:
                return None
            shape = self.table_info[name] = TableShape.from_description(description)
        return shape

    def wait_engine_active(self, name: str, headers: dict) -> None:
        """Wait (up to 5 s) until the engine itself reports ``name`` ACTIVE.

        dynalite keeps its own CREATING/UPDATING for a moment and refuses writes or updates meanwhile; the
        harness's windows are the ones tests see, so the engine's must be over before the next request.
        """
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            description = self.describe(name, headers)
            if description is None or description.get("TableStatus") == "ACTIVE":
                return
            time.sleep(0.01)

    def finish_deletes(self, headers: dict) -> None:
        """Delete on the engine every table whose DELETING window has ended (lazily, on the next request)."""
        if not self.pending_deletes:
            return
        with self.lock:
            for name in self.control.due_deletes(self.clock.now()):
                body, saved_headers = self.pending_deletes.pop(name, (None, headers))
                if body is not None:
                    self.forward("DeleteTable", body, saved_headers)
                    # dynalite keeps a deleted table DELETING for a moment of its own: wait it out, so
                    # the table is gone for whatever request comes next.
                    deadline = time.monotonic() + 5
                    while self.describe(name, saved_headers) is not None and time.monotonic() < deadline:
                        time.sleep(0.01)
                self.control.forget(name)
                self.settling.forget(name)
                self.table_info.pop(name, None)


DATA_PLANE = {"PutItem", "UpdateItem", "DeleteItem", "GetItem", "Query", "Scan", "BatchWriteItem", "BatchGetItem",
              "TransactWriteItems", "TransactGetItems"}


def _content_type(headers: dict) -> str | None:
    """The request's Content-Type, however the client spelt the header's name."""
    return next((v for k, v in headers.items() if k.lower() == "content-type"), None)


def _tables_of(request: dict) -> list[str]:
    """The table names a data-plane request touches (names of the wrong type are the engine's to refuse)."""
    if not isinstance(request, dict):  # a body that is JSON but not an object: the engine's to refuse
        return []
    if isinstance(request.get("TableName"), str):
        return [table_name_of(request["TableName"])]
    if isinstance(request.get("RequestItems"), dict):
        return [table_name_of(t) for t in request["RequestItems"] if isinstance(t, str)]
    names = []
    entries = request.get("TransactItems")
    for entry in entries if isinstance(entries, list) else []:
        for action in entry.values() if isinstance(entry, dict) else []:
            if isinstance(action, dict) and isinstance(action.get("TableName"), str):
                names.append(table_name_of(action["TableName"]))
    return names


def _parsed(body: bytes) -> dict:
    """The request's JSON object. A body that is not JSON is DynamoDB's SerializationException; JSON that is not an
    object is the engine's to refuse."""
    try:
        request = json.loads(body or b"{}")
    except (ValueError, RecursionError):  # not JSON, not UTF-8 (UnicodeDecodeError), or nested past the parser
        raise RuleError("SerializationException", "") from None
    if not isinstance(request, dict):
        raise EngineDecides
    return request


def _error(error: RuleError) -> tuple[int, list[tuple[str, str]], bytes]:
    return 400, [("Content-Type", "application/x-amz-json-1.0")], error.body()


def _table_of_arn(arn: str) -> str:
    """The table name in a table or index ARN (``...:table/NAME[/index/INDEX]``)."""
    return arn.split(":table/", 1)[-1].split("/", 1)[0]


def _harness_fault(error: Exception) -> tuple[int, list[tuple[str, str]], bytes]:
    """The proxy's answer to its own fault: names the harness and where it failed (see ``HARNESS_FAULT``)."""
    frames = traceback.extract_tb(error.__traceback__)[-3:]
    where = " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in reversed(frames))
    message = (f"The DynamoDB rules proxy (test harness) failed; this is not an answer of DynamoDB: "
               f"{type(error).__name__}: {error} (at {where})")
    body = json.dumps({"__type": HARNESS_FAULT_TYPE, "message": message}, separators=(",", ":")).encode()
    return 400, [("Content-Type", "application/x-amz-json-1.0")], body


class Rules:
    """Request handling: which rule applies to which operation (the item operations: :class:`DataPlaneRules`)."""

    def __init__(self, state: RulesState) -> None:
        self.s = state
        self.data_plane = DataPlaneRules(state)

    def handle(self, operation: str, body: bytes, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        """Answer one DynamoDB API call: refuse it, forward it, or forward it and rewrite the answer."""
        s = self.s
        s.count(s.requests, operation)
        handler = getattr(self, "op_" + operation, None) or getattr(self.data_plane, "op_" + operation, None)
        request: dict = {}
        try:
            s.finish_deletes(headers)
            request = _parsed(body)
            if handler is None and operation not in DATA_PLANE:
                return s.forward(operation, body, headers)
            # DynamoDB's order: the request's own validity, then the table and its state, then throughput.
            check_names(operation, request)
            if operation in DATA_PLANE:
                check_request(operation, request, item_size_rule=s.settings.on("item_size"))
                if s.control.tables:
                    s.control.check_data_plane(_tables_of(request), s.clock.now())
            if handler is None:
                return s.forward(operation, body, headers)
            answer = handler(request, body, headers)
            if operation == "UpdateTable":  # throughput or indexes may have changed: learn the shape again
                s.table_info.pop(table_name_of(request.get("TableName", "")), None)
            return answer
        except EngineDecides:  # a malformed request: the engine's validation answers it, before any rule of ours
            request = {}
            status, out_headers, data = s.forward(operation, body, headers)
            if status >= 500:  # the engine failed on it (moto_server answers some malformed bodies with HTTP 500)
                return _error(RuleError("SerializationException", ""))
            return status, out_headers, data
        except RuleError as error:
            s.count_refusal(operation, error.code, reasons_of(error), _tables_of(request), getattr(error, "key", None))
            return _error(error)
        except Exception as error:  # noqa: BLE001 - a harness fault: say so, in an answer botocore does not retry
            traceback.print_exc()  # to the proxy's log
            s.count_refusal(operation, HARNESS_FAULT, tables=_tables_of(request))
            return _harness_fault(error)

    # -- control plane -------------------------------------------------------------------------------------
    @staticmethod
    def _strip(request: dict) -> dict:
        return {k: v for k, v in request.items() if k not in HARNESS_OWNED_FIELDS}

    def op_CreateTable(self, request: dict, body: bytes, headers: dict):  # noqa: N802 - API name
        s = self.s
        with s.lock:
            now = s.clock.now()
            s.control.check_create(request, now)
            status, _h, data = s.forward("CreateTable", json.dumps(self._strip(request)).encode(), headers)
            if status != 200:
                return status, _h, data
            name = table_name_of(request["TableName"])
            s.table_info.pop(name, None)
            s.wait_engine_active(name, headers)
            s.control.record_create(request, now)
            payload = json.loads(data)
            s.control.overlay(payload["TableDescription"], now)
            s.settling.backups.created(name, now + timedelta(seconds=s.settings.create_seconds))
            if request.get("Tags"):  # no previous set: ListTagsOfResource shows none for a while
                s.settling.tags.changed(payload["TableDescription"]["TableArn"], [], now)
            return json_answer(200, payload)

    def _on_existing_table(self, operation: str, request: dict, body: bytes, headers: dict, act):
        """``act(name, description, now)`` under the lock, for a table the engine describes; for any other name
        the request goes to the engine unchanged, so its ResourceNotFoundException is the answer."""
        s = self.s
        name = table_name_of(request.get("TableName", ""))
        with s.lock:
            now = s.clock.now()
            description = s.describe(name, headers)
            if description is None:
                return s.forward(operation, body, headers)
            return act(name, description, now)

    def op_UpdateTable(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        s = self.s

        def update(name: str, description: dict, now: datetime):
            changes = s.control.check_update(request, description, now)
            forwarded = self._strip(request)
            if changes and set(forwarded) - {"TableName"}:
                status, _h, data = s.forward("UpdateTable", json.dumps(forwarded).encode(), headers)
                if status != 200:
                    return status, _h, data
                payload = json.loads(data)
                s.wait_engine_active(name, headers)
            else:  # only harness-owned fields, or values equal to the current ones: nothing for the engine to do
                payload = {"TableDescription": s.describe(name, headers) or description}
            s.control.record_update(name, changes, now)
            s.control.overlay(payload["TableDescription"], now)
            return json_answer(200, payload)

        return self._on_existing_table("UpdateTable", request, body, headers, update)

    def op_DeleteTable(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        s = self.s

        def delete(name: str, description: dict, now: datetime):
            if s.control.already_deleting(name, now):  # no error, the DELETING description (API_DeleteTable)
                return json_answer(200, {"TableDescription": s.control.overlay(description, now)})
            s.control.check_delete(name, description, now)
            s.control.record_delete(name, now)
            s.pending_deletes[name] = (body, dict(headers))
            return json_answer(200, {"TableDescription": s.control.overlay(description, now)})

        return self._on_existing_table("DeleteTable", request, body, headers, delete)

    # -- what settles after a moment (settling.py) ------------------------------------------------------------
    def op_UpdateContinuousBackups(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        s = self.s
        with s.lock:
            s.settling.backups.check(table_name_of(request.get("TableName", "")), s.clock.now())
        return s.forward("UpdateContinuousBackups", body, headers)

    def _list_tags(self, arn: str, headers: dict) -> list[dict]:
        """Every tag the engine holds for ``arn`` (all pages); [] when it answers with an error."""
        tags: list[dict] = []
        request: dict = {"ResourceArn": arn}
        while True:
            status, page = self.s.call("ListTagsOfResource", request, headers)
            if status != 200:
                return tags
            tags.extend(page.get("Tags") or [])
            if not page.get("NextToken"):
                return tags
            request["NextToken"] = page["NextToken"]

    def _retag(self, operation: str, request: dict, body: bytes, headers: dict):
        s = self.s
        arn = request.get("ResourceArn", "")
        with s.lock:
            before = self._list_tags(arn, headers)
            status, out_headers, data = s.forward(operation, body, headers)
            if status == 200:
                s.settling.tags.changed(arn, before, s.clock.now())
            return status, out_headers, data

    def op_TagResource(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        return self._retag("TagResource", request, body, headers)

    def op_UntagResource(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        return self._retag("UntagResource", request, body, headers)

    def op_ListTagsOfResource(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        s = self.s
        with s.lock:
            shown = s.settling.tags.shown(request.get("ResourceArn", ""), s.clock.now())
        if shown is None:
            return s.forward("ListTagsOfResource", body, headers)
        return json_answer(200, {"Tags": shown})

    def _no_such_table(self, request: dict, headers: dict):
        """The answer for a table the engine does not have: the engine's own, for its wording and its validation of
        the request; DynamoDB's ResourceNotFoundException when the engine does not know the operation (dynalite has
        no Contributor Insights)."""
        operation = next((v for k, v in headers.items() if k.lower() == "x-amz-target"), "")[len(TARGET_PREFIX):]
        status, out_headers, data = self.s.forward(operation, json.dumps(request).encode(), headers)
        code = ""
        if status == 400:
            try:
                code = str(json.loads(data).get("__type", "")).rsplit("#", 1)[-1]
            except (ValueError, AttributeError):
                code = ""
        if code in ("ResourceNotFoundException", "ValidationException", "SerializationException"):
            return status, out_headers, data
        raise RuleError("ResourceNotFoundException", "Requested resource not found")

    def _on_known_table(self, request: dict, headers: dict, act):
        """``act(name)`` under the state's lock for a table the engine has; DynamoDB's not-found answer otherwise."""
        name = table_name_of(request.get("TableName", ""))
        with self.s.lock:
            if self.s.describe(name, headers) is None:
                return self._no_such_table(request, headers)
            return act(name)

    def _time_to_live(self, request: dict, headers: dict, act):
        """``act(name, now)`` for a table the engine has, its TTL first learnt from the engine if it keeps one."""
        s = self.s

        def with_ttl_state(name: str):
            if name not in s.settling.ttl.tables:
                status, body = s.call("DescribeTimeToLive", {"TableName": name}, headers)  # dynalite: no TTL
                s.settling.ttl.state_for(name, body.get("TimeToLiveDescription") if status == 200 else None)
            return act(name, s.clock.now())

        return self._on_known_table(request, headers, with_ttl_state)

    def op_UpdateTimeToLive(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        specification = request.get("TimeToLiveSpecification") or {}
        return self._time_to_live(request, headers, lambda name, now: json_answer(
            200, {"TimeToLiveSpecification": self.s.settling.ttl.update(name, specification, now)}))

    def op_DescribeTimeToLive(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        return self._time_to_live(request, headers, lambda name, now: json_answer(
            200, {"TimeToLiveDescription": self.s.settling.ttl.describe(name, now)}))

    def op_DescribeTable(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        s = self.s
        status, _h, data = s.forward("DescribeTable", body, headers)
        if status != 200:
            return status, _h, data
        payload = json.loads(data)
        with s.lock:
            now = s.clock.now()
            s.control.overlay(payload["Table"], now)
            s.control.seen_by_wait(str(payload["Table"].get("TableName", "")), now)
        return json_answer(200, payload)

    # Contributor Insights: neither engine has the API, so the harness keeps each table's state. ENABLE sets the
    # mode, ACCESSED_AND_THROTTLED_KEYS when none is sent, and DISABLE keeps it (API_UpdateContributorInsights; a
    # re-ENABLE without a mode reverting to the default is reported in aws-controllers-k8s' DDB-TABLE-092
    # finding). Rule names follow the developer guide's
    # DynamoDBContributorInsights-{PKC|PKT}-{table}-{creation ms}; only the partition-key rules are listed.
    # Simplification: the status is ENABLED at once (DynamoDB passes through ENABLING for about a second).
    def _insights(self, request: dict, headers: dict, act):
        s = self.s
        return self._on_known_table(
            request, headers, lambda name: act(name, s.insights.setdefault(name, {"status": "DISABLED"}), s.clock.now())
        )

    def op_UpdateContributorInsights(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        action = request.get("ContributorInsightsAction")

        def update(name: str, state: dict, now: datetime):
            if action == "ENABLE":
                mode = request.get("ContributorInsightsMode") or "ACCESSED_AND_THROTTLED_KEYS"
                state.update(status="ENABLED", mode=mode, created=int(now.timestamp() * 1000))
            else:
                state["status"] = "DISABLED"
            return json_answer(200, {"TableName": name, "ContributorInsightsMode": state.get("mode"),
                               "ContributorInsightsStatus": "ENABLING" if action == "ENABLE" else "DISABLING"})

        return self._insights(request, headers, update)

    def op_DescribeContributorInsights(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        def describe(name: str, state: dict, _now: datetime):
            answer = {"TableName": name, "ContributorInsightsStatus": state["status"]}
            if state["status"] == "ENABLED":
                kinds = ("PKT",) if state["mode"] == "THROTTLED_KEYS" else ("PKC", "PKT")
                answer["ContributorInsightsMode"] = state["mode"]
                answer["ContributorInsightsRuleList"] = [
                    f"DynamoDBContributorInsights-{kind}-{name}-{state['created']}" for kind in kinds
                ]
            return json_answer(200, answer)

        return self._insights(request, headers, describe)


class Admin:
    """``/_rules/...``: the test's side door to the clock, the settings and the tracked state."""

    def __init__(self, state: RulesState) -> None:
        self.s = state

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, dict]:
        """Answer one admin request with (HTTP status, JSON)."""
        s = self.s
        data = json.loads(body) if body else {}
        parts = path.strip("/").split("/")[1:]  # after "_rules"
        with s.lock:
            if parts == ["health"]:
                return 200, {"ok": True}
            if parts == ["time"]:
                if method == "POST":
                    # A clock moved back never changes a table's state: each is settled at the time it leaves,
                    # so an ACTIVE table stays ACTIVE and an open window keeps its recorded end (docs/testing.md).
                    s.control.settle(s.clock.now())
                    if "set" in data:
                        if not isinstance(data["set"], str):
                            raise ValidationError(f"set takes an ISO 8601 time, not {data['set']!r}")
                        s.clock.set(parse_time(data["set"]))
                    if "advance" in data:
                        s.clock.advance(data["advance"])
                return 200, {"now": s.clock.now().isoformat(), "frozen": s.clock.frozen}
            if parts == ["settings"]:
                if method == "POST":
                    s.settings = s.settings.updated(**data)
                    s.control.settings = s.throughput.settings = s.settings
                return 200, {"settings": vars(s.settings)}
            if len(parts) == 2 and parts[0] == "tables":
                state = s.control.tables.get(parts[1])
                return 200, {"state": None if state is None else _jsonable(state.as_dict(s.clock.now()))}
            if parts == ["reset"]:
                s.control.tables.clear()
                s.settling = Settling(lambda: s.settings)
                s.throughput.clear()
                s.table_info.clear()
                s.pending_deletes.clear()
                s.insights.clear()
                return 200, {"ok": True}
            if parts == ["stats"]:
                if method == "POST":
                    s.clear_stats()
                with s.stats_lock:
                    details = [{"table": table, "operation": operation, "code": code, "reasons": list(reasons),
                                "key": None if key is None else json.loads(key), "count": count}
                               for (table, operation, code, reasons, key), count in s.refusal_details.items()]
                    return 200, {"requests": dict(s.requests), "refusals": dict(s.refusals),
                                 "refusal_reasons": dict(s.refusal_reasons),
                                 "table_refusals": dict(s.table_refusals), "refusal_details": details}
        return 404, {"error": f"no admin path {path}"}


def _jsonable(value):
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def make_handler(state: RulesState):
    """The request handler class bound to ``state``."""
    rules, admin = Rules(state), Admin(state)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive with botocore's connection pool
        disable_nagle_algorithm = True

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes,
                   content_type: str | None = None) -> None:
            self.send_response(status)
            chunked = any(n.lower() == "transfer-encoding" and "chunked" in v.lower() for n, v in headers)
            for name, value in headers:
                if name.lower() in _DROP_RESPONSE:
                    continue
                if name.lower() == "content-type" and value == JSON_1_0 and content_type == "application/json":
                    value = content_type  # the layer's own answers, in the JSON type the client sent
                self.send_header(name, value)
            if chunked:  # the engine's framing, kept: clients may read it (dynalite's 413 test does)
                self.send_header("Transfer-Encoding", "chunked")
                body = (f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n") if body else b"0\r\n\r\n"
            else:
                self.send_header("Content-Length", str(len(body)))
                # Recomputed for every body: the proxy may have rewritten it, and botocore checks it.
                self.send_header("x-amz-crc32", str(zlib.crc32(body) & 0xFFFFFFFF))
            # Headers and body in one write: two small writes on a keep-alive connection meet Nagle's
            # algorithm and the client's delayed ACK, and each response then waits ~40 ms.
            self._headers_buffer.append(b"\r\n")  # type: ignore[attr-defined] # http.server's own buffer
            self._headers_buffer.append(body)  # type: ignore[attr-defined]
            self.flush_headers()

        def _admin(self, method: str) -> None:
            try:
                status, payload = admin.handle(method, self.path, self._body())
            except (ValueError, KeyError, TypeError) as error:
                status, payload = 400, {"error": str(error)}
            self._reply(status, [("Content-Type", "application/json")], json.dumps(payload).encode())

        def _pass_through(self) -> None:
            """Any request the layer has no rule for (other methods, other services), to the engine as sent."""
            body = self._body()
            out = {k: v for k, v in self.headers.items() if k.lower() not in _DROP_REQUEST}
            self._reply(*state.engine.send(self.command, self.path, body, out))

        def do_GET(self) -> None:  # noqa: N802 - http.server's API
            if self.path.startswith("/_rules/"):
                return self._admin("GET")
            return self._pass_through()

        do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _pass_through  # noqa: N815

        def do_POST(self) -> None:  # noqa: N802
            if self.path.startswith("/_rules/"):
                return self._admin("POST")
            target = self.headers.get("X-Amz-Target", "")  # email.message lookups ignore the case of the name
            if not target.startswith(TARGET_PREFIX):  # DynamoDB Streams and anything else: passed through untouched
                return self._pass_through()
            body = self._body()
            headers = {k: v for k, v in self.headers.items()}
            state.request_path.value = self.path
            status, out_headers, data = rules.handle(target[len(TARGET_PREFIX):], body, headers)
            self._reply(status, out_headers, data, _content_type(headers))

        def log_message(self, format, *args) -> None:  # noqa: A002 - http.server's signature
            pass

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main(argv: list[str] | None = None) -> None:
    """Serve the rules proxy until the process is stopped."""
    parser = argparse.ArgumentParser(description="DynamoDB rules proxy in front of a local engine")
    parser.add_argument("--engine", required=True, help="the engine's endpoint URL")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--start-time", default=None, help="ISO time: a frozen clock starting there")
    parser.add_argument("--settings", default="{}", help="RulesSettings fields as JSON")
    args = parser.parse_args(argv)
    settings = RulesSettings().updated(**json.loads(args.settings))
    start = parse_time(args.start_time) if args.start_time else None
    state = RulesState(args.engine, settings, start)
    server = _Server(("127.0.0.1", args.port), make_handler(state))
    exit_with_parent()
    server.serve_forever()


if __name__ == "__main__":
    main()
