"""DynamoDB's documented rules as plain Python: no sockets, no engine, a clock passed in.

The HTTP layer (``_server.py``) asks these classes whether a request may go through and what the
table's description must say afterwards. Every rule names its source next to the code that applies it.
Where DynamoDB's exact error wording is not documented, the message says what DynamoDB refuses in the
harness's own words, and the comment says so.
"""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation

from cdk_ts.testing._registry import RULE_NAMES
from cdk_ts.testing._setting_checks import problems
from cdk_ts_runtime._errors import ValidationError

DYNAMODB_ERROR_PREFIX = "com.amazonaws.dynamodb.v20120810#"

# Warm throughput of a new on-demand table: "New on-demand tables start with a warm throughput of
# 12,000 read units per second and 4,000 write units per second."
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html
ON_DEMAND_WARM_READ = 12_000
ON_DEMAND_WARM_WRITE = 4_000

# Fields of UpdateTable/CreateTable the harness keeps itself, because an engine refuses or ignores them:
# dynalite answers an UpdateTable carrying only one of these with "At least one of ProvisionedThroughput,
# BillingMode, ... is required"; moto ignores TableClass and OnDemandThroughput in DescribeTable.
HARNESS_OWNED_FIELDS = ("TableClass", "WarmThroughput", "OnDemandThroughput", "DeletionProtectionEnabled")


@dataclass
class RulesSettings:
    """What the harness enforces; every number is DynamoDB's default unless a test scales it down."""

    # A table stays UPDATING this long after each accepted UpdateTable, and CREATING this long after CreateTable.
    # A guess at what a small table usually takes (a few seconds), so an SDK waiter polling for ACTIVE sees it
    # soon; tests that want to see the transitional state set longer windows (the rules_proxy fixtures do).
    update_seconds: float = 5.0
    create_seconds: float = 5.0
    delete_seconds: float = 20.0  # DELETING after DeleteTable (still listed; the engine deletes it after)
    # Tables in CREATING/UPDATING/DELETING at once, per account (ServiceQuotas: 500).
    control_plane_limit: int = 500
    # CreateTables of tables with secondary indexes in flight at once (LimitExceededException: 250).
    control_plane_limit_with_indexes: int = 250
    # A CREATING/UPDATING/DELETING window also ends once a DescribeTable has reported it: a client that waits sees
    # each state in order (CREATING before ACTIVE, UPDATING, DELETING before gone) without waiting the whole window,
    # so suites run at the engine's pace. False: every window lasts its seconds (realistic; docs/testing.md).
    windows_end_at_first_wait: bool = True
    # Reads and writes on a CREATING table get ResourceNotFoundException, as on DynamoDB.
    refuse_data_plane_while_creating: bool = True
    write_units_per_second: float = 1000.0  # per partition (bucket: one second of units)
    read_units_per_second: float = 3000.0  # per partition, strongly consistent units
    throttle_partitions: bool = True  # False: no data-plane throttling at all (control-plane rules only)
    # -- data plane: partitions, table and index limits (throughput.py) ---------------------------------------------
    # Partitions per table and per index; 0: derived, max(1, ceil(RCU/3000 + WCU/1000)) from provisioned capacity,
    # or from warm throughput on-demand (guess: DynamoDB does not publish its partition count).
    partition_count: int = 0
    # True: every partition key value is its own partition, as after adaptive capacity isolated hot items
    # (burst-adaptive-capacity.html); False: key values hash (md5) onto the table's partitions.
    partition_per_key_value: bool = False
    burst_seconds: float = 300.0  # unused provisioned capacity retained (burst-adaptive-capacity.html)
    # Unused capacity a new provisioned table or index holds at first, in seconds of its capacity (at most
    # burst_seconds). A guess: DynamoDB does not say. The default accepts what DynamoDB was seen to accept: suites
    # recorded against DynamoDB write a 390 KB item (390 units) and bursts of small writes to a fresh 5-unit table.
    initial_burst_seconds: float = 300.0
    # Whether a request goes through while a provisioned table's or index's burst bucket holds any credit, taking it
    # below zero (reads always do: they are charged from the response). A guess, defaulting to the answer that
    # accepts more; False: a write needs its whole cost in the bucket (or a full bucket). Partition limits never
    # overdraw: a hot key is throttled exactly at write_units_per_second.
    overdraft: bool = True
    # An on-demand table's throughput before its traffic has a peak; None: its warm throughput, which starts at
    # 4,000 writes / 12,000 reads per second (on-demand-capacity-mode.html, "Initial throughput").
    on_demand_write_units: float | None = None
    on_demand_read_units: float | None = None
    on_demand_peak_factor: float = 2.0  # "double your previous peak" (on-demand-capacity-mode.html, "Peak traffic")
    on_demand_peak_window_seconds: float = 1800.0  # "within 30 minutes" (same section)
    table_write_units_quota: float = 40_000.0  # per-table account quota, on-demand (ServiceQuotas.html)
    table_read_units_quota: float = 40_000.0  # same quota, reads
    # Read the stored item before a write to charge the larger of old and new (CapacityUnitCalculations.html);
    # the proxy's own reads are neither charged nor counted as requests.
    charge_old_item: bool = True
    decreases_any_time: int = 4  # capacity decreases allowed at any time in a UTC day
    decreases_per_day: int = 27  # then one per hour, up to this many in the UTC day
    on_demand_switches_per_day: int = 4  # provisioned -> on-demand, rolling 24 h
    table_class_changes_per_30_days: int = 2  # trailing 30 days
    # -- what settles after a moment (_settling.py, each rule's source beside it) -----------------------------
    # UpdateContinuousBackups answers ContinuousBackupsUnavailableException this long after a new table turns
    # ACTIVE. A guess: DynamoDB documents the exception, not how long it lasts.
    backups_unavailable_seconds: float = 5.0
    # ListTagsOfResource shows the previous (or an empty) tag set this long after a tag change. A guess for
    # "only reflect the changes after a few seconds" (API_TagResource).
    tag_lag_seconds: float = 5.0
    # One UpdateTimeToLive per table in this long: "Any additional UpdateTimeToLive calls for the same table
    # during this one hour duration result in a ValidationException" (API_UpdateTimeToLive).
    ttl_update_interval_seconds: float = 3600.0
    # DescribeTimeToLive says ENABLING/DISABLING this long after a change. A guess ("It can take up to one hour
    # for the change to fully process", API_UpdateTimeToLive).
    ttl_settle_seconds: float = 60.0
    # Rules (by name, cdk_ts.testing.RULES) the proxy does not apply: the engine answers instead.
    disabled_rules: list[str] = field(default_factory=list)

    def updated(self, **changes) -> RulesSettings:
        """A copy with ``changes``; an unknown name, or an unknown rule in ``disabled_rules``, is refused."""
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValidationError(f"unknown RulesSettings {sorted(unknown)}; known: {sorted(known)}")
        found = problems(changes, asdict(RulesSettings()))
        if found:
            raise ValidationError("RulesSettings: " + "; ".join(found))
        unknown_rules = set(changes.get("disabled_rules") or ()) - RULE_NAMES
        if unknown_rules:
            raise ValidationError(
                f"disabled_rules names no rule {sorted(unknown_rules)}; the rules: {sorted(RULE_NAMES)}"
            )
        return RulesSettings(**{**asdict(self), **changes})

    def on(self, rule: str) -> bool:
        """Whether the rule called ``rule`` is applied."""
        return rule not in self.disabled_rules


class RuleError(Exception):
    """A refusal, serialised as DynamoDB's JSON 1.0 error body (HTTP 400)."""

    def __init__(self, code: str, message: str, **extra) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.extra = extra

    def body(self) -> bytes:
        """The error body exactly as DynamoDB shapes it: ``__type``, ``message`` (none when empty), modeled fields."""
        message = {"message": self.message} if self.message else {}
        return json.dumps({"__type": wire_type(self.code), **message, **self.extra}, separators=(",", ":")).encode()


#: Errors whose ``__type`` DynamoDB sends in its service framework's namespace, not its own: validation, as
#: AdRoll/goamz#15 quotes (``{"__type":"com.amazon.coral.validate#ValidationException",...}``), and an on-demand
#: table's throttle, as awslabs/dynein#195 quotes (``com.amazon.coral.availability#ThrottlingException``).
#: botocore reads the code after the ``#`` either way; the conformance corpus checks the wire form.
FRAMEWORK_TYPES = {
    # A body DynamoDB cannot read: {"__type":"com.amazon.coral.service#SerializationException"}, no message
    # (dynalite's connection tests, recorded against DynamoDB).
    "SerializationException": "com.amazon.coral.service#SerializationException",
    "ValidationException": "com.amazon.coral.validate#ValidationException",
    "ThrottlingException": "com.amazon.coral.availability#ThrottlingException",
}


def json_answer(status: int, payload: dict) -> tuple[int, list[tuple[str, str]], bytes]:
    """An HTTP answer with a DynamoDB JSON body: status, headers, body."""
    return status, [("Content-Type", "application/x-amz-json-1.0")], json.dumps(payload, separators=(",", ":")).encode()


def wire_type(code: str) -> str:
    """The ``__type`` DynamoDB sends for an error ``code``."""
    return FRAMEWORK_TYPES.get(code, DYNAMODB_ERROR_PREFIX + code)


def validation_error(message: str) -> RuleError:
    """``ValidationException`` with ``message``."""
    return RuleError("ValidationException", message)


def table_name_of(name_or_arn: str) -> str:
    """The table name of a ``TableName`` parameter, which may also be the table's ARN."""
    return name_or_arn.rsplit("/", 1)[-1] if name_or_arn.startswith("arn:") else name_or_arn


def _day_start(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def _aws_time(dt: datetime) -> str:
    # DynamoDB's decrease-limit message spells times like "Tuesday, March 10, 2026 at 1:00:00 AM
    # Coordinated Universal Time".
    hour = dt.hour % 12 or 12
    return f"{dt:%A, %B} {dt.day}, {dt.year} at {hour}:{dt:%M:%S} {'AM' if dt.hour < 12 else 'PM'} " \
        "Coordinated Universal Time"


@dataclass
class TableState:
    """What the harness tracks for one table (the engines keep none of it)."""

    name: str
    status: str = "ACTIVE"  # CREATING / UPDATING / DELETING until status_until, then ACTIVE
    status_until: datetime | None = None
    billing_mode: str = "PROVISIONED"
    read_capacity: int = 0
    write_capacity: int = 0
    decreases: list[datetime] = field(default_factory=list)
    last_increase: datetime | None = None
    last_decrease: datetime | None = None
    on_demand_switches: list[datetime] = field(default_factory=list)
    table_class: str = "STANDARD"
    class_updates: list[datetime] = field(default_factory=list)
    warm_read: int = 0
    warm_write: int = 0
    on_demand_throughput: dict | None = None
    deletion_protection: bool = False
    secondary_indexes: bool = False
    updates: int = 0  # accepted UpdateTable calls
    # When PAY_PER_REQUEST was last set, by CreateTable or a switch (BillingModeSummary).
    pay_per_request_since: datetime | None = None
    # The provisioned units reported while an UpdateTable that changed them is UPDATING.
    reported_capacity: tuple[int, int] | None = None
    # A DescribeTable reported the current window's state (RulesSettings.windows_end_at_first_wait): it ends now.
    seen: bool = False
    # The UPDATING window changes the provisioned capacity this way ("increase"/"decrease"): its end time becomes
    # LastIncreaseDateTime/LastDecreaseDateTime, as dynalite (written against DynamoDB's answers) reports them.
    pending_change: str | None = None
    # Fields DynamoDB reports only once they are set, which the overlay adds only then (or when the engine has them).
    explicit: set[str] = field(default_factory=set)

    def start_window(self, status: str, until: datetime) -> None:
        """Enter ``status`` (CREATING, UPDATING or DELETING) until ``until``; no client has seen it yet."""
        self.status, self.status_until, self.seen = status, until, False

    def window_over(self, now: datetime) -> bool:
        """Whether the current transitional window has ended: its time is up, or a wait has seen it."""
        return self.status_until is not None and (now >= self.status_until or self.seen)

    def current_status(self, now: datetime) -> str:
        """CREATING/UPDATING/DELETING while the window lasts, ACTIVE after it (DELETING: until the engine deletes)."""
        if self.window_over(now) and self.status != "DELETING":
            ended = min(now, self.status_until) if self.status_until is not None else now
            if self.pending_change == "increase":
                self.last_increase = ended
            elif self.pending_change == "decrease":
                self.last_decrease = ended
            self.status, self.status_until, self.seen, self.pending_change = "ACTIVE", None, False, None
        return self.status

    def decreases_today(self, now: datetime) -> list[datetime]:
        """Decreases in the current UTC day."""
        start = _day_start(now)
        return [t for t in self.decreases if t >= start]

    def as_dict(self, now: datetime) -> dict:
        """Tracked state for test assertions (datetimes stay datetimes)."""
        data = asdict(self)
        data["explicit"] = sorted(self.explicit)
        data["status"] = self.current_status(now)
        data["decreases_today"] = len(self.decreases_today(now))
        data["on_demand_switches_24h"] = len([t for t in self.on_demand_switches if t > now - timedelta(hours=24)])
        data["class_updates_30d"] = len([t for t in self.class_updates if t > now - timedelta(days=30)])
        return data


def _is_decrease(changes: dict, state: TableState) -> bool:
    if "ProvisionedThroughput" not in changes or state.billing_mode != "PROVISIONED":
        return False
    read, write = changes["ProvisionedThroughput"]
    return read < state.read_capacity or write < state.write_capacity


# -- item sizes and capacity units ---------------------------------------------------------------------------
# "The total size of an item is the sum of the lengths of its attribute names and values": strings and
# names UTF-8 bytes; numbers ~ 1 byte per two significant digits + 1; binary raw bytes; null/boolean 1;
# list/map 3 bytes + 1 byte per element. https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
def _number_size(text: str) -> int:
    # "approximately ... 1 byte per two significant digits + 1 byte" (CapacityUnitCalculations.html). The exact count
    # is dynalite's valSize, which its peer suite checks at DynamoDB's 400 KB boundary ("item is too big with ...
    # number attribute", recorded against DynamoDB): 1 + ceil(digits / 2), one more when the count of significant
    # digits is even and the exponent of the first digit is even too. dynalite adds a byte for a negative number;
    # no recording checks that, so the layer does not: at worst it says yes one byte late, never no too early.
    try:
        number = Decimal(text)
    except (InvalidOperation, TypeError, ValueError):
        return len(str(text))  # not a number: the engine refuses it (_validity.py steps aside)
    if not number.is_finite() or number.is_zero():
        return 1
    _sign, digits, exponent = number.normalize().as_tuple()
    first_digit_exponent = int(exponent) + len(digits) - 1
    even = len(digits) % 2 == 0 and first_digit_exponent % 2 == 0
    return 1 + math.ceil(len(digits) / 2) + (1 if even else 0)


def value_size(value: dict) -> int:
    """The size in bytes of one AttributeValue (without its name)."""
    ((kind, v),) = value.items()
    if kind == "S":
        return len(v.encode())
    if kind == "N":
        return _number_size(v)
    if kind == "B":
        return len(base64.b64decode(v))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode()) for s in v)
    if kind == "NS":
        return sum(_number_size(n) for n in v)
    if kind == "BS":
        return sum(len(base64.b64decode(b)) for b in v)
    if kind == "L":
        return 3 + sum(1 + value_size(e) for e in v)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + value_size(e) for k, e in v.items())
    return len(json.dumps(v))


def item_size(item: dict) -> int:
    """The size in bytes of an item in DynamoDB JSON (``{"name": {"S": "..."}}``)."""
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    """Write units for one item: "one write request unit ... for an item up to 1 KB", rounded up.

    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
    """
    return max(1, math.ceil(size / 1024))


def read_units(size: int, consistent: bool) -> float:
    """Read units: 4 KB per unit rounded up, half for eventually consistent reads (read-write-operations.html)."""
    units = max(1, math.ceil(size / 4096))
    return float(units) if consistent else units / 2


class TokenBuckets:
    """Token buckets on the harness clock, by key; a bucket refills at ``rate`` and holds ``size`` (default: one
    second of ``rate``). ``throughput.py`` keeps one per partition, table and index limit.

    Partition limits: "each individual partition is limited to 1,000 write units per second and 3,000
    read units per second" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html,
    and bp-partition-key-design.html). A new bucket holds ``initial`` units (default: one second of ``rate``); the
    provisioned limits start with ``RulesSettings.initial_burst_seconds`` of their capacity.
    """

    def __init__(self) -> None:
        self._buckets: dict[tuple, list[float]] = {}

    def level(self, key: tuple, rate: float, now: float, size: float | None = None,
              initial: float | None = None) -> float:
        """Units available for ``key`` at ``now`` (negative after an overdraft)."""
        size = rate if size is None else size
        bucket = self._buckets.get(key)
        if bucket is None:  # first seen now: it fills from here on, whether or not this request takes from it
            bucket = self._buckets[key] = [min(rate if initial is None else initial, size), now]
        tokens, last = bucket
        return min(size, tokens + max(0.0, now - last) * rate)

    def try_take(self, key: tuple, units: float, rate: float, now: float, size: float | None = None) -> bool:
        """Take ``units`` if the bucket holds them (or is full: one item bigger than the bucket still goes)."""
        size = rate if size is None else size
        tokens = self.level(key, rate, now, size)
        if tokens < units and tokens < size:
            self._buckets[key] = [tokens, now]
            return False
        self._buckets[key] = [tokens - units, now]
        return True

    def take(self, key: tuple, units: float, rate: float, now: float, size: float | None = None,
             initial: float | None = None) -> None:
        """Debit ``units`` (may go negative: reads are charged after the response, writes with overdraft)."""
        self._buckets[key] = [self.level(key, rate, now, size, initial) - units, now]

    def clear(self) -> None:
        """Forget every bucket."""
        self._buckets.clear()


def key_identity(value: dict) -> str:
    """A hashable identity for a partition key AttributeValue."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


_CONDITION = re.compile(r"([#:\w.]+)\s*=\s*([#:\w.]+)")


def query_partition_value(request: dict, hash_key: str) -> dict | None:
    """The partition key value a Query names in ``KeyConditionExpression`` (or legacy ``KeyConditions``)."""
    if "KeyConditions" in request:
        condition = request["KeyConditions"].get(hash_key) or {}
        values = condition.get("AttributeValueList") or []
        return values[0] if values else None
    expression = request.get("KeyConditionExpression")
    if not expression:
        return None
    names = request.get("ExpressionAttributeNames") or {}
    values = request.get("ExpressionAttributeValues") or {}
    for left, right in _CONDITION.findall(expression):
        for attr, placeholder in ((left, right), (right, left)):
            if placeholder.startswith(":") and names.get(attr, attr) == hash_key and placeholder in values:
                return values[placeholder]
    return None


def parse_time(text: str) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (a naive one is taken as UTC)."""
    dt = datetime.fromisoformat(text)
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)

