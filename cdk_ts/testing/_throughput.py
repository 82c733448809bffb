"""Table, partition and index throughput as DynamoDB documents it: plain Python, a clock passed in.

The HTTP side (``server.py``) learns a table's shape from DescribeTable (``TableShape``), its capacity from the
control plane's tracked state or the description (``capacity_of``), and asks ``Throughput`` which limits a read
or write meets. A refusal is a ``RuleError`` in the shape of the table's billing mode (``throttle_error``).

Every limit names its source next to the code that applies it; numbers no source gives are ``RulesSettings``
fields whose comments say "guess".
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import deque
from dataclasses import dataclass, field

from cdk_ts.testing._rules import (
    ON_DEMAND_WARM_READ,
    ON_DEMAND_WARM_WRITE,
    RuleError,
    RulesSettings,
    TokenBuckets,
    item_size,
    key_identity,
    read_units,
    write_units,
)

# DynamoDB's partition limits, used to derive how many partitions a table has (not to enforce: the enforced
# limits are the settings, which tests scale down). "each individual partition is limited to 1,000 write units
# per second and 3,000 read units per second" (warm-throughput-scenarios.html, bp-partition-key-design.html).
PARTITION_WRITE_UNITS = 1000
PARTITION_READ_UNITS = 3000

# Throttle messages. botocore's service model quotes them in TransactionCanceledException's documentation
# (service-2.json, "Provisioned Throughput Exceeded" and "Throttling Error" sections); real traces quote them
# without the closing period the documentation adds: on-demand table praetorian-inc/chariot-ui#684, on-demand
# GSI BrighterCommand/Brighter#2810, provisioned table haskell-mafia/boris#75, provisioned GSI grailbio/reflow#101.
ON_DEMAND_TABLE_MESSAGE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your "
    "table or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
ON_DEMAND_INDEX_MESSAGE = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically "
    "scaling your index so please try again shortly."
)
# No source says which message a provisioned table's key-range (hot partition) throttle carries: the harness
# sends the documented provisioned one for every provisioned table throttle.
PROVISIONED_TABLE_MESSAGE = (
    "The level of configured provisioned throughput for the table was exceeded. Consider increasing your "
    "provisioning level with the UpdateTable API"
)
PROVISIONED_INDEX_MESSAGE = (
    "The level of configured provisioned throughput for one or more global secondary indexes of the table was "
    "exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes "
    "with the UpdateTable API"
)


def throttle_error(billing_mode: str, reasons: list[dict]) -> RuleError:
    """The throttle DynamoDB sends for ``reasons`` on a table in ``billing_mode``.

    On-demand: ``ThrottlingException`` with ``throttlingReasons``; provisioned: ``ProvisionedThroughputExceeded
    Exception`` with ``ThrottlingReasons`` (botocore's service model, shapes ``ThrottlingException`` and
    ``ProvisionedThroughputExceededException``). Each reason is ``{"reason", "resource"}`` (API_ThrottlingReason).
    """
    on_index = all(r["reason"].startswith("Index") for r in reasons)
    if billing_mode == "PAY_PER_REQUEST":
        message = ON_DEMAND_INDEX_MESSAGE if on_index else ON_DEMAND_TABLE_MESSAGE
        return RuleError("ThrottlingException", message, throttlingReasons=reasons)
    message = PROVISIONED_INDEX_MESSAGE if on_index else PROVISIONED_TABLE_MESSAGE
    return RuleError("ProvisionedThroughputExceededException", message, ThrottlingReasons=reasons)


def reasons_of(error: RuleError) -> list[dict]:
    """The throttling reasons a refusal carries (either member name), or []."""
    return error.extra.get("throttlingReasons") or error.extra.get("ThrottlingReasons") or []


# -- what a table looks like ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexShape:
    """One global secondary index: its keys, projection and provisioned throughput (0 when on-demand)."""

    name: str
    arn: str
    hash_key: str
    range_key: str | None
    projection: str  # ALL, KEYS_ONLY or INCLUDE
    table_keys: tuple[str, ...]  # every index holds the table's key attributes too
    non_key_attributes: tuple[str, ...]  # INCLUDE's attributes
    read_capacity: int
    write_capacity: int

    def key_value(self, item: dict | None) -> dict | None:
        """The index partition key value of ``item``, or None when the item is not in this (sparse) index.

        "If an item does not contain the index key attributes, it is not written to the index" (sparse indexes,
        bp-indexes-general-sparse-indexes.html): both the index's hash and range key must be present.
        """
        if not item or self.hash_key not in item or (self.range_key and self.range_key not in item):
            return None
        return item[self.hash_key]


@dataclass(frozen=True)
class TableShape:
    """A table's keys, ARN, indexes and the capacity its description reports."""

    name: str
    arn: str
    hash_key: str
    range_key: str | None
    indexes: dict[str, IndexShape]
    billing_mode: str
    read_capacity: int
    write_capacity: int
    warm_read: int
    warm_write: int
    key_types: dict[str, str] = field(default_factory=dict)  # S, N or B by attribute (AttributeDefinitions)

    @classmethod
    def from_description(cls, description: dict) -> TableShape:
        """The shape of a DescribeTable ``Table``."""
        hash_key, range_key = _keys(description["KeySchema"])
        table_keys = [k for k in (hash_key, range_key) if k]
        indexes = {}
        for index in description.get("GlobalSecondaryIndexes") or []:
            index_hash, index_range = _keys(index["KeySchema"])
            projection = index.get("Projection") or {}
            throughput = index.get("ProvisionedThroughput") or {}
            indexes[index["IndexName"]] = IndexShape(
                name=index["IndexName"],
                # "arn:...:table/T/index/I" (API_GlobalSecondaryIndexDescription, IndexArn)
                arn=index.get("IndexArn") or f"{description['TableArn']}/index/{index['IndexName']}",
                hash_key=index_hash,
                range_key=index_range,
                projection=projection.get("ProjectionType", "ALL"),
                table_keys=tuple(table_keys),
                non_key_attributes=tuple(projection.get("NonKeyAttributes") or []),
                read_capacity=int(throughput.get("ReadCapacityUnits") or 0),
                write_capacity=int(throughput.get("WriteCapacityUnits") or 0),
            )
        throughput = description.get("ProvisionedThroughput") or {}
        warm = description.get("WarmThroughput") or {}
        billing = (description.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
        return cls(
            name=description["TableName"],
            arn=description["TableArn"],
            hash_key=hash_key,
            range_key=range_key,
            indexes=indexes,
            billing_mode=billing,
            read_capacity=int(throughput.get("ReadCapacityUnits") or 0),
            write_capacity=int(throughput.get("WriteCapacityUnits") or 0),
            warm_read=int(warm.get("ReadUnitsPerSecond") or 0),
            warm_write=int(warm.get("WriteUnitsPerSecond") or 0),
            key_types={d["AttributeName"]: d["AttributeType"] for d in description.get("AttributeDefinitions") or []},
        )

    def key_of(self, item: dict) -> dict:
        """The primary key of ``item``."""
        return {k: item[k] for k in (self.hash_key, self.range_key) if k and k in item}


def _keys(schema: list[dict]) -> tuple[str, str | None]:
    hash_key = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
    range_key = next((k["AttributeName"] for k in schema if k["KeyType"] == "RANGE"), None)
    return hash_key, range_key


@dataclass(frozen=True)
class Capacity:
    """A table's billing mode and the throughput it is entitled to right now."""

    billing_mode: str
    read_capacity: int
    write_capacity: int
    warm_read: int
    warm_write: int
    max_read: int | None  # OnDemandThroughput.MaxReadRequestUnits; None (or -1 on the API): no cap
    max_write: int | None

    @property
    def on_demand(self) -> bool:
        """Whether the table is PAY_PER_REQUEST."""
        return self.billing_mode == "PAY_PER_REQUEST"


def capacity_of(shape: TableShape, state) -> Capacity:
    """The capacity of ``shape``'s table: the control plane's tracked ``TableState`` when it has the table (it sees
    UpdateTable and keeps OnDemandThroughput, which moto does not report), else the engine's description."""
    if state is not None:
        limits = getattr(state, "on_demand_throughput", None) or {}
        return Capacity(
            billing_mode=state.billing_mode,
            read_capacity=state.read_capacity,
            write_capacity=state.write_capacity,
            warm_read=state.warm_read,
            warm_write=state.warm_write,
            max_read=_cap(limits.get("MaxReadRequestUnits")),
            max_write=_cap(limits.get("MaxWriteRequestUnits")),
        )
    on_demand = shape.billing_mode == "PAY_PER_REQUEST"
    return Capacity(
        billing_mode=shape.billing_mode,
        read_capacity=shape.read_capacity,
        write_capacity=shape.write_capacity,
        warm_read=max(shape.warm_read, ON_DEMAND_WARM_READ if on_demand else shape.read_capacity),
        warm_write=max(shape.warm_write, ON_DEMAND_WARM_WRITE if on_demand else shape.write_capacity),
        max_read=None,
        max_write=None,
    )


def _cap(value) -> int | None:
    # MaxReadRequestUnits / MaxWriteRequestUnits: "-1 to remove the limit" (API_OnDemandThroughput)
    return int(value) if value is not None and int(value) > 0 else None


# -- partitions ----------------------------------------------------------------------------------------------------
def partition_count(read_units_per_second: float, write_units_per_second: float, settings: RulesSettings) -> int:
    """How many partitions serve this throughput: ``settings.partition_count``, or derived (a guess).

    DynamoDB does not publish its partition count. The derivation is the classic one: enough partitions for the
    throughput at 3,000 RCU / 1,000 WCU each, max(1, ceil(RCU/3000 + WCU/1000)).
    """
    if settings.partition_count > 0:
        return settings.partition_count
    return max(1, math.ceil(read_units_per_second / PARTITION_READ_UNITS
                            + write_units_per_second / PARTITION_WRITE_UNITS))


def partition_of(key_value: dict, count: int) -> int:
    """The partition (0..count-1) a partition key value hashes to: md5 of its identity, deterministic."""
    digest = hashlib.md5(key_identity(key_value).encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big") % count


# -- capacity charged ----------------------------------------------------------------------------------------------
def write_charge(old: dict | None, new: dict | None) -> int:
    """Write units for one item write: per started 1 KB of the larger of the item before and after.

    "For PutItem, UpdateItem and DeleteItem ... DynamoDB uses the larger of the two [sizes before and after the
    write]" (CapacityUnitCalculations.html, read-write-operations.html).
    """
    return write_units(max(item_size(old or {}), item_size(new or {})))


_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"^\s*([#\w]+)\s*=\s*(:\w+)\s*$")
_ADDITION = re.compile(r"^\s*([#\w]+)\s+(:\w+)\s*$")


def updated_item(old: dict, request: dict) -> dict:
    """The item after an UpdateItem, as far as the harness can tell before the engine applies it.

    Applied: top-level ``name = :value`` and ``ADD name :value`` (taken as the new value), ``REMOVE name``, and
    legacy ``AttributeUpdates``; anything else (nested paths, functions, arithmetic) leaves the attribute as it was.
    DynamoDB charges the larger of the item before and after (``write_charge``); this approximates "after".
    """
    item = dict(old)
    for name, update in (request.get("AttributeUpdates") or {}).items():
        if update.get("Action") == "DELETE" and "Value" not in update:
            item.pop(name, None)
        elif "Value" in update:
            item[name] = update["Value"]
    names = request.get("ExpressionAttributeNames") or {}
    values = request.get("ExpressionAttributeValues") or {}
    parts = _CLAUSE.split(request.get("UpdateExpression") or "")
    for keyword, clause in zip(parts[1::2], parts[2::2], strict=True):
        verb = keyword.upper()
        for action in clause.split(","):
            match = _ASSIGNMENT.match(action) if verb == "SET" else _ADDITION.match(action) if verb == "ADD" else None
            if match and match.group(2) in values:
                item[names.get(match.group(1), match.group(1))] = values[match.group(2)]
            elif verb == "REMOVE" and action.strip():
                item.pop(names.get(action.strip(), action.strip()), None)
    return item


def projected(index: IndexShape, item: dict) -> dict:
    """The part of ``item`` the index stores (its projection)."""
    if index.projection == "ALL":
        return item
    # KEYS_ONLY: the index and table keys; INCLUDE: those and NonKeyAttributes (API_Projection).
    kept = {index.hash_key, index.range_key, *index.table_keys}
    if index.projection == "INCLUDE":
        kept |= set(index.non_key_attributes)
    return {k: v for k, v in item.items() if k in kept}


def index_writes(index: IndexShape, old: dict | None, new: dict | None) -> list[tuple[dict, int]]:
    """The index partition key values a table write touches in ``index``, each with its write units.

    "If a table write changes an indexed key attribute, two writes are required: one to delete the previous item
    from the index and another to put the new item into the index"; an item without the index key is not in the
    index (GSI.ThroughputConsiderations, developer guide "Provisioned throughput considerations for GSIs").
    """
    old_key, new_key = index.key_value(old), index.key_value(new)
    old_range = (old or {}).get(index.range_key) if index.range_key else None
    new_range = (new or {}).get(index.range_key) if index.range_key else None
    old_item, new_item = old or {}, new or {}  # an item with an index key is never None
    if old_key is None:
        return [] if new_key is None else [(new_key, write_units(item_size(projected(index, new_item))))]
    if new_key is None:
        return [(old_key, write_units(item_size(projected(index, old_item))))]
    if old_key == new_key and old_range == new_range:
        size = max(item_size(projected(index, old_item)), item_size(projected(index, new_item)))
        return [(new_key, write_units(size))]
    return [(old_key, write_units(item_size(projected(index, old_item)))),
            (new_key, write_units(item_size(projected(index, new_item))))]


# -- limits --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Limit:
    """One bucket a request draws on: its key, refill rate, size, and the reason DynamoDB gives when it is empty."""

    key: tuple
    rate: float
    size: float
    reason: str
    resource: str
    initial: float | None = None  # what a new bucket holds; None: one second of ``rate``
    overdraft: bool = False  # a request goes through while the bucket holds any credit (burst capacity only)


@dataclass
class _Peak:
    """Per-second consumption of an on-demand table in the last window, and the highest settled second before it."""

    recent: deque = field(default_factory=deque)  # [second, units], oldest first
    settled: float = 0.0


class Throughput:
    """Token buckets for every partition, table and index limit, and the on-demand peaks; thread-safe."""

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings
        self.buckets = TokenBuckets()
        self._peaks: dict[tuple, _Peak] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every bucket and peak."""
        with self._lock:
            self.buckets.clear()
            self._peaks.clear()

    # -- which limits a request meets ------------------------------------------------------------------------
    def table_limits(self, shape: TableShape, capacity: Capacity, key_value: dict | None, write: bool,
                     now: float) -> list[Limit]:
        """The limits a read or write of ``key_value`` on the base table draws on."""
        s = self.settings
        kind = "Write" if write else "Read"
        direction = "w" if write else "r"
        limits = []
        if key_value is not None and s.on("partition_throughput"):
            rate = s.write_units_per_second if write else s.read_units_per_second
            limits.append(Limit((direction, shape.name, "partition", self._partition(key_value, capacity)),
                                rate, rate, f"Table{kind}KeyRangeThroughputExceeded", shape.arn))
        if not capacity.on_demand:
            # "DynamoDB currently retains up to 5 minutes (300 seconds) of unused read and write capacity"
            # (burst-adaptive-capacity.html, "Burst capacity").
            rate = capacity.write_capacity if write else capacity.read_capacity
            if rate > 0 and s.on("provisioned_capacity"):  # 0: a description without throughput (nothing to enforce)
                limits.append(self._provisioned((direction, shape.name, "provisioned"), rate,
                                                f"Table{kind}ProvisionedThroughputExceeded", shape.arn))
            return limits
        cap = capacity.max_write if write else capacity.max_read
        if cap is not None and s.on("on_demand_maximum"):
            # OnDemandThroughput: maximum request units per second (on-demand-capacity-mode-max-throughput.html).
            limits.append(Limit((direction, shape.name, "max"), cap, cap,
                                f"Table{kind}MaxOnDemandThroughputExceeded", shape.arn))
        # Per-table account quota of on-demand tables: 40,000 read and 40,000 write request units per second by
        # default (ServiceQuotas.html, "Throughput default quotas"); AccountLimitExceeded (API_ThrottlingReason).
        quota = s.table_write_units_quota if write else s.table_read_units_quota
        if s.on("table_throughput_quota"):
            limits.append(Limit((direction, shape.name, "account"), quota, quota,
                                f"Table{kind}AccountLimitExceeded", shape.arn))
        # "If you exceed double your previous peak within 30 minutes, you might experience throttling"; a new table
        # serves 4,000 writes / 12,000 reads per second at once (on-demand-capacity-mode.html, "Peak traffic",
        # "Initial throughput"). No source names the reason for this throttle: the table has not yet split into the
        # partitions the traffic needs, so the closest of the 16 is the key-range one.
        if not s.on("on_demand_peak"):
            return limits
        ceiling = self._on_demand_ceiling((direction, shape.name), capacity, write, now)
        limits.append(Limit((direction, shape.name, "peak"), ceiling, ceiling,
                            f"Table{kind}KeyRangeThroughputExceeded", shape.arn))
        return limits

    def index_limits(self, index: IndexShape, capacity: Capacity, table: str, key_value: dict,
                     write: bool) -> list[Limit]:
        """The limits a read or write of ``key_value`` in ``index`` draws on (the index has partitions of its own)."""
        s = self.settings
        kind = "Write" if write else "Read"
        direction = "w" if write else "r"
        if capacity.on_demand:
            reads, writes = capacity.warm_read, capacity.warm_write  # guess: an index warms like its table
        else:
            reads, writes = index.read_capacity, index.write_capacity
        count = partition_count(reads, writes, s)
        partition = key_identity(key_value) if s.partition_per_key_value else partition_of(key_value, count)
        rate = s.write_units_per_second if write else s.read_units_per_second
        limits = []
        if s.on("partition_throughput"):
            limits.append(Limit((direction, table, index.name, "partition", partition), rate, rate,
                                f"Index{kind}KeyRangeThroughputExceeded", index.arn))
        rate = index.write_capacity if write else index.read_capacity
        if not capacity.on_demand and rate > 0 and s.on("provisioned_capacity"):
            limits.append(self._provisioned((direction, table, index.name, "provisioned"), rate,
                                            f"Index{kind}ProvisionedThroughputExceeded", index.arn))
        return limits

    def _provisioned(self, key: tuple, rate: float, reason: str, resource: str) -> Limit:
        """A provisioned table's or index's capacity: ``burst_seconds`` of unused capacity kept, and a new table or
        index holding ``initial_burst_seconds`` of it ("DynamoDB currently retains up to 5 minutes (300 seconds) of
        unused read and write capacity", burst-adaptive-capacity.html, "Burst capacity")."""
        size = rate * max(1.0, self.settings.burst_seconds)
        return Limit(key, rate, size, reason, resource, initial=min(size, rate * self.settings.initial_burst_seconds),
                     overdraft=self.settings.overdraft)

    def _partition(self, key_value: dict, capacity: Capacity):
        if self.settings.partition_per_key_value:
            return key_identity(key_value)
        if capacity.on_demand:
            count = partition_count(capacity.warm_read, capacity.warm_write, self.settings)
        else:
            count = partition_count(capacity.read_capacity, capacity.write_capacity, self.settings)
        return partition_of(key_value, count)

    # -- on-demand peaks ---------------------------------------------------------------------------------------
    def _on_demand_ceiling(self, key: tuple, capacity: Capacity, write: bool, now: float) -> float:
        s = self.settings
        start = s.on_demand_write_units if write else s.on_demand_read_units
        if start is None:
            start = capacity.warm_write if write else capacity.warm_read
        with self._lock:
            peak = self._settle(key, now)
            return max(float(start), s.on_demand_peak_factor * peak.settled)

    def _settle(self, key: tuple, now: float) -> _Peak:
        # A second's consumption becomes "the previous peak" once it is on_demand_peak_window_seconds old: growth
        # within the window is bounded by double what the table served before it (a model of the documented rule).
        peak = self._peaks.setdefault(key, _Peak())
        while peak.recent and peak.recent[0][0] <= now - self.settings.on_demand_peak_window_seconds:
            peak.settled = max(peak.settled, peak.recent.popleft()[1])
        return peak

    def _record(self, limits: list[Limit], units: float, now: float) -> None:
        second = math.floor(now)
        for limit in limits:
            if limit.key[-1] != "peak":
                continue
            peak = self._settle(limit.key[:2], now)
            if peak.recent and peak.recent[-1][0] == second:
                peak.recent[-1][1] += units
            else:
                peak.recent.append([second, units])

    # -- taking units --------------------------------------------------------------------------------------------
    def try_write(self, charges: list[tuple[list[Limit], float]], now: float) -> list[dict]:
        """Take every charge's units from its limits if all of them hold enough; else take nothing.

        Returns the throttling reasons of the limits that lack the units ([] when the write may go). A bucket must
        hold the request's units, or be full (one item bigger than a second's worth still goes through). A provisioned
        table's or index's burst bucket with ``RulesSettings.overdraft`` (the default) gives the whole request while
        it holds any credit and goes below zero, so sustained load is still held to its rate; partition limits never
        overdraw, so a hot key's throttling stays exact.
        """
        with self._lock:
            needed: dict[tuple, float] = {}
            by_key: dict[tuple, Limit] = {}
            for limits, units in charges:
                for limit in limits:
                    needed[limit.key] = needed.get(limit.key, 0.0) + units
                    by_key[limit.key] = limit
            short = []
            for key, units in needed.items():
                limit = by_key[key]
                level = self.buckets.level(key, limit.rate, now, limit.size, limit.initial)
                enough = level >= limit.size or (limit.overdraft and level > 0)
                if level < units and not enough:
                    short.append(limit)
            if short:
                return _reasons(short)
            for key, units in needed.items():
                limit = by_key[key]
                self.buckets.take(key, units, limit.rate, now, limit.size, limit.initial)
            for limits, units in charges:
                self._record(limits, units, now)
            return []

    def read_refusal(self, limits: list[Limit], now: float) -> list[dict]:
        """Reasons to refuse a read: the limits whose bucket is overdrawn (reads are debited after the response)."""
        with self._lock:
            return _reasons([limit for limit in limits
                             if self.buckets.level(limit.key, limit.rate, now, limit.size, limit.initial) < 0])

    def debit(self, limits: list[Limit], units: float, now: float) -> None:
        """Debit a read's units after the response (may overdraw)."""
        with self._lock:
            for limit in limits:
                self.buckets.take(limit.key, units, limit.rate, now, limit.size, limit.initial)
            self._record(limits, units, now)


def _reasons(limits: list[Limit]) -> list[dict]:
    seen, reasons = set(), []
    for limit in limits:
        reason = {"reason": limit.reason, "resource": limit.resource}
        if (limit.reason, limit.resource) not in seen:
            seen.add((limit.reason, limit.resource))
            reasons.append(reason)
    return reasons


def read_charge(items: list[dict], consistent: bool) -> float:
    """Read units for the items a GetItem or Query returned (one rounding for the whole response)."""
    return read_units(sum(item_size(i) for i in items), consistent)
