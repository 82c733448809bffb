"""The rules proxy's HTTP side: a threaded server on 127.0.0.1 in front of a local DynamoDB engine.

Run as ``python -m tests.support.dynamodb_rules.server --engine URL --port PORT [--start-time ISO]
[--settings JSON]``; ``start_rules_proxy`` does that. botocore POSTs every DynamoDB call to ``/``; the
proxy's own admin requests use paths under ``/_rules/``. Bodies the proxy writes or rewrites get a fresh
``x-amz-crc32`` (botocore checks it for DynamoDB and refuses a response whose checksum does not match).
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
import zlib
from collections import Counter
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from tests.support.dynamodb_rules.rules import (
    HARNESS_OWNED_FIELDS,
    ControlPlane,
    RuleError,
    RulesSettings,
    TokenBuckets,
    item_size,
    key_identity,
    parse_time,
    query_partition_value,
    read_units,
    table_name_of,
    write_units,
)
from tests.support.dynamodb_rules.settling import Settling

TARGET_PREFIX = "DynamoDB_20120810."
# Request headers not passed on to the engine (hop-by-hop, or recomputed).
_DROP_REQUEST = {"host", "content-length", "connection", "keep-alive", "accept-encoding", "transfer-encoding"}
_DROP_RESPONSE = {"content-length", "connection", "keep-alive", "transfer-encoding", "x-amz-crc32", "date", "server"}

# Throttle message DynamoDB sends for a hot key (key-range throughput exceeded); the reasons are documented at
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html
HOT_KEY_MESSAGE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your "
    "table or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)


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
        """Move a frozen clock forward (a real clock cannot be moved)."""
        if self._frozen is None:
            raise ValueError("the proxy runs on the real clock; start it with start_time to move time")
        self._frozen += timedelta(seconds=seconds)


class Engine:
    """Keep-alive HTTP connections to the engine, one per server thread."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
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
    """Everything the proxy knows: settings, clock, control-plane state, partition buckets, request counts."""

    def __init__(self, engine_url: str, settings: RulesSettings, start: datetime | None) -> None:
        self.settings = settings
        self.clock = Clock(start)
        self.control = ControlPlane(settings)
        self.settling = Settling(lambda: self.settings)  # backups window, tag lag, TTL (issue 28)
        self.buckets = TokenBuckets()
        self.engine = Engine(engine_url)
        self.lock = threading.RLock()  # control plane and admin: one at a time
        self.bucket_lock = threading.Lock()
        self.table_info: dict[str, dict] = {}  # name -> {"hash_key", "arn"} learnt from the engine
        self.pending_deletes: dict[str, tuple[bytes, dict]] = {}  # name -> the DeleteTable to replay
        self.insights: dict[str, dict] = {}  # name -> Contributor Insights state (neither engine has the API)
        self.requests: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()  # "Operation:Code"
        self.stats_lock = threading.Lock()

    def count(self, counter: Counter, key: str) -> None:
        """Count one request or refusal (thread-safe: the benchmarks read these counts)."""
        with self.stats_lock:
            counter[key] += 1

    # -- engine helpers ---------------------------------------------------------------------------------------
    def forward(self, operation: str, body: bytes, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        """Send ``operation`` with ``body`` to the engine, with the caller's auth headers."""
        out = {k: v for k, v in headers.items() if k.lower() not in _DROP_REQUEST}
        out["X-Amz-Target"] = TARGET_PREFIX + operation
        out["Content-Type"] = "application/x-amz-json-1.0"
        return self.engine.send("POST", "/", body, out)

    def call(self, operation: str, request: dict, headers: dict) -> tuple[int, dict]:
        """``forward`` with JSON in and out."""
        status, _headers, data = self.forward(operation, json.dumps(request).encode(), headers)
        return status, (json.loads(data) if data else {})

    def describe(self, name: str, headers: dict) -> dict | None:
        """The engine's description of ``name``, or None when the engine does not have it."""
        status, body = self.call("DescribeTable", {"TableName": name}, headers)
        return body.get("Table") if status == 200 else None

    def info(self, name: str, headers: dict) -> dict | None:
        """Partition key attribute and ARN of ``name`` (cached; None if the engine has no such table)."""
        info = self.table_info.get(name)
        if info is None:
            description = self.describe(name, headers)
            if description is None:
                return None
            hash_key = next(k["AttributeName"] for k in description["KeySchema"] if k["KeyType"] == "HASH")
            info = self.table_info[name] = {"hash_key": hash_key, "arn": description["TableArn"]}
        return info

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


def _tables_of(request: dict) -> list[str]:
    """The table names a data-plane request touches."""
    if "TableName" in request:
        return [table_name_of(request["TableName"])]
    if "RequestItems" in request:
        return [table_name_of(t) for t in request["RequestItems"]]
    names = []
    for entry in request.get("TransactItems") or []:
        for action in entry.values():
            if isinstance(action, dict) and "TableName" in action:
                names.append(table_name_of(action["TableName"]))
    return names


def _json(status: int, payload: dict) -> tuple[int, list[tuple[str, str]], bytes]:
    return status, [("Content-Type", "application/x-amz-json-1.0")], json.dumps(payload, separators=(",", ":")).encode()


def _error(error: RuleError) -> tuple[int, list[tuple[str, str]], bytes]:
    return 400, [("Content-Type", "application/x-amz-json-1.0")], error.body()


def _throttle(table: str, arn: str | None, write: bool) -> RuleError:
    # DynamoDB's JSON 1.0 error with ThrottlingReasons, as in API_ThrottlingReason and the developer guide's
    # "Diagnosing throttling" (throttling-diagnosing-workflow.html): reason = Table + Write/Read + KeyRange...
    reason = "TableWriteKeyRangeThroughputExceeded" if write else "TableReadKeyRangeThroughputExceeded"
    resource = arn or f"arn:aws:dynamodb:us-east-1:123456789012:table/{table}"
    return RuleError(
        "ProvisionedThroughputExceededException",
        HOT_KEY_MESSAGE,
        ThrottlingReasons=[{"reason": reason, "resource": resource}],
    )


class Rules:
    """Request handling: which rule applies to which operation."""

    def __init__(self, state: RulesState) -> None:
        self.s = state

    def handle(self, operation: str, body: bytes, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        """Answer one DynamoDB API call: refuse it, forward it, or forward it and rewrite the answer."""
        s = self.s
        s.count(s.requests, operation)
        s.finish_deletes(headers)
        handler = getattr(self, "op_" + operation, None)
        try:
            request = json.loads(body or b"{}") if handler is not None or operation in DATA_PLANE else {}
            if operation in DATA_PLANE and s.control.tables:
                s.control.check_data_plane(_tables_of(request), s.clock.now())
            if handler is None:
                return s.forward(operation, body, headers)
            return handler(request, body, headers)
        except RuleError as error:
            s.count(s.refusals, f"{operation}:{error.code}")
            return _error(error)
        except Exception as error:  # noqa: BLE001 - answer as DynamoDB does for its own faults, and say why
            s.count(s.refusals, f"{operation}:InternalServerError")
            return 500, [("Content-Type", "application/x-amz-json-1.0")], RuleError(
                "InternalServerError", f"rules proxy failed: {type(error).__name__}: {error}").body()

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
            return _json(200, payload)

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
            return _json(200, payload)

        return self._on_existing_table("UpdateTable", request, body, headers, update)

    def op_DeleteTable(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        s = self.s

        def delete(name: str, description: dict, now: datetime):
            if s.control.already_deleting(name, now):  # no error, the DELETING description (API_DeleteTable)
                return _json(200, {"TableDescription": s.control.overlay(description, now)})
            s.control.check_delete(name, description, now)
            s.control.record_delete(name, now)
            s.pending_deletes[name] = (body, dict(headers))
            return _json(200, {"TableDescription": s.control.overlay(description, now)})

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
        return _json(200, {"Tags": shown})

    def _time_to_live(self, request: dict, headers: dict, act):
        """``act(name, now)`` for a table the engine has, its TTL first learnt from the engine if it keeps one."""
        s = self.s
        name = table_name_of(request.get("TableName", ""))
        with s.lock:
            if s.describe(name, headers) is None:  # the engine may not know the operation: answer as DynamoDB
                raise RuleError("ResourceNotFoundException", "Requested resource not found")
            if name not in s.settling.ttl.tables:
                status, body = s.call("DescribeTimeToLive", {"TableName": name}, headers)  # dynalite: no TTL
                s.settling.ttl.state_for(name, body.get("TimeToLiveDescription") if status == 200 else None)
            return act(name, s.clock.now())

    def op_UpdateTimeToLive(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        specification = request.get("TimeToLiveSpecification") or {}
        return self._time_to_live(request, headers, lambda name, now: _json(
            200, {"TimeToLiveSpecification": self.s.settling.ttl.update(name, specification, now)}))

    def op_DescribeTimeToLive(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        return self._time_to_live(request, headers, lambda name, now: _json(
            200, {"TimeToLiveDescription": self.s.settling.ttl.describe(name, now)}))

    def op_DescribeTable(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        s = self.s
        status, _h, data = s.forward("DescribeTable", body, headers)
        if status != 200:
            return status, _h, data
        payload = json.loads(data)
        with s.lock:
            s.control.overlay(payload["Table"], s.clock.now())
        return _json(200, payload)

    # Contributor Insights: neither engine has the API, so the harness keeps each table's state. ENABLE sets the
    # mode, ACCESSED_AND_THROTTLED_KEYS when none is sent, and DISABLE keeps it (API_UpdateContributorInsights; a
    # re-ENABLE without a mode reverting to the default is reported in aws-controllers-k8s' DDB-TABLE-092
    # finding). Rule names follow the developer guide's
    # DynamoDBContributorInsights-{PKC|PKT}-{table}-{creation ms}; only the partition-key rules are listed.
    # Simplification: the status is ENABLED at once (DynamoDB passes through ENABLING for about a second).
    def _insights(self, request: dict, headers: dict, act):
        s = self.s
        name = table_name_of(request.get("TableName", ""))
        with s.lock:
            if s.describe(name, headers) is None:
                raise RuleError("ResourceNotFoundException", "Requested resource not found")
            return act(name, s.insights.setdefault(name, {"status": "DISABLED"}), s.clock.now())

    def op_UpdateContributorInsights(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        action = request.get("ContributorInsightsAction")

        def update(name: str, state: dict, now: datetime):
            if action == "ENABLE":
                mode = request.get("ContributorInsightsMode") or "ACCESSED_AND_THROTTLED_KEYS"
                state.update(status="ENABLED", mode=mode, created=int(now.timestamp() * 1000))
            else:
                state["status"] = "DISABLED"
            return _json(200, {"TableName": name, "ContributorInsightsMode": state.get("mode"),
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
            return _json(200, answer)

        return self._insights(request, headers, describe)

    # -- data plane ------------------------------------------------------------------------------------------
    def _rates(self) -> tuple[float, float]:
        return self.s.settings.write_units_per_second, self.s.settings.read_units_per_second

    def _now(self) -> float:
        return self.s.clock.now().timestamp()

    def _write_one(self, name: str, key_value: dict | None, units: int) -> bool:
        if key_value is None:
            return True
        with self.s.bucket_lock:
            return self.s.buckets.try_take(("w", name, key_identity(key_value)), units, self._rates()[0], self._now())

    def _read_allowed(self, name: str, key_value: dict | None) -> bool:
        if key_value is None:
            return True
        with self.s.bucket_lock:
            return self.s.buckets.level(("r", name, key_identity(key_value)), self._rates()[1], self._now()) >= 0

    def _read_debit(self, name: str, key_value: dict | None, units: float) -> None:
        if key_value is None:
            return
        with self.s.bucket_lock:
            self.s.buckets.take(("r", name, key_identity(key_value)), units, self._rates()[1], self._now())

    def _single_write(self, operation: str, request: dict, body: bytes, headers: dict, item_key: str):
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward(operation, body, headers)
        name = table_name_of(request.get("TableName", ""))
        info = s.info(name, headers)
        if info is None:
            return s.forward(operation, body, headers)
        item = request.get(item_key) or {}
        size = item_size(item)
        if operation == "UpdateItem":
            # The item after the update is not known before the engine applies it: the key plus the values the
            # expression writes approximates its size (DynamoDB charges the larger of before and after).
            size += item_size({k: v for k, v in (request.get("ExpressionAttributeValues") or {}).items()})
        # Each item: ceil(size / 1 KB) write units (CapacityUnitCalculations.html, read-write-operations.html).
        if not self._write_one(name, item.get(info["hash_key"]), write_units(size)):
            raise _throttle(name, info["arn"], write=True)
        return s.forward(operation, body, headers)

    def op_PutItem(self, request, body, headers):  # noqa: N802
        return self._single_write("PutItem", request, body, headers, "Item")

    def op_UpdateItem(self, request, body, headers):  # noqa: N802
        return self._single_write("UpdateItem", request, body, headers, "Key")

    def op_DeleteItem(self, request, body, headers):  # noqa: N802
        return self._single_write("DeleteItem", request, body, headers, "Key")

    def _single_read(self, operation: str, request: dict, body: bytes, headers: dict, key_value_of, items_of):
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward(operation, body, headers)
        name = table_name_of(request.get("TableName", ""))
        info = s.info(name, headers)
        if info is None or request.get("IndexName"):
            return s.forward(operation, body, headers)  # indexes have partitions of their own: not modelled
        key_value = key_value_of(request, info["hash_key"])
        # Reads are charged from the response size, so the harness debits after the response and refuses the
        # next read of that partition while its bucket is overdrawn.
        if not self._read_allowed(name, key_value):
            raise _throttle(name, info["arn"], write=False)
        status, out_headers, data = s.forward(operation, body, headers)
        if status == 200 and key_value is not None:
            size = sum(item_size(i) for i in items_of(json.loads(data)))
            self._read_debit(name, key_value, read_units(size, bool(request.get("ConsistentRead"))))
        return status, out_headers, data

    def op_GetItem(self, request, body, headers):  # noqa: N802
        return self._single_read(
            "GetItem", request, body, headers,
            lambda r, h: (r.get("Key") or {}).get(h),
            lambda p: [p["Item"]] if "Item" in p else [],
        )

    def op_Query(self, request, body, headers):  # noqa: N802
        return self._single_read(
            "Query", request, body, headers, query_partition_value, lambda p: p.get("Items") or []
        )

    def _split_batch(self, request: dict, headers: dict, entries, admit):
        """A batch request's entries, per table, split into those its partitions take and those they throttle.

        ``entries(spec)`` lists a table's entries (writes, or keys); ``admit(name, info, entry)`` debits the entry's
        partition and says whether it may go. A table the engine does not describe keeps all its entries (the
        engine answers for it). Returns the kept and throttled entries by table, each table's info, and the first
        throttled ``(name, arn)``.
        """
        kept: dict[str, list] = {}
        unprocessed: dict[str, list] = {}
        infos: dict[str, dict | None] = {}
        first_throttled = None
        for table, spec in (request.get("RequestItems") or {}).items():
            name = table_name_of(table)
            info = infos[table] = self.s.info(name, headers)
            for entry in entries(spec):
                if info is None or admit(name, info, entry):
                    kept.setdefault(table, []).append(entry)
                else:
                    unprocessed.setdefault(table, []).append(entry)
                    first_throttled = first_throttled or (name, info["arn"])
        return kept, unprocessed, infos, first_throttled

    def op_BatchWriteItem(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        # BatchWriteItem: "If DynamoDB returns any unprocessed items, you should retry the batch operation on
        # those items" and "If none of the items can be processed due to insufficient provisioned throughput on
        # all of the tables in the request, then BatchWriteItem returns a ProvisionedThroughputExceededException."
        # https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward("BatchWriteItem", body, headers)

        def admit(name: str, info: dict, write: dict) -> bool:
            put, delete = write.get("PutRequest") or {}, write.get("DeleteRequest") or {}
            item = put.get("Item") or delete.get("Key") or {}
            return self._write_one(name, item.get(info["hash_key"]), write_units(item_size(item)))

        kept, unprocessed, _infos, first_throttled = self._split_batch(
            request, headers, lambda writes: writes, admit
        )
        if not unprocessed:
            return s.forward("BatchWriteItem", body, headers)
        if not kept:
            raise _throttle(first_throttled[0], first_throttled[1], write=True)
        s.count(s.refusals, "BatchWriteItem:UnprocessedItems")
        trimmed = json.dumps({**request, "RequestItems": kept}).encode()
        status, out_headers, data = s.forward("BatchWriteItem", trimmed, headers)
        if status != 200:
            return status, out_headers, data
        payload = json.loads(data)
        merged = payload.get("UnprocessedItems") or {}
        for table, writes in unprocessed.items():
            merged.setdefault(table, []).extend(writes)
        payload["UnprocessedItems"] = merged
        return _json(200, payload)

    def op_BatchGetItem(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        # Throttled keys come back in UnprocessedKeys; all of them throttled: ProvisionedThroughputExceededException
        # (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html).
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward("BatchGetItem", body, headers)
        kept_keys, unprocessed_keys, infos, first_throttled = self._split_batch(
            request, headers, lambda spec: spec.get("Keys") or [],
            lambda name, info, key: self._read_allowed(name, key.get(info["hash_key"])),
        )
        specs = request.get("RequestItems") or {}
        kept = {table: {**specs[table], "Keys": keys} for table, keys in kept_keys.items()}
        unprocessed = {table: {**specs[table], "Keys": keys} for table, keys in unprocessed_keys.items()}
        if not kept:
            raise _throttle(first_throttled[0], first_throttled[1], write=False)
        trimmed = json.dumps({**request, "RequestItems": kept}).encode()
        status, out_headers, data = s.forward("BatchGetItem", trimmed, headers)
        if status != 200:
            return status, out_headers, data
        payload = json.loads(data)
        for table, items in (payload.get("Responses") or {}).items():
            info = infos.get(table)
            if info is None:
                continue
            consistent = bool(kept[table].get("ConsistentRead"))
            for item in items:
                # "DynamoDB processes each item in the batch as an individual GetItem request"
                # (read-write-operations.html): each item rounds up to 4 KB on its own.
                units = read_units(item_size(item), consistent)
                self._read_debit(table_name_of(table), item.get(info["hash_key"]), units)
        if unprocessed:
            s.count(s.refusals, "BatchGetItem:UnprocessedKeys")
            merged = payload.get("UnprocessedKeys") or {}
            for table, spec in unprocessed.items():
                merged.setdefault(table, {**spec, "Keys": []})["Keys"].extend(spec["Keys"])
            payload["UnprocessedKeys"] = merged
            return _json(200, payload)
        return status, out_headers, data


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
                    if "set" in data:
                        s.clock.set(parse_time(data["set"]))
                    if "advance" in data:
                        s.clock.advance(float(data["advance"]))
                return 200, {"now": s.clock.now().isoformat(), "frozen": s.clock.frozen}
            if parts == ["settings"]:
                if method == "POST":
                    s.settings = s.settings.updated(**data)
                    s.control.settings = s.settings
                return 200, {"settings": vars(s.settings)}
            if len(parts) == 2 and parts[0] == "tables":
                state = s.control.tables.get(parts[1])
                return 200, {"state": None if state is None else _jsonable(state.as_dict(s.clock.now()))}
            if parts == ["reset"]:
                s.control.tables.clear()
                s.settling = Settling(lambda: s.settings)
                s.buckets.clear()
                s.table_info.clear()
                s.pending_deletes.clear()
                s.insights.clear()
                return 200, {"ok": True}
            if parts == ["stats"]:
                if method == "POST":
                    s.requests.clear()
                    s.refusals.clear()
                return 200, {"requests": dict(s.requests), "refusals": dict(s.refusals)}
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

        def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() not in _DROP_RESPONSE:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            # Recomputed for every body: the proxy may have rewritten it, and botocore checks it.
            self.send_header("x-amz-crc32", str(zlib.crc32(body) & 0xFFFFFFFF))
            # Headers and body in one write: two small writes on a keep-alive connection meet Nagle's
            # algorithm and the client's delayed ACK, and each response then waits ~40 ms.
            self._headers_buffer.append(b"\r\n")
            self._headers_buffer.append(body)
            self.flush_headers()

        def _admin(self, method: str) -> None:
            try:
                status, payload = admin.handle(method, self.path, self._body())
            except (ValueError, KeyError, TypeError) as error:
                status, payload = 400, {"error": str(error)}
            self._reply(status, [("Content-Type", "application/json")], json.dumps(payload).encode())

        def do_GET(self) -> None:  # noqa: N802 - http.server's API
            if self.path.startswith("/_rules/"):
                return self._admin("GET")
            status, headers, data = state.engine.send("GET", self.path, b"", {})
            self._reply(status, headers, data)

        def do_POST(self) -> None:  # noqa: N802
            if self.path.startswith("/_rules/"):
                return self._admin("POST")
            body = self._body()
            headers = {k: v for k, v in self.headers.items()}
            target = self.headers.get("X-Amz-Target", "")
            if target.startswith(TARGET_PREFIX):
                status, out_headers, data = rules.handle(target[len(TARGET_PREFIX):], body, headers)
            else:  # DynamoDB Streams and anything else: passed through untouched
                out = {k: v for k, v in headers.items() if k.lower() not in _DROP_REQUEST}
                status, out_headers, data = state.engine.send("POST", self.path, body, out)
            self._reply(status, out_headers, data)

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
    server.serve_forever()


if __name__ == "__main__":
    main()
