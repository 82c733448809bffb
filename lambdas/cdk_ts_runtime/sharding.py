"""Dynamic write sharding: spread a hot partition key over ``{key}_{n}`` shards, and grow only when it pays.

A metadata table holds, per logical key, ``number_of_shards``, ``last_updated`` (epoch seconds) and
``shard_history`` (a string set of ``"<epoch>:<count>"``). Writers add shards only when DynamoDB says
the *partition* is the bottleneck (a ``...KeyRangeThroughputExceeded`` throttling reason), after a
cooldown and a random backoff, through a conditional update on the ``last_updated`` they read, so
many writers hitting the same limit grow the key once. Readers fan out over every shard that ever
existed (the largest count in the history), so a stale cache never hides items.
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import Backoff, LazyClient, error_code, is_throttle
from cdk_ts_runtime.items import from_attribute_values, query_all, to_attribute_values

ENV_TABLE = "SHARDED_TABLE_NAME"
ENV_METADATA_TABLE = "SHARD_METADATA_TABLE_NAME"
ENV_PARTITION_KEY = "SHARDED_PARTITION_KEY"
ENV_SORT_KEY = "SHARDED_SORT_KEY"
ENV_STRATEGY = "SHARDING_STRATEGY"


class ShardStrategy(StrEnum):
    """How a writer picks the shard of a hot key."""

    #: Uniformly at random: the even spread; reads query every shard.
    RANDOM = "random"
    #: ``md5(key + sort key) % N + 1``: a point read touches one shard.
    COMPUTED = "computed"


class ShardGrowth(StrEnum):
    """How a throttled key's shard count grows."""

    #: Add one shard per growth, as the original pattern does.
    INCREMENT = "increment"
    #: Double the count (up to ``max_shards``): few growths to reach a burst's need (see bench/README.md).
    DOUBLE = "double"


STRATEGIES = tuple(s.value for s in ShardStrategy)
GROWTH_POLICIES = tuple(g.value for g in ShardGrowth)
#: The strategy and growth names as plain strings (what ``SHARDING_STRATEGY`` holds).
StrategyName = Literal["random", "computed"]
GrowthName = Literal["increment", "double"]
logger = logging.getLogger(__name__)
_SORT_CONDITIONS = {
    "eq": "#sk = :a",
    "lt": "#sk < :a",
    "lte": "#sk <= :a",
    "gt": "#sk > :a",
    "gte": "#sk >= :a",
    "begins_with": "begins_with(#sk, :a)",
    "between": "#sk BETWEEN :a AND :b",
}


class CorruptShardMetadata(ValueError):
    """A metadata item that is not what writers store; the message names the key and the attribute."""


@dataclass(frozen=True)
class ShardInfo:
    """One logical key's metadata: the count writers use now and every count it has had.

    :param number_of_shards: the shard count writers use now.
    :param last_updated: epoch seconds of the last change; None when the key has no metadata item yet.
    :param history: every ``(epoch seconds, count)`` the key has had, oldest first.
    :param version: the growth counter conditional updates compare.
        Default: None — an item written before 0.2, which has none.
    :param last_updated_ms: epoch milliseconds of the last change, for the cooldown.
        Default: None — an item written before 0.2: ``last_updated`` * 1000 is used.
    """

    number_of_shards: int
    last_updated: int | None
    history: tuple[tuple[int, int], ...]
    version: int | None = None
    last_updated_ms: int | None = None

    @property
    def readable_shards(self) -> int:
        """How many shards may hold data: the largest count ever used."""
        return max([self.number_of_shards, *(count for _epoch, count in self.history)])

    def count_at(self, epoch: float) -> int:
        """The shard count in force at ``epoch`` (the first count for earlier times)."""
        count = self.history[0][1] if self.history else self.number_of_shards
        for since, value in self.history:
            if since <= epoch:
                count = value
        return count


def throttle_scope(error: ClientError) -> str | None:
    """``"partition"``, ``"table"``, ``"unknown"`` (a throttle without reasons) or None (not a throttle).

    DynamoDB's ``ThrottlingReasons`` name the exhausted resource: ``TableWriteKeyRangeThroughputExceeded``
    (or ``TableRead...``) is one partition of the base table, where more shards help; an index's key
    range (``IndexWriteKeyRangeThroughputExceeded``), provisioned or account limits are not, and count as
    ``"table"`` (no growth).
    """
    if not is_throttle(error):
        return None
    reasons = error.response.get("ThrottlingReasons") or error.response.get("Error", {}).get("ThrottlingReasons")
    if not reasons:
        return "unknown"
    names = [r.get("reason", "") if isinstance(r, Mapping) else str(r) for r in reasons]
    base_partition = any(n.startswith("Table") and n.endswith("KeyRangeThroughputExceeded") for n in names)
    return "partition" if base_partition else "table"


class ShardedTable:
    """Writer and reader for a table whose hot partition keys are spread over numbered shards.

    ``strategy="random"`` picks a shard uniformly; ``"computed"`` uses ``md5(key + sort key) % N + 1``
    so a point read touches one shard. ``growth="double"`` (default, see bench/README.md) doubles the
    count up to ``max_shards``; ``"increment"`` adds one, as the original pattern does.
    """

    def __init__(
        self,
        table_name: str,
        metadata_table_name: str,
        *,
        partition_key: str,
        sort_key: str,
        strategy: ShardStrategy | StrategyName = ShardStrategy.RANDOM,
        cooldown_seconds: float = 10,
        max_shards: int = 64,
        growth: ShardGrowth | GrowthName = ShardGrowth.DOUBLE,
        separator: str = "_",
        cache_ttl_seconds: float = 5,
        max_backoff_seconds: float = 2.0,
        max_attempts: int = 10,
        sort_key_time_unit: str | None = None,
        table_headroom: float = 0.8,
        on_table_throttle: Callable[[str], None] | None = None,
        dynamodb_client=None,
        cloudwatch_client=None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_workers: int = 16,
    ) -> None:
        """Describe the sharded table and its metadata table; no AWS call is made until the first use.

        :param table_name: the main table's name.
        :param metadata_table_name: the metadata table's name (see ``ShardMetadataTable``).
        :param partition_key: the main table's partition key attribute (a String).
        :param sort_key: the main table's sort key attribute.
        :param strategy: ``ShardStrategy.RANDOM`` (uniform) or ``ShardStrategy.COMPUTED`` (``md5(key + sort
            key) % N + 1``, so a point read touches one shard); their values ``"random"``/``"computed"`` work
            too. Default: ``ShardStrategy.RANDOM``.
        :param cooldown_seconds: the least time between two growths of one key.
            Default: 10.
        :param max_shards: the most shards a key may grow to.
            Default: 64.
        :param growth: ``ShardGrowth.DOUBLE`` doubles the count, ``ShardGrowth.INCREMENT`` adds one (or
            their values). Default: ``ShardGrowth.DOUBLE`` (see bench/README.md for the comparison).
        :param separator: what joins a key and its shard number; a value that ends with it and digits is
            refused. Default: ``"_"`` — shards are ``{key}_{n}``.
        :param cache_ttl_seconds: how long a key's metadata is cached for writes.
            Default: 5.
        :param max_backoff_seconds: the longest random wait before a growth and between retries.
            Default: 2.0.
        :param max_attempts: write attempts before a throttle is raised.
            Default: 10.
        :param sort_key_time_unit: ``"s"`` or ``"ms"`` when the sort key is an epoch time; then a
            ``computed`` point read picks the shard count in force at the item's time. Default: None — the
            sort key is not a time; the current count is used (other shards are read as a fallback).
        :param table_headroom: without throttling reasons, a table consuming less than this share of its
            provisioned WCU is taken to have one hot partition. Default: 0.8.
        :param on_table_throttle: called with the table name when a throttle is the table's, not one
            partition's (more shards would not help). Default: None — such throttles are only retried.
        :param dynamodb_client: the boto3 DynamoDB client to use.
            Default: None — one is created on first use.
        :param cloudwatch_client: the boto3 CloudWatch client for the no-reasons fallback.
            Default: None — one is created on first use.
        :param clock: returns the time in epoch seconds (tests pass a fake).
            Default: ``time.time``.
        :param rng: the random generator for shard choice and jitter.
            Default: None — a new ``random.Random()``.
        :param sleep: how to wait (tests pass a fake).
            Default: ``time.sleep``.
        :param max_workers: most shards read in parallel.
            Default: 16.
        :raises ValueError: for empty names, an unknown strategy or growth, or invalid limits or separator.
        """
        for name, value in (
            ("table_name", table_name),
            ("metadata_table_name", metadata_table_name),
            ("partition_key", partition_key),
            ("sort_key", sort_key),
        ):
            if not value:
                raise ValueError(f"{name} must not be empty")
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
        if growth not in GROWTH_POLICIES:
            raise ValueError(f"growth {growth!r} is not one of {', '.join(GROWTH_POLICIES)}")
        if not isinstance(max_shards, int) or max_shards < 1:
            raise ValueError(f"max_shards {max_shards!r} must be a whole number >= 1")
        if isinstance(cooldown_seconds, bool) or not isinstance(cooldown_seconds, int | float) or cooldown_seconds < 1:
            raise ValueError(
                f"cooldown_seconds {cooldown_seconds!r} must be >= 1: a shorter cooldown lets one burst of throttles "
                "grow a key several times"
            )
        if not separator or separator.isdigit():
            raise ValueError(f"separator {separator!r} must be non-empty and not a digit")
        if sort_key_time_unit not in (None, "s", "ms"):
            raise ValueError(f"sort_key_time_unit {sort_key_time_unit!r} must be 's', 'ms' or None")
        self.table_name = table_name
        self.metadata_table_name = metadata_table_name
        self.partition_key = partition_key
        self.sort_key = sort_key
        self.strategy = ShardStrategy(strategy)
        self.cooldown_seconds = cooldown_seconds
        self.max_shards = max_shards
        self.growth = ShardGrowth(growth)
        self.separator = separator
        self.cache_ttl_seconds = cache_ttl_seconds
        self.max_attempts = max_attempts
        self.sort_key_time_unit = sort_key_time_unit
        self.table_headroom = table_headroom
        self.on_table_throttle = on_table_throttle
        self._dynamodb = LazyClient("dynamodb", dynamodb_client)
        self._cloudwatch = LazyClient("cloudwatch", cloudwatch_client)
        self.clock = clock
        self.rng = rng or random.Random()
        self.backoff = Backoff(base=0.05, cap=max_backoff_seconds, sleep=sleep, rng=self.rng.random)
        self.max_workers = max_workers
        self._suffix = re.compile(re.escape(separator) + r"\d+$")
        self._cache: dict[str, tuple[float, ShardInfo]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> ShardedTable:
        """The client ``ShardMetadataTable.bind`` configured through environment variables.

        :param env: the environment, usually ``os.environ``.
        :param kwargs: further constructor arguments (``max_shards``, ``growth``, ...).
        :raises KeyError: when a table or key variable is not set.
        """
        missing = [n for n in (ENV_TABLE, ENV_METADATA_TABLE, ENV_PARTITION_KEY, ENV_SORT_KEY) if not env.get(n)]
        if missing:
            raise KeyError(f"environment variables {', '.join(missing)} are not set; use ShardMetadataTable.bind")
        return cls(
            env[ENV_TABLE],
            env[ENV_METADATA_TABLE],
            partition_key=env[ENV_PARTITION_KEY],
            sort_key=env[ENV_SORT_KEY],
            strategy=env.get(ENV_STRATEGY, "random"),
            **kwargs,
        )

    @property
    def dynamodb(self):
        """The DynamoDB client (created on first use)."""
        return self._dynamodb.get()

    @property
    def cloudwatch(self):
        """The CloudWatch client for the no-reasons fallback (created on first use)."""
        return self._cloudwatch.get()

    # ---- keys -----------------------------------------------------------------------------------

    def _logical(self, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"partition key value {value!r} must be a non-empty string (shards are '{{key}}_{{n}}')")
        if self._suffix.search(value):
            raise ValueError(
                f"partition key value {value!r} ends like a shard suffix ({self.separator}<digits>), which would make "
                f"its shards ambiguous; pass another separator=, e.g. '#'"
            )
        return value

    def physical_key(self, logical: str, shard: int) -> str:
        """The stored partition key of shard ``shard`` (1-based) of ``logical``."""
        return f"{logical}{self.separator}{shard}"

    def logical_key(self, physical: str) -> str:
        """Strip the shard suffix from a stored partition key."""
        return self._suffix.sub("", physical)

    def _shard_for(self, logical: str, sort_value: Any, count: int) -> int:
        if self.strategy == "computed":
            digest = hashlib.md5(f"{logical}{sort_value}".encode(), usedforsecurity=False).hexdigest()
            return int(digest, 16) % count + 1
        return self.rng.randint(1, count)

    # ---- metadata -------------------------------------------------------------------------------

    def shard_info(self, logical_value: str, *, fresh: bool = False) -> ShardInfo:
        """The key's metadata (cached for ``cache_ttl_seconds`` unless ``fresh``); no item means 1 shard.

        :param logical_value: the logical partition key value.
        :param fresh: read the metadata table now (strongly consistent).
            Default: False — a cached value younger than ``cache_ttl_seconds`` is used.
        """
        logical = self._logical(logical_value)
        now = self.clock()
        with self._lock:
            cached = self._cache.get(logical)
        if cached and not fresh and now - cached[0] < self.cache_ttl_seconds:
            return cached[1]
        response = self.dynamodb.get_item(
            TableName=self.metadata_table_name,
            Key=to_attribute_values({self.partition_key: logical}),
            ConsistentRead=True,
        )
        if "Item" in response:
            info = self._parse(logical, from_attribute_values(response["Item"]))
        else:
            info = ShardInfo(1, None, ())
        with self._lock:
            self._cache[logical] = (now, info)
        return info

    def shard_count(self, logical_value: str) -> int:
        """How many shards writers of ``logical_value`` use now."""
        return self.shard_info(logical_value, fresh=True).number_of_shards

    def _ensure_metadata(self, logical: str, info: ShardInfo) -> ShardInfo:
        """The first writer of a key records it: 1 shard, history {"<epoch>:1"} (conditional put)."""
        if info.last_updated is not None:
            return info
        now = self.clock()
        epoch = int(now)
        try:
            self.dynamodb.put_item(
                TableName=self.metadata_table_name,
                Item=to_attribute_values(
                    {
                        self.partition_key: logical,
                        "number_of_shards": 1,
                        "last_updated": epoch,
                        "last_updated_ms": int(now * 1000),
                        "version": 1,
                        "shard_history": {f"{epoch}:1"},
                    }
                ),
                ConditionExpression="attribute_not_exists(#pk)",
                ExpressionAttributeNames={"#pk": self.partition_key},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
        return self.shard_info(logical, fresh=True)

    def grow(self, logical_value: str, seen: ShardInfo) -> bool:
        """Add shards after the cooldown and a random backoff, if nobody else did; True when this call grew it."""
        logical = self._logical(logical_value)
        if self._cooling(seen):
            return False
        if seen.number_of_shards >= self.max_shards:
            return False
        self.backoff.spread()  # writers that throttled together do not all grow the key at once
        current = self.shard_info(logical, fresh=True)
        if (current.version, current.last_updated_ms, current.last_updated) != (
            seen.version, seen.last_updated_ms, seen.last_updated
        ):
            return False  # another writer grew it while we backed off
        if self._cooling(current):
            return False
        count = current.number_of_shards
        target = min(self.max_shards, count + 1 if self.growth == "increment" else count * 2)
        now = self.clock()
        epoch = int(now)
        if current.version is None:  # an item written before 0.2: no version yet
            condition, seen_values = "attribute_not_exists(version) AND last_updated = :seen", {
                ":seen": current.last_updated
            }
        else:
            condition, seen_values = "version = :seen", {":seen": current.version}
        try:
            self.dynamodb.update_item(
                TableName=self.metadata_table_name,
                Key=to_attribute_values({self.partition_key: logical}),
                UpdateExpression=(
                    "SET number_of_shards = :count, last_updated = :now, last_updated_ms = :now_ms, "
                    "version = :version ADD shard_history :entry"
                ),
                ConditionExpression=condition,
                ExpressionAttributeValues=to_attribute_values(
                    {
                        ":count": target,
                        ":now": epoch,
                        ":now_ms": int(now * 1000),
                        ":version": (current.version or 0) + 1,
                        ":entry": {f"{epoch}:{target}"},
                        **seen_values,
                    }
                ),
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                self.shard_info(logical, fresh=True)
                return False
            raise
        self.shard_info(logical, fresh=True)
        return True

    def _cooling(self, info: ShardInfo) -> bool:
        """True while ``info`` was updated less than ``cooldown_seconds`` ago (millisecond precision)."""
        if info.last_updated is None:
            return False
        updated_ms = info.last_updated_ms if info.last_updated_ms is not None else info.last_updated * 1000
        return self.clock() * 1000 - updated_ms < self.cooldown_seconds * 1000

    def _parse(self, logical: str, item: Mapping[str, Any]) -> ShardInfo:
        """A metadata item as :class:`ShardInfo`, checked: a corrupt item is an error naming key and attribute."""

        def whole(name: str, value: Any, low: int, high: int | None = None) -> int:
            if isinstance(value, bool) or not isinstance(value, int | Decimal) or value != int(value):
                shown = str(value) if isinstance(value, Decimal) else repr(value)
                raise CorruptShardMetadata(f"shard metadata of {logical!r}: {name} {shown} is not a whole number")
            if int(value) < low or (high is not None and int(value) > high):
                limit = f"{low}..{high}" if high is not None else f">= {low}"
                raise CorruptShardMetadata(f"shard metadata of {logical!r}: {name} {value} is outside {limit}")
            return int(value)

        for name in ("number_of_shards", "last_updated"):
            if name not in item:
                raise CorruptShardMetadata(f"shard metadata of {logical!r} has no {name}")
        count = whole("number_of_shards", item["number_of_shards"], 1, self.max_shards)
        updated = whole("last_updated", item["last_updated"], 0)
        history_raw = item.get("shard_history", set())
        if not isinstance(history_raw, set | frozenset | list):
            raise CorruptShardMetadata(f"shard metadata of {logical!r}: shard_history {history_raw!r} is not a set")
        history = []
        for entry in history_raw:
            match = re.fullmatch(r"(\d+):(\d+)", entry) if isinstance(entry, str) else None
            if not match or not 1 <= int(match.group(2)) <= self.max_shards:
                raise CorruptShardMetadata(
                    f"shard metadata of {logical!r}: shard_history entry {entry!r} is not '<epoch>:<count>' with a "
                    f"count in 1..{self.max_shards}"
                )
            history.append((int(match.group(1)), int(match.group(2))))
        version = whole("version", item["version"], 1) if "version" in item else None
        updated_ms = whole("last_updated_ms", item["last_updated_ms"], 0) if "last_updated_ms" in item else None
        return ShardInfo(count, updated, tuple(sorted(history)), version, updated_ms)

    # ---- writes ---------------------------------------------------------------------------------

    def put_item(self, item: Mapping[str, Any]) -> str:
        """Write ``item`` (logical key in ``partition_key``) to one of its shards; returns the stored key.

        Partition throttles grow the key (see :meth:`grow`) and retry; table-level throttles only back
        off and retry (and call ``on_table_throttle``). The last error is raised after ``max_attempts``.
        """
        for name in (self.partition_key, self.sort_key):
            if item.get(name) is None:
                raise ValueError(f"item has no {name!r}: every item needs the partition and sort key")
        logical = self._logical(item[self.partition_key])
        info = self._ensure_metadata(logical, self.shard_info(logical))
        for attempt in range(1, self.max_attempts + 1):
            physical = self.physical_key(logical, self._shard_for(logical, item[self.sort_key], info.number_of_shards))
            try:
                self.dynamodb.put_item(
                    TableName=self.table_name, Item=to_attribute_values({**item, self.partition_key: physical})
                )
                return physical
            except ClientError as error:
                scope = throttle_scope(error)
                if scope is None:
                    raise
                if scope == "unknown":
                    scope = self._scope_or_unknown()
                if scope == "partition":
                    self.grow(logical, info)
                elif self.on_table_throttle is not None:
                    self.on_table_throttle(self.table_name)
                if attempt == self.max_attempts:
                    raise
                self.backoff.wait(attempt)
                info = self.shard_info(logical, fresh=True)
        raise AssertionError("unreachable")  # pragma: no cover

    def _scope_or_unknown(self) -> str:
        """The metrics' verdict, or ``"unknown"`` (no growth) when CloudWatch cannot be read; never raises."""
        try:
            return self._scope_from_metrics()
        except Exception as error:  # noqa: BLE001 - the throttle, not the metrics call, is what the caller handles
            logger.warning("cannot classify a throttle of %s from CloudWatch (%s); not growing", self.table_name, error)
            return "unknown"

    def _scope_from_metrics(self) -> str:
        """Without ThrottlingReasons: a table well under its provisioned WCU means one hot partition."""
        end = datetime.fromtimestamp(self.clock(), UTC)
        start = end - timedelta(minutes=5)

        def average(metric: str, statistic: str) -> float | None:
            points = self.cloudwatch.get_metric_statistics(
                Namespace="AWS/DynamoDB",
                MetricName=metric,
                StartTime=start,
                EndTime=end,
                Period=60,
                Statistics=[statistic],
                Dimensions=[{"Name": "TableName", "Value": self.table_name}],
            )["Datapoints"]
            return max(p[statistic] for p in points) if points else None

        consumed = average("ConsumedWriteCapacityUnits", "Sum")
        provisioned = average("ProvisionedWriteCapacityUnits", "Average")
        if consumed is None or not provisioned:
            return "table"  # on-demand or no data: do not shard on a guess
        return "partition" if consumed / 60 < self.table_headroom * provisioned else "table"

    # ---- reads ----------------------------------------------------------------------------------

    def query(self, logical_value: str, **sort_condition: Any) -> list[dict[str, Any]]:
        """Every item of ``logical_value`` matching one sort-key condition, from all shards, in sort-key order.

        Conditions: ``eq``, ``lt``, ``lte``, ``gt``, ``gte``, ``begins_with`` or ``between=(low, high)``;
        none means every item of the key.
        """
        logical = self._logical(logical_value)
        if len(sort_condition) > 1:
            raise ValueError(f"give at most one sort-key condition, got {sorted(sort_condition)}")
        key = "#pk = :pk"
        values: dict[str, Any] = {}
        if sort_condition:
            ((name, value),) = sort_condition.items()
            if name not in _SORT_CONDITIONS:
                raise ValueError(f"sort-key condition {name!r} is not one of {', '.join(_SORT_CONDITIONS)}")
            key += f" AND {_SORT_CONDITIONS[name]}"
            values = {":a": value[0], ":b": value[1]} if name == "between" else {":a": value}
        names = {"#pk": self.partition_key, **({"#sk": self.sort_key} if sort_condition else {})}
        shards = range(1, self.shard_info(logical, fresh=True).readable_shards + 1)

        def one_shard(shard: int) -> list[dict[str, Any]]:
            request = {
                "TableName": self.table_name,
                "KeyConditionExpression": key,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": to_attribute_values({":pk": self.physical_key(logical, shard), **values}),
            }
            return query_all(self.dynamodb, request)

        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(shards))) as pool:
            results = [item for chunk in pool.map(one_shard, shards) for item in chunk]
        for item in results:
            item[self.partition_key] = logical
        return sorted(results, key=lambda item: item[self.sort_key])

    def get_item(self, logical_value: str, sort_value: Any) -> dict[str, Any] | None:
        """One item by logical key: one shard under ``computed`` (the rest only as a fallback), all under ``random``."""
        logical = self._logical(logical_value)
        info = self.shard_info(logical, fresh=True)
        every = list(range(1, info.readable_shards + 1))
        if self.strategy == "computed":
            count = info.count_at(self._epoch_of(sort_value)) if self.sort_key_time_unit else info.number_of_shards
            first = self._shard_for(logical, sort_value, count)
            found = self._get_from(logical, sort_value, [first])
            if found is not None:
                return found
            every.remove(first)
        return self._get_from(logical, sort_value, every)

    def _epoch_of(self, sort_value: Any) -> float:
        return float(sort_value) / (1000 if self.sort_key_time_unit == "ms" else 1)

    def _get_from(self, logical: str, sort_value: Any, shards: list[int]) -> dict[str, Any] | None:
        for start in range(0, len(shards), 100):  # BatchGetItem reads up to 100 keys a call
            keys = [
                to_attribute_values({self.partition_key: self.physical_key(logical, s), self.sort_key: sort_value})
                for s in shards[start : start + 100]
            ]
            request = {self.table_name: {"Keys": keys, "ConsistentRead": True}}
            attempt = 0
            while request:
                attempt += 1
                response = self.dynamodb.batch_get_item(RequestItems=request)
                for item in response.get("Responses", {}).get(self.table_name, []):
                    found = from_attribute_values(item)
                    found[self.partition_key] = logical
                    return found
                request = response.get("UnprocessedKeys") or {}
                if request:
                    self.backoff.wait(attempt)
        return None
