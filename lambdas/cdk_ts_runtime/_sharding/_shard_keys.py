"""The stored keys of a sharded table: ``{key}{separator}{n}``, checked, built, taken apart and chosen."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime._sharding.metadata import ShardMetadataStore
from cdk_ts_runtime._sharding.policy import ShardStrategy


class ShardKeys:
    """Builds and parses the stored partition keys for one ``separator``."""

    def __init__(self, separator: str) -> None:
        self.separator = separator
        self._suffix = re.compile(re.escape(separator) + r"\d+$")

    def logical(self, value: Any) -> str:
        """``value`` when it can be a logical key: a non-empty string that does not end like a shard suffix."""
        if not isinstance(value, str) or not value:
            raise ValidationError(
                f"partition key value {value!r} must be a non-empty string (shards are '{{key}}_{{n}}')"
            )
        if self._suffix.search(value):
            raise ValidationError(
                f"partition key value {value!r} ends like a shard suffix ({self.separator}<digits>), which would make "
                f"its shards ambiguous; pass another separator=, e.g. '#'"
            )
        return value

    def physical(self, logical: str, shard: int) -> str:
        """The stored partition key of shard ``shard`` (1-based) of ``logical``."""
        whole("shard", shard)
        return f"{logical}{self.separator}{shard}"

    def strip(self, physical: str) -> str:
        """``physical`` without its shard suffix."""
        return self._suffix.sub("", physical)

    def number(self, physical: str) -> int:
        """The shard number of a stored partition key (``{key}_{n}`` → n)."""
        match = self._suffix.search(physical)
        if match is None:
            raise ValidationError(f"{physical!r} has no shard suffix {self.separator}<digits>")
        return int(match.group(0)[len(self.separator):])


def pick_shard(
    strategy: ShardStrategy, rng: random.Random, logical: str, sort_value: Any, count: int, avoid: int | None = None
) -> int:
    """The shard (1-based, of ``count``) a write of ``logical`` at ``sort_value`` goes to.

    ``computed``: ``md5(key + sort key) % count + 1``. ``random``: uniform, never ``avoid`` (the shard a
    retry was just throttled on) when there is another.
    """
    if strategy is ShardStrategy.COMPUTED:
        digest = hashlib.md5(f"{logical}{sort_value}".encode(), usedforsecurity=False).hexdigest()
        return int(digest, 16) % count + 1
    if avoid is not None and count > 1:
        shard = rng.randint(1, count - 1)
        return shard + 1 if shard >= avoid else shard
    return rng.randint(1, count)


@dataclass(frozen=True, kw_only=True)
class ShardNames:
    """What names a sharded table's items: the table, its two key attributes, the strategy and the shard keys."""

    table_name: str
    partition_key: str
    sort_key: str
    strategy: ShardStrategy
    keys: ShardKeys
    sort_key_time_unit: str | None

    def key_of(self, logical: str, shard: int, sort_value: Any) -> dict[str, Any]:
        """The item key of ``logical``'s shard ``shard`` at ``sort_value``, as plain values."""
        return {self.partition_key: self.keys.physical(logical, shard), self.sort_key: sort_value}


@dataclass(frozen=True, kw_only=True)
class ShardAccess:
    """What every part of a sharded table starts from: its names, a client (created on first use), the metadata."""

    names: ShardNames
    dynamodb: Callable[[], Any]
    metadata: ShardMetadataStore
