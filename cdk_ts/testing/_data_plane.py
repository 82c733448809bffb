"""The rules proxy's data plane: partition and table throughput on reads and writes, batches' Unprocessed answers.

Which limits a read or write draws on, and the throttle it gets, are in ``_throughput.py``; this module finds
the table, the stored item and the response size, and keeps batches' Unprocessed semantics.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from cdk_ts.testing._rules import RuleError, json_answer, key_identity, query_partition_value, table_name_of
from cdk_ts.testing._throughput import (
    Capacity,
    IndexShape,
    TableShape,
    capacity_of,
    index_writes,
    read_charge,
    throttle_error,
    updated_item,
    write_charge,
)
from cdk_ts.testing._validity import EngineDecides, check_exact_key, check_key

if TYPE_CHECKING:
    from cdk_ts.testing._server import RulesState


class DataPlaneRules:
    """Throughput rules of the item operations (PutItem ... BatchGetItem): each ``op_<Operation>`` answers one call.

    :param state: the proxy's shared state (engine, clock, settings, throughput buckets).
    """

    def __init__(self, state: RulesState) -> None:
        self.s = state

    def _now(self) -> float:
        return self.s.clock.now().timestamp()

    def _capacity(self, shape: TableShape) -> Capacity:
        return capacity_of(shape, self.s.control.tables.get(shape.name))

    def _write_charges(self, shape: TableShape, capacity: Capacity, key_value: dict | None, old: dict | None,
                       new: dict | None, now: float) -> list:
        """The base table's limits with the item's write units, then each index write's (GSI pushback)."""
        throughput = self.s.throughput
        charges = [(throughput.table_limits(shape, capacity, key_value, True, now), write_charge(old, new))]
        for index in shape.indexes.values():
            for index_key, units in index_writes(index, old, new):
                charges.append((throughput.index_limits(index, capacity, shape.name, index_key, True), units))
        return charges

    def _stored(self, shape: TableShape, key: dict, headers: dict) -> dict | None:
        """The item the engine holds at ``key`` (the proxy's own read: not charged, not counted)."""
        if not self.s.settings.charge_old_item or not key:
            return None
        status, payload = self.s.call("GetItem", {"TableName": shape.name, "Key": key, "ConsistentRead": True},
                                      headers)
        return payload.get("Item") if status == 200 else None

    def _stored_many(self, keys: dict[str, list[dict]], headers: dict) -> dict[tuple[str, str], dict]:
        """Items the engine holds, by (table, key identity), for ``keys`` by table name (BatchGetItem, 100 a call)."""
        found: dict[tuple[str, str], dict] = {}
        if not self.s.settings.charge_old_item:
            return found
        pending = [(table, key) for table, table_keys in keys.items()
                   for key in {key_identity(k): k for k in table_keys}.values()]
        shapes = {table: self.s.shape(table, headers) for table in keys}
        for start in range(0, len(pending), 100):
            request: dict[str, dict] = {}
            for table, key in pending[start:start + 100]:
                request.setdefault(table, {"Keys": [], "ConsistentRead": True})["Keys"].append(key)
            status, payload = self.s.call("BatchGetItem", {"RequestItems": request}, headers)
            if status != 200:
                continue
            for table, items in (payload.get("Responses") or {}).items():
                for item in items:
                    shape = shapes[table]
                    if shape is not None:
                        found[(table, key_identity(shape.key_of(item)))] = item
        return found

    def _single_write(self, operation: str, request: dict, body: bytes, headers: dict):
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward(operation, body, headers)
        name = table_name_of(request.get("TableName", ""))
        shape = s.shape(name, headers)
        if shape is None:
            return s.forward(operation, body, headers)
        # A key the table's schema refuses is the engine's to answer (ValidationException), before any throttle.
        if operation == "PutItem":
            key = shape.key_of(request["Item"])
            check_key(request["Item"], shape.hash_key, shape.range_key, shape.key_types)
        else:
            key = request["Key"]
            check_exact_key(key, shape.hash_key, shape.range_key, shape.key_types)
        old = self._stored(shape, key, headers)
        if operation == "PutItem":
            new = request.get("Item") or {}
        elif operation == "UpdateItem":
            new = updated_item(old or key, request)
        else:
            new = None
        capacity = self._capacity(shape)
        now = self._now()
        reasons = s.throughput.try_write(self._write_charges(shape, capacity, key.get(shape.hash_key), old, new, now),
                                         now)
        if reasons:
            raise _keyed(throttle_error(capacity.billing_mode, reasons), key.get(shape.hash_key))
        return s.forward(operation, body, headers)

    def op_PutItem(self, request, body, headers):  # noqa: N802
        return self._single_write("PutItem", request, body, headers)

    def op_UpdateItem(self, request, body, headers):  # noqa: N802
        return self._single_write("UpdateItem", request, body, headers)

    def op_DeleteItem(self, request, body, headers):  # noqa: N802
        return self._single_write("DeleteItem", request, body, headers)

    def _read_limits(self, shape: TableShape, capacity: Capacity, index: IndexShape | None,
                     key_value: dict | None, now: float) -> list:
        if index is None:
            return self.s.throughput.table_limits(shape, capacity, key_value, False, now)
        if key_value is None:
            return []
        return self.s.throughput.index_limits(index, capacity, shape.name, key_value, False)

    def _single_read(self, operation: str, request: dict, body: bytes, headers: dict, key_value_of, items_of):
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward(operation, body, headers)
        name = table_name_of(request.get("TableName", ""))
        shape = s.shape(name, headers)
        index = shape.indexes.get(request.get("IndexName") or "") if shape is not None else None
        if shape is None or (request.get("IndexName") and index is None):
            return s.forward(operation, body, headers)  # no such table, or a local secondary index: not modelled
        if operation == "GetItem":
            check_exact_key(request["Key"], shape.hash_key, shape.range_key, shape.key_types)
        key_value = key_value_of(request, index.hash_key if index else shape.hash_key)
        capacity = self._capacity(shape)
        now = self._now()
        limits = self._read_limits(shape, capacity, index, key_value, now)
        # Reads are charged from the response size, so the harness debits after the response and refuses the
        # next read drawing on an overdrawn bucket.
        reasons = s.throughput.read_refusal(limits, now)
        if reasons:
            self._engine_judges_first(operation, body, headers)
            raise _keyed(throttle_error(capacity.billing_mode, reasons), key_value)
        status, out_headers, data = s.forward(operation, body, headers)
        if status == 200:
            units = read_charge(items_of(json.loads(data)), bool(request.get("ConsistentRead")))
            s.throughput.debit(limits, units, self._now())
        return status, out_headers, data

    def _engine_judges_first(self, operation: str, body: bytes, headers: dict) -> None:
        """Before a read is throttled, the engine judges its validity: a read changes nothing, so the layer can ask.

        DynamoDB refuses an invalid request (an expression that does not parse, an unknown index, ...) before it
        looks at throughput; the layer does not parse everything the engine does. The engine's refusal is the answer
        (:class:`EngineDecides`); when it accepts, the throttle is.
        """
        status, _headers, _data = self.s.forward(operation, body, headers)
        if status != 200:
            raise EngineDecides

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
        """A batch request's entries, per table, split into those its limits take and those they throttle.

        ``entries(spec)`` lists a table's entries (writes, or keys); ``admit(shape, capacity, entry)`` debits the
        entry's limits and returns the throttling reasons ([] when it may go). A table the engine does not describe
        keeps all its entries (the engine answers for it). Returns the kept and throttled entries by table, each
        table's shape, and the first throttle as ``(billing mode, reasons)``.
        """
        kept: dict[str, list] = {}
        unprocessed: dict[str, list] = {}
        shapes: dict[str, TableShape | None] = {}
        first = None
        for table, spec in (request.get("RequestItems") or {}).items():
            shape = shapes[table] = self.s.shape(table_name_of(table), headers)
            capacity = None if shape is None else self._capacity(shape)
            for entry in entries(spec):
                reasons = [] if shape is None else admit(shape, capacity, entry)
                if not reasons:
                    kept.setdefault(table, []).append(entry)
                else:
                    unprocessed.setdefault(table, []).append(entry)
                    first = first or (capacity.billing_mode if capacity else "PROVISIONED", reasons)
        return kept, unprocessed, shapes, first

    def op_BatchWriteItem(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        # BatchWriteItem: "If DynamoDB returns any unprocessed items, you should retry the batch operation on
        # those items" and "If none of the items can be processed due to insufficient provisioned throughput on
        # all of the tables in the request, then BatchWriteItem returns a ProvisionedThroughputExceededException."
        # https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
        # (The exception is the one of the table's billing mode: throughput.throttle_error.)
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward("BatchWriteItem", body, headers)
        requested: dict[str, list[dict]] = {}
        for table, writes in (request.get("RequestItems") or {}).items():
            shape = s.shape(table_name_of(table), headers)
            if shape is not None:
                requested[shape.name] = _checked_keys(shape, writes)
        stored = self._stored_many(requested, headers)

        def admit(shape: TableShape, capacity: Capacity, write: dict) -> list[dict]:
            item = _written(write)
            key = shape.key_of(item)
            old = stored.get((shape.name, key_identity(key)))
            new = item if "PutRequest" in write else None
            now = self._now()
            return s.throughput.try_write(
                self._write_charges(shape, capacity, key.get(shape.hash_key), old, new, now), now)

        kept, unprocessed, _shapes, first = self._split_batch(request, headers, lambda writes: writes, admit)
        if not unprocessed:
            return s.forward("BatchWriteItem", body, headers)
        if not kept:
            raise throttle_error(*first)
        s.count_refusal("BatchWriteItem", "UnprocessedItems", first[1])
        trimmed = json.dumps({**request, "RequestItems": kept}).encode()
        status, out_headers, data = s.forward("BatchWriteItem", trimmed, headers)
        if status != 200:
            return status, out_headers, data
        payload = json.loads(data)
        merged = payload.get("UnprocessedItems") or {}
        for table, writes in unprocessed.items():
            merged.setdefault(table, []).extend(writes)
        payload["UnprocessedItems"] = merged
        return json_answer(200, payload)

    def op_BatchGetItem(self, request: dict, body: bytes, headers: dict):  # noqa: N802
        # Throttled keys come back in UnprocessedKeys; all of them throttled: the throttle exception
        # (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html).
        s = self.s
        if not s.settings.throttle_partitions:
            return s.forward("BatchGetItem", body, headers)

        def admit(shape: TableShape, capacity: Capacity, key: dict) -> list[dict]:
            now = self._now()
            return s.throughput.read_refusal(
                s.throughput.table_limits(shape, capacity, key.get(shape.hash_key), False, now), now)

        for table, spec in (request.get("RequestItems") or {}).items():
            shape = s.shape(table_name_of(table), headers)
            if shape is None:
                continue
            for key in spec["Keys"]:
                check_exact_key(key, shape.hash_key, shape.range_key, shape.key_types)

        kept_keys, unprocessed_keys, shapes, first = self._split_batch(
            request, headers, lambda spec: spec.get("Keys") or [], admit)
        specs = request.get("RequestItems") or {}
        kept = {table: {**specs[table], "Keys": keys} for table, keys in kept_keys.items()}
        unprocessed = {table: {**specs[table], "Keys": keys} for table, keys in unprocessed_keys.items()}
        if not kept:
            if first is None:  # nothing asked for: the engine's answer
                return s.forward("BatchGetItem", body, headers)
            self._engine_judges_first("BatchGetItem", body, headers)
            raise throttle_error(*first)
        trimmed = json.dumps({**request, "RequestItems": kept}).encode()
        status, out_headers, data = s.forward("BatchGetItem", trimmed, headers)
        if status != 200:
            return status, out_headers, data
        payload = json.loads(data)
        for table, items in (payload.get("Responses") or {}).items():
            shape = shapes.get(table)
            if shape is None:
                continue
            capacity = self._capacity(shape)
            consistent = bool(kept[table].get("ConsistentRead"))
            for item in items:
                # "DynamoDB processes each item in the batch as an individual GetItem request"
                # (read-write-operations.html): each item rounds up to 4 KB on its own.
                now = self._now()
                limits = s.throughput.table_limits(shape, capacity, item.get(shape.hash_key), False, now)
                s.throughput.debit(limits, read_charge([item], consistent), now)
        if unprocessed:
            s.count_refusal("BatchGetItem", "UnprocessedKeys", first[1])
            merged = payload.get("UnprocessedKeys") or {}
            for table, spec in unprocessed.items():
                merged.setdefault(table, {**spec, "Keys": []})["Keys"].extend(spec["Keys"])
            payload["UnprocessedKeys"] = merged
            return json_answer(200, payload)
        return status, out_headers, data


def _keyed(error: RuleError, key_value: dict | None) -> RuleError:
    """``error`` marked with the partition key value it refused, for the per-key counts."""
    error.key = None if key_value is None else key_identity(key_value)  # type: ignore[attr-defined]
    return error


def _checked_keys(shape: TableShape, writes: list[dict]) -> list[dict]:
    """The primary keys a BatchWriteItem writes in ``shape``'s table; :class:`EngineDecides` for a key the schema
    refuses, or two writes of one item ("Provided list of item keys contains duplicates", API_BatchWriteItem)."""
    keys = []
    for write in writes:
        if "PutRequest" in write:
            check_key(write["PutRequest"]["Item"], shape.hash_key, shape.range_key, shape.key_types)
        else:
            check_exact_key(write["DeleteRequest"]["Key"], shape.hash_key, shape.range_key, shape.key_types)
        keys.append(shape.key_of(_written(write)))
    if len({key_identity(key) for key in keys}) != len(keys):
        raise EngineDecides
    return keys


def _written(write: dict) -> dict:
    """The item of a BatchWriteItem PutRequest, or the key of a DeleteRequest."""
    return (write.get("PutRequest") or {}).get("Item") or (write.get("DeleteRequest") or {}).get("Key") or {}
