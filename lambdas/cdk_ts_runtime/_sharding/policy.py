"""How a hot key's shards are chosen and how many it grows to: the strategy and growth enums, and the sizing."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Literal

from cdk_ts_runtime._inputs import number, whole


class ShardStrategy(StrEnum):
    """How a writer picks the shard of a hot key."""

    #: Uniformly at random: the even spread; reads query every shard.
    RANDOM = "random"
    #: ``md5(key + sort key) % N + 1``: a point read touches one shard.
    COMPUTED = "computed"


class ShardGrowth(StrEnum):
    """How a throttled key's shard count grows to the count its observed throttling implies."""

    #: Grow to exactly the count needed, in steps of one (at least one more shard per growth).
    INCREMENT = "increment"
    #: Grow to the next doubling that covers the need (at least twice the count): fewer distinct counts,
    #: so a ``computed`` point read more often finds an item at the current count.
    DOUBLE = "double"


STRATEGIES = tuple(s.value for s in ShardStrategy)
GROWTH_POLICIES = tuple(g.value for g in ShardGrowth)
#: The strategy and growth names as plain strings (what ``CDK_TS_SHARDING_STRATEGY`` holds).
StrategyName = Literal["random", "computed"]
GrowthName = Literal["increment", "double"]

#: No writer may grow a key past this many shards, and a stored count above it is corrupt whatever any
#: writer's ``max_shards``: every read fans out over every shard, 100 keys per BatchGetItem.
SHARD_CEILING = 1024
#: Grow to this much more than the observed load needs, so the next burst is not throttled at once.
GROWTH_HEADROOM = 1.25
#: One growth multiplies the count by at most this much (headroom included): a throttled share near 100 %
#: says the load is many times what the shards take, not how many, and near it the estimate is noisiest
#: (the need is ``1 / (1 - share)``); a load beyond 16x grows again after the next cooldown.
MAX_GROWTH_FACTOR = 16


#: Below this share of writes not taken, a key is not grown: the shards take the load. A key that is not
#: full still sees a few percent of throttles, from bursts on shards picked at random and from writes that
#: are waiting out a throttle when the share is read (measured through the rules proxy: 3% at 16 shards
#: taking 60% of their limit), and doubling on those would double the read fan-out for nothing.
MIN_THROTTLED_SHARE = 0.05


def shards_needed(
    count: int,
    throttled_share: float | None,
    *,
    growth: ShardGrowth,
    cap: int,
    headroom: float = GROWTH_HEADROOM,
) -> int:
    """The shard count a key needs when ``throttled_share`` of its writes at ``count`` shards were throttled.

    The shards accepted ``1 - share`` of the offered writes, so the load is ``count / (1 - share)`` shards'
    worth; with ``headroom`` and rounded up to the growth policy, capped by ``cap`` (never below ``count``).

    :param count: the shard count the writes were made at.
    :param throttled_share: the share of the writes offered at ``count`` that were not taken, 0..1; below
        :data:`MIN_THROTTLED_SHARE` the count stays. None: not enough writes seen to tell, so the policy's
        smallest step (one more, or double).
    :param growth: the growth policy that rounds the need.
    :param cap: the most shards the growing writer allows.
    :param headroom: how much more than the observed need to grow to.
        Default: :data:`GROWTH_HEADROOM`.
    """
    whole("count", count, maximum=SHARD_CEILING)
    number("throttled_share", throttled_share, maximum=1, optional=True)
    whole("cap", cap, maximum=SHARD_CEILING)
    number("headroom", headroom, minimum=1)
    if throttled_share is None:
        need = float(count + 1)
    elif throttled_share < MIN_THROTTLED_SHARE:
        return count  # the key took what was offered at this count: the throttle was a backlog draining
    else:
        share = min(max(throttled_share, 0.0), 1 - 1 / MAX_GROWTH_FACTOR)
        need = count * headroom / (1 - share)
    need = min(need, count * MAX_GROWTH_FACTOR)
    if growth is ShardGrowth.DOUBLE:
        target = count * 2
        while target < need:
            target *= 2
    else:
        target = max(count + 1, math.ceil(need - 1e-9))
    return max(count, min(cap, target))
