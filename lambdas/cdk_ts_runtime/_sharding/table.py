"""ShardedTable: writes a hot key's items over ``{key}_{n}`` shards and reads them back from every shard."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from cdk_ts_runtime import _environment, _retries
from cdk_ts_runtime._aws import LazyClient, client_property
from cdk_ts_runtime._emf import MetricsSink
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._sharding import policy
from cdk_ts_runtime._sharding._arguments import check_names, check_settings
from cdk_ts_runtime._sharding._growth import KeyGrowth, grow_key
from cdk_ts_runtime._sharding._reads import READ_RETRIES, ShardReader, ShardReadError, point_read, query_shards
from cdk_ts_runtime._sharding._shard_keys import ShardKeys, ShardNames
from cdk_ts_runtime._sharding._shrink import KeyShrink, ShardShrink, ShrinkWatch
from cdk_ts_runtime._sharding._writes import WRITE_RETRIES, ShardWriter, write_item
from cdk_ts_runtime._sharding.metadata import ShardInfo, ShardMetadataStore
from cdk_ts_runtime._sharding.policy import GrowthName, ShardGrowth, ShardStrategy, StrategyName
from cdk_ts_runtime._sharding.throttles import CloudWatchScope, ThrottleWindow

ENV_TABLE = _environment.SHARDED_TABLE_NAME
ENV_METADATA_TABLE = _environment.SHARD_METADATA_TABLE_NAME
ENV_PARTITION_KEY = _environment.SHARDED_PARTITION_KEY
ENV_SORT_KEY = _environment.SHARDED_SORT_KEY
ENV_STRATEGY = _environment.SHARDING_STRATEGY

__all__ = ["ShardReadError", "ShardedTable"]


class ShardedTable:
    """Writer and reader for a table whose hot partition keys are spread over numbered shards.

    ``strategy=ShardStrategy.RANDOM`` picks a shard uniformly; ``COMPUTED`` uses ``md5(key + sort key) % N + 1``
    so a point read touches one shard. When DynamoDB throttles one partition of a key
    (``TableWriteKeyRangeThroughputExceeded``), the writer grows the key in one step to the count the share
    of its recent writes throttled implies (``growth`` rounds it: doubling by default), at most once per
    cooldown and only if no other writer grew it first; meanwhile it moves the write to another shard.
    The count in the metadata table is what every writer and reader uses, whatever its own ``max_shards``.

    :param table_name: the main table's name.
    :param metadata_table_name: the metadata table's name (see ``ShardMetadataTable``).
    :param partition_key: the main table's partition key attribute (a String).
    :param sort_key: the main table's sort key attribute.
    :param strategy: ``ShardStrategy.RANDOM`` (uniform) or ``ShardStrategy.COMPUTED`` (``md5(key + sort
        key) % N + 1``, so a point read touches one shard); their values ``"random"``/``"computed"`` work
        too. Default: ``ShardStrategy.RANDOM``.
    :param cooldown_seconds: the least time between two growths of one key, and after a key is recorded
        before its first growth, unless the writer has measured the new key's throttling for a second
        (``ThrottleWindow.saturated_share``) first. Default: 10.
    :param max_shards: the most shards this writer grows a key to (at most 1024). A key another fleet
        grew further is still written to and read from every stored shard.
        Default: 64.
    :param growth: how the needed count is rounded, ``ShardGrowth.DOUBLE`` to the next doubling,
        ``ShardGrowth.INCREMENT`` to the exact count (or their values).
        Default: ``ShardGrowth.DOUBLE``.
    :param separator: what joins a key and its shard number; a value that ends with it and digits is
        refused. Default: ``"_"`` — shards are ``{key}_{n}``.
    :param cache_ttl_seconds: how long a key's metadata is cached for writes (after a partition
        throttle, one second at most). Default: 5.
    :param max_backoff_seconds: the longest random wait before a growth and between retries.
        Default: 2.0.
    :param max_attempts: write attempts (requests, with ``dynamodb_client`` as the library creates it)
        before a throttle is raised (as :class:`~cdk_ts_runtime.ThrottledError`). Default: 10.
    :param sort_key_time_unit: ``"s"`` or ``"ms"`` when the sort key is an epoch time, ``"iso"`` when it is
        ISO 8601 text (one format, UTC). Then the shard set is a function of the item's time: a write goes to
        the shards in force at its sort-key time in ``shard_history`` (a late item where readers of its window
        look), a query with a bounded sort-key condition reads only the shards in force over its window, and a
        point read one set. Every writer and reader of a key must give the same value. Default: None — the sort
        key is not a time: writes use the current count and queries read every shard the key ever had.
    :param shrink: a :class:`~cdk_ts_runtime.ShardShrink`: when and how far a cooled key gives shards back
        (needs ``sort_key_time_unit``). Turn it on only once every writer of the table runs this version.
        Default: None — keys never shrink.
    :param table_headroom: without throttling reasons, a table consuming less than this share (above 0, at
        most 1) of its provisioned WCU is taken to have one hot partition. Default: 0.8.
    :param on_table_throttle: called with the table name when a throttle is the table's, the account's or an
        index's, not one partition's of the base table (more shards would not help). Default: None — such
        throttles are only backed off and retried.
    :param metrics: takes a ``cdk_ts_runtime.MetricPoint`` for every growth (``ShardGrowths``, with the
        key, the counts from and to, and the throttled share), every throttle (``Throttles``, dimension
        ``ThrottleScope``: partition, index, table or unknown) and every write given up (``RefusedWrites``);
        all carry the ``TableName`` dimension. Pass ``cdk_ts_runtime.EmfWriter("MyApp/Writers")`` for
        EMF lines on stdout (Lambda, or any log shipper that reads EMF), or a callable of your own. A sink
        that raises is logged, never the write's failure.
        Default: None — growths and throttles are only logged.
    :param dynamodb_client: the boto3 DynamoDB client for writes to the main table, used as given (and
        for reads too unless ``dynamodb_read_client`` is given). The writer expects
        ``Config(retries={"mode": "standard", "total_max_attempts": 1})`` on it: with more SDK attempts each
        throttled write first waits out the SDK's backoff on the hot shard before it can move or grow.
        Default: None — one is created on first use with 1 attempt.
    :param dynamodb_read_client: the boto3 DynamoDB client for queries, point reads and the metadata
        table, used as given; it should keep the SDK's ``standard`` retries (nothing of ours retries a
        throttled Query). Default: None — ``dynamodb_client`` if given, else one created on first use with
        ``standard`` retries, 3 attempts.
    :param cloudwatch_client: the boto3 CloudWatch client for the no-reasons fallback.
        Default: None — one is created on first use (short timeouts, 2 attempts).
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
        shrink: ShardShrink | None = None,
        table_headroom: float = 0.8,
        on_table_throttle: Callable[[str], None] | None = None,
        metrics: MetricsSink | None = None,
        dynamodb_client=None,
        dynamodb_read_client=None,
        cloudwatch_client=None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_workers: int = 16,
    ) -> None:
        """Describe the sharded table and its metadata table (see the class for the parameters)."""
        check_names(table_name=table_name, metadata_table_name=metadata_table_name, partition_key=partition_key,
                    sort_key=sort_key)
        check_settings(
            strategy=strategy, growth=growth, max_shards=max_shards, cooldown_seconds=cooldown_seconds,
            max_attempts=max_attempts, cache_ttl_seconds=cache_ttl_seconds, max_backoff_seconds=max_backoff_seconds,
            table_headroom=table_headroom, max_workers=max_workers, separator=separator,
            sort_key_time_unit=sort_key_time_unit, shrink=shrink,
        )
        self.table_name = table_name
        self.metadata_table_name = metadata_table_name
        self.partition_key = partition_key
        self.sort_key = sort_key
        self.strategy = ShardStrategy(strategy)
        self.cooldown_seconds = cooldown_seconds
        self.max_shards = max_shards
        self.growth = ShardGrowth(growth)
        self.separator = separator
        self._keys = ShardKeys(separator)
        self.cache_ttl_seconds = cache_ttl_seconds
        self.max_attempts = max_attempts
        self.sort_key_time_unit = sort_key_time_unit
        self.shrink = shrink
        self.on_table_throttle = on_table_throttle
        self.metrics = metrics
        self._write_client = LazyClient("dynamodb", dynamodb_client, config=_retries.WRITE_PATH)
        self._read_client = LazyClient("dynamodb", dynamodb_read_client or dynamodb_client, config=_retries.DATA_PATH)
        self._cloudwatch = LazyClient("cloudwatch", cloudwatch_client, config=_retries.METRICS)
        self.clock = clock
        self.rng = rng or random.Random()
        self.sleep = sleep
        self.max_workers = max_workers
        self.metadata = ShardMetadataStore(
            metadata_table_name,
            partition_key=partition_key,
            dynamodb=self._read_client.get,
            cooldown_seconds=cooldown_seconds,
            cache_ttl_seconds=cache_ttl_seconds,
            clock=self._now,
        )
        # The share is measured over the last cooldown: the span between two growths of a key.
        self.throttles = ThrottleWindow(cooldown_seconds, self._now)
        self.shrink_watch = ShrinkWatch(self._now)
        self._cloudwatch_scope = CloudWatchScope(table_name, self._cloudwatch.get, self._now, table_headroom)
        self._growth, self._reader, self._writer = _parts(self, max_attempts, max_backoff_seconds)

    def _sleep(self, seconds: float) -> None:
        self.sleep(seconds)  # read through, as the clock is

    def _now(self) -> float:
        return self.clock()  # read through, so tests that swap ``clock`` move every part

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> ShardedTable:
        """The client ``ShardMetadataTable.bind`` configured through environment variables.

        :param env: the environment, usually ``os.environ``. A name before 0.3 (``SHARDED_TABLE_NAME``, ...)
            set without the new one is refused, naming the new one.
        :param kwargs: further constructor arguments (``max_shards``, ``growth``, ...).
        :raises EnvironmentVariableMissingError: (a ``KeyError``) when a table or key variable is not set.
        """
        names = (ENV_TABLE, ENV_METADATA_TABLE, ENV_PARTITION_KEY, ENV_SORT_KEY)
        env = _environment.required(env, names, "use ShardMetadataTable.bind", optional=(ENV_STRATEGY,))
        strategy = env.get(ENV_STRATEGY, ShardStrategy.RANDOM)
        if strategy not in policy.STRATEGIES:
            raise ValidationError(
                f"environment variable {ENV_STRATEGY}={strategy!r} is not one of {', '.join(policy.STRATEGIES)}"
            )
        return cls(
            env[ENV_TABLE],
            env[ENV_METADATA_TABLE],
            partition_key=env[ENV_PARTITION_KEY],
            sort_key=env[ENV_SORT_KEY],
            strategy=strategy,
            **kwargs,
        )

    dynamodb = client_property(
        "_write_client",
        "The DynamoDB client of writes to the main table (created on first use).",
    )

    read_dynamodb = client_property(
        "_read_client",
        "The DynamoDB client of reads and of the metadata table (created on first use).",
    )

    cloudwatch = client_property(
        "_cloudwatch",
        "The CloudWatch client for the no-reasons fallback (created on first use).",
    )

    # ---- keys -----------------------------------------------------------------------------------

    def _logical(self, value: Any) -> str:
        return self._keys.logical(value)

    def physical_key(self, logical: str, shard: int) -> str:
        """The stored partition key of shard ``shard`` (1-based) of ``logical``."""
        return self._keys.physical(logical, shard)

    def logical_key(self, physical: str) -> str:
        """Strip the shard suffix from a stored partition key."""
        return self._keys.strip(physical)

    def shard_number(self, physical: str) -> int:
        """The shard number of a stored partition key (``{key}_{n}`` → n)."""
        return self._keys.number(physical)

    # ---- metadata -------------------------------------------------------------------------------

    def shard_info(self, logical_value: str, *, fresh: bool = False) -> ShardInfo:
        """The key's metadata (cached for ``cache_ttl_seconds`` unless ``fresh``); no item means 1 shard.

        :param logical_value: the logical partition key value.
        :param fresh: read the metadata table now (strongly consistent).
            Default: False — a cached value younger than ``cache_ttl_seconds`` is used.
        """
        return self.metadata.read(self._logical(logical_value), fresh=fresh)

    def shard_count(self, logical_value: str) -> int:
        """How many shards writers of ``logical_value`` use now (a shrink not yet in force is not counted)."""
        return self.shard_info(logical_value, fresh=True).count_from(self.clock())

    def grow(self, logical_value: str, seen: ShardInfo, *, target: int | None = None) -> bool:
        """Grow the key after the cooldown and a random backoff, if nobody else did; True when this call grew it.

        :param logical_value: the logical key.
        :param seen: the metadata the caller wrote at; if the key changed since, another writer grew it.
        :param target: the count to grow to.
            Default: None — sized from the share of this writer's recent writes at ``seen``'s count that were
            not taken (see ``growth``), capped by ``max_shards``.
        """
        return grow_key(self._growth, self._logical(logical_value), seen, target)

    # ---- writes ---------------------------------------------------------------------------------

    def put_item(self, item: Mapping[str, Any]) -> str:
        """Write ``item`` (logical key in ``partition_key``) to one of its shards; returns the stored key.

        With ``sort_key_time_unit``, the shard is one of those in force at the item's sort-key time. A partition
        throttle grows the key (see :meth:`grow`) and the write moves to another shard after a short jittered
        wait; table-level, account and index throttles only back off and retry (and call ``on_table_throttle``).
        Both DynamoDB shapes count: ``ThrottlingException`` with ``throttlingReasons``
        (on-demand tables) and ``ProvisionedThroughputExceededException`` with ``ThrottlingReasons``.

        :raises cdk_ts_runtime.ThrottledError: still throttled after ``max_attempts`` (a
            ``ClientError``, with ``throttle`` naming what was exhausted).
        """
        return write_item(self._writer, item)

    # ---- reads ----------------------------------------------------------------------------------

    def query(self, logical_value: str, **sort_condition: Any) -> list[dict[str, Any]]:
        """Every item of ``logical_value`` matching one sort-key condition, in sort-key order.

        With ``sort_key_time_unit``, a condition that bounds time reads only the shards in force over its window
        (``begins_with`` bounds it when its text is a whole ISO year, month, day, hour, minute or second); with
        none, or no bound, every shard the key ever had is read.

        Conditions: ``eq``, ``lt``, ``lte``, ``gt``, ``gte``, ``begins_with`` or ``between=(low, high)``;
        none means every item of the key.
        """
        return query_shards(self._reader, self._logical(logical_value), sort_condition)

    def get_item(self, logical_value: str, sort_value: Any) -> dict[str, Any] | None:
        """One item by logical key: one shard under ``computed`` (the rest only as a fallback), all under ``random``.

        :raises ShardReadError: when shards stay in ``UnprocessedKeys`` after ``max_attempts`` BatchGetItem calls.
        :raises botocore.exceptions.ClientError: ``ProvisionedThroughputExceededException`` (provisioned) or
            ``ThrottlingException`` (on-demand) when DynamoDB refuses a whole BatchGetItem (every key left is
            throttled) after the read client's own retries.
        """
        return point_read(self._reader, self._logical(logical_value), sort_value)


def _parts(
    table: ShardedTable, max_attempts: int, max_backoff_seconds: float
) -> tuple[KeyGrowth, ShardReader, ShardWriter]:
    """The reader, the writer and the growth, each given what it uses of this table and no more."""
    names = ShardNames(
        table_name=table.table_name, partition_key=table.partition_key, sort_key=table.sort_key,
        strategy=table.strategy, keys=table._keys, sort_key_time_unit=table.sort_key_time_unit,
    )
    growth = KeyGrowth(
        table_name=table.table_name, metadata=table.metadata, throttles=table.throttles, clock=table._now,
        max_shards=table.max_shards, growth=table.growth, metrics=table.metrics,
        spread=lambda: table._sleep(table.rng.random() * max_backoff_seconds),
    )
    reader = ShardReader(
        names=names, dynamodb=table._read_client.get, metadata=table.metadata, rng=table.rng, sleep=table._sleep,
        retries=replace(READ_RETRIES, max_attempts=max_attempts, cap_seconds=max_backoff_seconds),
        max_workers=table.max_workers, metrics=table.metrics,
    )
    shrink = None if table.shrink is None else KeyShrink(
        names=names, dynamodb=table._read_client.get, metadata=table.metadata, settings=table.shrink,
        watch=table.shrink_watch, clock=table._now, growth=table.growth, metrics=table.metrics,
    )
    writer = ShardWriter(
        names=names, dynamodb=table._write_client.get, metadata=table.metadata, max_shards=table.max_shards,
        retries=replace(WRITE_RETRIES, max_attempts=max_attempts, cap_seconds=max_backoff_seconds),
        rng=table.rng, sleep=table._sleep, clock=table._now, metrics=table.metrics, throttles=table.throttles,
        growth=growth, cloudwatch_scope=table._cloudwatch_scope, on_table_throttle=table.on_table_throttle,
        shrink_watch=table.shrink_watch, shrink=shrink,
    )
    return growth, reader, writer
