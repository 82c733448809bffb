"""The shard-metadata table: read and validate a key's item, record a new key, grow it conditionally.

One item per logical key: ``number_of_shards``, ``last_updated`` (epoch seconds), ``last_updated_ms``,
``version`` (the change counter conditional updates compare), ``shard_history`` (a string set of
``"<epoch>:<count>"``: from each time on, the count in force; see :mod:`cdk_ts_runtime._sharding._history`),
``max_shards`` (the cap of the writer that last grew or created it) and, once a writer that places items by
their sort-key time has written the key, ``time_sharded_since`` (epoch seconds: items of earlier times may
have been written by the writer's clock, so windows before it read every shard those writers used). The count
stored is the one every writer and reader uses, whatever its own ``max_shards``.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._errors import CdkTsError
from cdk_ts_runtime._inputs import number, whole
from cdk_ts_runtime._items import from_attribute_values, to_attribute_values
from cdk_ts_runtime._sharding import _history
from cdk_ts_runtime._sharding.policy import SHARD_CEILING


class CorruptShardMetadataError(CdkTsError, ValueError):
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
    :param max_shards: the cap of the writer that last grew (or created) the key.
        Default: None — an item written before 0.3: only :data:`SHARD_CEILING` bounds the count.
    :param time_sharded_since: epoch seconds from which every item of the key was written to the shards in
        force at its sort-key time. Default: None — no writer placing items by their time has written the key
        yet, so every window reads :attr:`readable_shards`.
    :param read_at: when this copy was read from the table, by the reader's clock (epoch seconds).
        Default: None — not read from the table.
    """

    number_of_shards: int
    last_updated: int | None
    history: tuple[tuple[int, int], ...]
    version: int | None = None
    last_updated_ms: int | None = None
    max_shards: int | None = None
    time_sharded_since: int | None = None
    read_at: float | None = field(default=None, compare=False)

    @property
    def readable_shards(self) -> int:
        """How many shards may hold data: the largest count ever used."""
        return max([self.number_of_shards, *(count for _epoch, count in self.history)])

    def count_at(self, epoch: float) -> int:
        """The shard count in force at ``epoch`` (the first count for earlier times)."""
        return _history.count_at(self.history, epoch, self.number_of_shards)

    def count_from(self, epoch: float) -> int:
        """The largest count in force at ``epoch`` or later: what a growth at ``epoch`` grows from."""
        return max(self.number_of_shards, _history.largest_from(self.history, epoch, self.number_of_shards))

    def shards_over(self, low: float, high: float) -> int:
        """How many shards (``1..n``) may hold items with sort-key times from ``low`` to ``high``.

        The largest count in force over the window; for a window that starts before ``time_sharded_since``
        (or any window, without it), also every count recorded before then: items of those times may have
        been written by their writer's clock, to the count in force when they were written.
        """
        largest = _history.largest_over(self.history, low, high, self.number_of_shards)
        if self.time_sharded_since is None:
            return self.readable_shards
        if low < self.time_sharded_since:
            largest = max(largest, _history.largest_over(self.history, -math.inf, self.time_sharded_since,
                                                         self.number_of_shards))
        return largest

    @property
    def updated_ms(self) -> int | None:
        """Epoch milliseconds of the last change (``last_updated`` * 1000 for an item written before 0.2)."""
        if self.last_updated is None:
            return None
        return self.last_updated_ms if self.last_updated_ms is not None else self.last_updated * 1000


class ShardMetadataStore:
    """Reads, checks, creates and conditionally grows the metadata items of one metadata table.

    :param table_name: the metadata table.
    :param partition_key: its partition key attribute (the main table's).
    :param dynamodb: returns the DynamoDB client for the metadata table.
    :param cooldown_seconds: the least time between two growths of one key.
    :param cache_ttl_seconds: how long ``read`` may answer from its cache.
    :param clock: returns the time in epoch seconds.
    """

    def __init__(
        self,
        table_name: str,
        *,
        partition_key: str,
        dynamodb: Callable[[], Any],
        cooldown_seconds: float,
        cache_ttl_seconds: float,
        clock: Callable[[], float],
    ) -> None:
        number("cooldown_seconds", cooldown_seconds)
        number("cache_ttl_seconds", cache_ttl_seconds)
        self.table_name = table_name
        self.partition_key = partition_key
        self.dynamodb = dynamodb
        self.cooldown_seconds = cooldown_seconds
        self.cache_ttl_seconds = cache_ttl_seconds
        self.clock = clock
        self._cache: dict[str, tuple[float, ShardInfo]] = {}
        #: per key, the latest change this writer saw: ((version, stamp ms), first seen in epoch ms by this
        #: writer's clock, whether this writer had seen the key in an earlier state)
        self._sightings: dict[str, tuple[tuple[int, int], float, bool]] = {}
        self._lock = threading.Lock()

    # ---- reading --------------------------------------------------------------------------------

    def read(self, logical: str, *, fresh: bool = False, max_age: float | None = None) -> ShardInfo:
        """The key's metadata (cached unless ``fresh``); no item means 1 shard and ``last_updated`` None.

        :param logical: the logical partition key value.
        :param fresh: read the table now (strongly consistent).
            Default: False.
        :param max_age: the oldest cached copy accepted, in seconds.
            Default: None — ``cache_ttl_seconds``.
        """
        number("max_age", max_age, optional=True)
        now = self.clock()
        limit = self.cache_ttl_seconds if max_age is None else min(max_age, self.cache_ttl_seconds)
        with self._lock:
            cached = self._cache.get(logical)
        if cached and not fresh and 0 <= now - cached[0] < limit:
            return cached[1]
        response = self.dynamodb().get_item(
            TableName=self.table_name,
            Key=to_attribute_values({self.partition_key: logical}),
            ConsistentRead=True,
        )
        info = self.parse(logical, from_attribute_values(response["Item"])) if "Item" in response else ShardInfo(
            1, None, ()
        )
        info = replace(info, read_at=now)
        with self._lock:
            self._cache[logical] = (now, info)
        self._sighted(logical, info, now * 1000)
        return info

    def _sighted(self, logical: str, info: ShardInfo, now_ms: float) -> tuple[int, float, bool]:
        """The latest change of ``logical`` this writer has seen, as ``(stamp ms, first seen ms, saw it happen)``.

        First seen is by this writer's clock; "saw it happen" when it had seen the key in an earlier state first.

        Seeing the key in an earlier state first proves the change came after that: no earlier than this first
        sight of it, whatever its stamp says. A copy older than the latest change seen (a stale cache) is
        answered with the latest change, which is the one the cooldown runs from.
        """
        change = (info.version or 0, info.updated_ms or 0)
        with self._lock:
            seen = self._sightings.get(logical)
            if seen is None or seen[0] < change:
                if len(self._sightings) > 4096:
                    self._sightings.clear()
                seen = self._sightings[logical] = (change, now_ms, seen is not None)
        return seen[0][1], seen[1], seen[2]

    def parse(self, logical: str, item: Mapping[str, Any]) -> ShardInfo:
        """A metadata item as :class:`ShardInfo`, checked: a corrupt item is an error naming key and attribute.

        A count above the cap of the writer that recorded it, or above :data:`SHARD_CEILING`, is corrupt; a
        count above *this* writer's cap is not (another fleet grew it) and is used as it is.
        """

        def whole(name: str, value: Any, low: int, high: int | None = None) -> int:
            if isinstance(value, bool) or not isinstance(value, int | Decimal) or value != int(value):
                shown = str(value) if isinstance(value, Decimal) else repr(value)
                raise CorruptShardMetadataError(f"shard metadata of {logical!r}: {name} {shown} is not a whole number")
            if int(value) < low or (high is not None and int(value) > high):
                limit = f"{low}..{high}" if high is not None else f">= {low}"
                raise CorruptShardMetadataError(f"shard metadata of {logical!r}: {name} {value} is outside {limit}")
            return int(value)

        for name in ("number_of_shards", "last_updated"):
            if name not in item:
                raise CorruptShardMetadataError(f"shard metadata of {logical!r} has no {name}")
        recorded_cap = whole("max_shards", item["max_shards"], 1, SHARD_CEILING) if "max_shards" in item else None
        count = whole("number_of_shards", item["number_of_shards"], 1, recorded_cap or SHARD_CEILING)
        updated = whole("last_updated", item["last_updated"], 0)
        history_raw = item.get("shard_history", set())
        if not isinstance(history_raw, set | frozenset | list):
            raise CorruptShardMetadataError(
                f"shard metadata of {logical!r}: shard_history {history_raw!r} is not a set"
            )
        history = []
        for entry in history_raw:
            match = re.fullmatch(r"(\d+):(\d+)", entry) if isinstance(entry, str) else None
            if not match or not 1 <= int(match.group(2)) <= SHARD_CEILING:
                raise CorruptShardMetadataError(
                    f"shard metadata of {logical!r}: shard_history entry {entry!r} is not '<epoch>:<count>' with a "
                    f"count in 1..{SHARD_CEILING}"
                )
            history.append((int(match.group(1)), int(match.group(2))))
        version = whole("version", item["version"], 1) if "version" in item else None
        updated_ms = whole("last_updated_ms", item["last_updated_ms"], 0) if "last_updated_ms" in item else None
        since = whole("time_sharded_since", item["time_sharded_since"], 0) if "time_sharded_since" in item else None
        return ShardInfo(count, updated, tuple(sorted(history)), version, updated_ms, recorded_cap, since)

    # ---- the cooldown ---------------------------------------------------------------------------

    def cooling(self, logical: str, info: ShardInfo) -> bool:
        """True while ``info`` changed less than ``cooldown_seconds`` ago (millisecond precision).

        The stamp is another writer's clock, so it is compared with this writer's clock only where that is safe:

        - a stamp ahead of this writer's first sight of the change (a writer whose clock runs ahead) counts
          from that first sight, so a fast clock elsewhere holds growth back by one cooldown at most;
        - a change this writer saw happen (it had seen the key in an earlier state) counts from its first sight
          of it, never from an older stamp: a writer whose clock runs behind stamps its growth in the past, and
          counting from that stamp would end this writer's cooldown early (at once, for a clock a cooldown
          behind). First sight is never before the change, so the cooldown is never shorter than configured;
          it is longer by how late this writer saw the change.
        - a writer that never saw the key before counts from its first sight too once the key has been grown:
          the growth's stamp may come from a clock minutes behind, and nothing tells that stamp from one of a
          growth long ago, so a new writer (a new Lambda container) waits one cooldown before it grows a grown
          key again. A key never grown counts from its stamp (its first growth waits no cooldown anyway).
        """
        if info.updated_ms is None:
            return False
        now_ms = self.clock() * 1000
        updated_ms, first_seen_ms, saw_it_happen = self._sighted(logical, info, now_ms)
        grown = info.number_of_shards > 1 or len(info.history) > 1
        since_ms = first_seen_ms if saw_it_happen or updated_ms > first_seen_ms or grown else updated_ms
        return now_ms - since_ms < self.cooldown_seconds * 1000

    def changed_within(self, logical: str, info: ShardInfo, seconds: float) -> bool:
        """True unless ``info``'s change is ``seconds`` old both by its stamp and by this writer's first sight of it.

        A shrink waits for both: a stamp from a clock behind, or a change this writer only just learned of,
        never shortens the quiet time.
        """
        number("seconds", seconds)
        if info.updated_ms is None:
            return True
        now_ms = self.clock() * 1000
        updated_ms, first_seen_ms, _saw = self._sighted(logical, info, now_ms)
        return now_ms - max(updated_ms, first_seen_ms) < seconds * 1000

    # ---- writing --------------------------------------------------------------------------------

    def ensure(self, logical: str, info: ShardInfo, *, cap: int, by_time: bool = False) -> ShardInfo:
        """The first writer of a key records it: 1 shard, history {"<epoch>:1"} (conditional put).

        :param by_time: the writer places items by their sort-key time: a new key records
            ``time_sharded_since`` at its creation, and a key without it records it first
            (:meth:`adopt_time_model`). Default: False.
        """
        whole("cap", cap, maximum=SHARD_CEILING)
        if info.last_updated is not None:
            return self.adopt_time_model(logical, info) if by_time and info.time_sharded_since is None else info
        now = self.clock()
        epoch = int(now)
        try:
            self.dynamodb().put_item(
                TableName=self.table_name,
                Item=to_attribute_values(
                    {
                        self.partition_key: logical,
                        "number_of_shards": 1,
                        "last_updated": epoch,
                        "last_updated_ms": int(now * 1000),
                        "version": 1,
                        "max_shards": cap,
                        "shard_history": {f"{epoch}:1"},
                        **({"time_sharded_since": epoch} if by_time else {}),
                    }
                ),
                ConditionExpression="attribute_not_exists(#pk)",
                ExpressionAttributeNames={"#pk": self.partition_key},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
        info = self.read(logical, fresh=True)
        return self.adopt_time_model(logical, info) if by_time and info.time_sharded_since is None else info

    def adopt_time_model(self, logical: str, info: ShardInfo) -> ShardInfo:
        """Record that items of ``logical`` from now on go to the shards in force at their own time.

        Writers before this one placed items by their clock, so an item of a time before the stamp may be on any
        shard counted before it: readers of such windows read all of those (:meth:`ShardInfo.shards_over`). The
        stamp is this writer's clock plus the clock-skew bound, so no writer's earlier item lies after it.
        """
        since = int(self.clock()) + 1 + _history.MAX_CLOCK_SKEW_SECONDS
        try:
            self.dynamodb().update_item(
                TableName=self.table_name,
                Key=to_attribute_values({self.partition_key: logical}),
                UpdateExpression="SET time_sharded_since = :since",
                ConditionExpression="attribute_exists(#pk) AND attribute_not_exists(time_sharded_since)",
                ExpressionAttributeNames={"#pk": self.partition_key},
                ExpressionAttributeValues=to_attribute_values({":since": since}),
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
        return self.read(logical, fresh=True)

    def grow(self, logical: str, current: ShardInfo, target: int, *, cap: int) -> bool:
        """Set the count to ``target`` if the item is still at ``current``'s version; True when this call did.

        The update is conditioned on the version and the stamp read (the stamp alone for an item without a
        version), so of many writers growing at once exactly one succeeds, and a decision taken on a stamp
        holds only while the stamp is still that one (a writer of 0.1 changes ``last_updated`` and no version).
        The growing writer records its ``cap``. Its stamps never go backward: a writer whose clock runs behind
        stamps just after the change it replaces, so the history stays in the order the changes happened.
        Entries after the stamp (a shrink not yet in force) are replaced, and the count is at least theirs.
        """
        whole("target", target, minimum=2, maximum=SHARD_CEILING)
        whole("cap", cap, maximum=SHARD_CEILING)
        now = self.clock()
        settled = [since for since, _count in current.history if since <= now]
        latest = max([current.last_updated or 0, *settled])
        now_ms = max(int(now * 1000), (current.updated_ms or 0) + 1, latest * 1000)
        epoch = now_ms // 1000
        target = max(target, current.count_from(epoch))
        history = current.history or ((current.last_updated or 0, current.number_of_shards),)
        return self._change(logical, current, target, _history.with_growth(history, epoch, target), now_ms, cap)

    def shrink(self, logical: str, current: ShardInfo, target: int) -> int | None:
        """Record ``target`` shards from :data:`SHRINK_NOTICE_SECONDS` on, if the item is still at ``current``.

        Returns the time the smaller count takes effect, or None when another writer changed the key first.
        Items of earlier times keep their shards; a growth before then replaces the shrink.
        """
        whole("target", target, maximum=SHARD_CEILING)
        now = self.clock()
        latest = max([current.last_updated or 0, *(since for since, _count in current.history)])
        now_ms = max(int(now * 1000), (current.updated_ms or 0) + 1)
        effective = max(math.ceil(now) + _history.SHRINK_NOTICE_SECONDS, latest + 1)
        history = _history.compacted([*current.history, (effective, target)])
        changed = self._change(logical, current, target, history, now_ms, current.max_shards or SHARD_CEILING)
        return effective if changed else None

    def _change(
        self, logical: str, current: ShardInfo, count: int, history: _history.History, now_ms: int, cap: int
    ) -> bool:
        """Store ``count`` and ``history`` if the item is still at ``current``'s version and stamp."""
        condition, seen_values = _unchanged_since(current)
        try:
            self.dynamodb().update_item(
                TableName=self.table_name,
                Key=to_attribute_values({self.partition_key: logical}),
                UpdateExpression=(
                    "SET number_of_shards = :count, last_updated = :now, last_updated_ms = :now_ms, "
                    "version = :version, max_shards = :cap, shard_history = :history"
                ),
                ConditionExpression=condition,
                ExpressionAttributeValues=to_attribute_values(
                    {
                        ":count": count,
                        ":now": now_ms // 1000,
                        ":now_ms": now_ms,
                        ":version": (current.version or 0) + 1,
                        ":cap": max(cap, count),
                        ":history": {f"{since}:{value}" for since, value in history},
                        **seen_values,
                    }
                ),
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                self.read(logical, fresh=True)
                return False
            raise
        self.read(logical, fresh=True)
        return True


def _unchanged_since(current: ShardInfo) -> tuple[str, dict[str, Any]]:
    """The condition, and its values, that the item is still at ``current``'s version and stamp."""
    if current.version is None:  # an item written before 0.2: no version yet
        return "attribute_not_exists(version) AND last_updated = :seen", {":seen": current.last_updated}
    return "version = :seen AND last_updated = :seen_updated", {
        ":seen": current.version, ":seen_updated": current.last_updated,
    }
