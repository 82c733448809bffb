"""Dynamic write sharding: spread a hot partition key over ``{key}_{n}`` shards, and grow only when it pays.

A metadata table holds, per logical key, the shard count every writer and reader uses (see
:mod:`cdk_ts_runtime._sharding.metadata`). Writers add shards only when DynamoDB says the *partition* is the
bottleneck (a ``...KeyRangeThroughputExceeded`` throttling reason, :mod:`cdk_ts_runtime._sharding.throttles`),
grow in one step to the count the throttled share of their recent writes implies
(:mod:`cdk_ts_runtime._sharding.policy`), after a cooldown, through a conditional update on the version they
read, so many writers hitting the same limit grow the key once. Readers fan out over every shard that ever
existed (the largest count in the history), so a stale cache never hides items; when the sort key is a time
(``sort_key_time_unit``), the shard set is a function of the item's time: writes go to the set in force at the
item's time, reads of a window touch only the sets in force over it, and a cooled key may shrink
(:mod:`cdk_ts_runtime._sharding._history`, ``_time``, ``_shrink``).

Modules: ``policy`` (strategy and growth enums, sizing), ``throttles`` (which throttles more shards cure,
the observed share), ``metadata`` (the metadata item: read, check, create, grow), ``table``
(:class:`ShardedTable`, the read/write client). Everything is importable from here.
"""

from __future__ import annotations

from cdk_ts_runtime._sharding._shrink import ShardShrink
from cdk_ts_runtime._sharding.metadata import CorruptShardMetadataError, ShardInfo, ShardMetadataStore
from cdk_ts_runtime._sharding.policy import (
    GROWTH_HEADROOM,
    GROWTH_POLICIES,
    MIN_THROTTLED_SHARE,
    SHARD_CEILING,
    STRATEGIES,
    GrowthName,
    ShardGrowth,
    ShardStrategy,
    StrategyName,
    shards_needed,
)
from cdk_ts_runtime._sharding.table import (
    ENV_METADATA_TABLE,
    ENV_PARTITION_KEY,
    ENV_SORT_KEY,
    ENV_STRATEGY,
    ENV_TABLE,
    ShardedTable,
    ShardReadError,
)
from cdk_ts_runtime._sharding.throttles import CloudWatchScope, ThrottleScope, ThrottleWindow, throttle_scope

__all__ = [
    "ENV_METADATA_TABLE",
    "ENV_PARTITION_KEY",
    "ENV_SORT_KEY",
    "ENV_STRATEGY",
    "ENV_TABLE",
    "GROWTH_HEADROOM",
    "GROWTH_POLICIES",
    "MIN_THROTTLED_SHARE",
    "SHARD_CEILING",
    "STRATEGIES",
    "CloudWatchScope",
    "CorruptShardMetadataError",
    "GrowthName",
    "ShardGrowth",
    "ShardInfo",
    "ShardMetadataStore",
    "ShardReadError",
    "ShardShrink",
    "ShardStrategy",
    "ShardedTable",
    "StrategyName",
    "ThrottleScope",
    "ThrottleWindow",
    "shards_needed",
    "throttle_scope",
]
