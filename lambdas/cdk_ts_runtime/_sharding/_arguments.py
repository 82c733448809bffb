"""The checks of ``ShardedTable``'s arguments: every refusal names the parameter and what it may be."""

from __future__ import annotations

from typing import Any

from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import number, whole
from cdk_ts_runtime._sharding import policy
from cdk_ts_runtime._sharding._shrink import ShardShrink
from cdk_ts_runtime._sharding._time import TIME_UNITS


def check_names(**names: str) -> None:
    """Refuse an empty table or key name."""
    for name, value in names.items():
        if not value:
            raise ValidationError(f"{name} must not be empty")


def check_settings(
    *, strategy: Any, growth: Any, max_shards: Any, cooldown_seconds: Any, max_attempts: Any, cache_ttl_seconds: Any,
    max_backoff_seconds: Any, table_headroom: Any, max_workers: Any, separator: Any, sort_key_time_unit: Any,
    shrink: Any = None,
) -> None:
    """Refuse a strategy, growth, limit, separator or time unit a sharded writer cannot work with."""
    if strategy not in policy.STRATEGIES:
        raise ValidationError(f"strategy {strategy!r} is not one of {', '.join(policy.STRATEGIES)}")
    if growth not in policy.GROWTH_POLICIES:
        raise ValidationError(f"growth {growth!r} is not one of {', '.join(policy.GROWTH_POLICIES)}")
    ceiling = policy.SHARD_CEILING
    if isinstance(max_shards, bool) or not isinstance(max_shards, int) or not 1 <= max_shards <= ceiling:
        raise ValidationError(f"max_shards {max_shards!r} must be a whole number >= 1 and <= {ceiling}")
    number("cooldown_seconds", cooldown_seconds, minimum=1,
           hint="a shorter cooldown lets one burst of throttles grow a key several times")
    whole("max_attempts", max_attempts)
    number("cache_ttl_seconds", cache_ttl_seconds)
    number("max_backoff_seconds", max_backoff_seconds)
    number("table_headroom", table_headroom, minimum=0, maximum=1, above=True)
    whole("max_workers", max_workers)
    if not separator or separator.isdigit():
        raise ValidationError(f"separator {separator!r} must be non-empty and not a digit")
    if sort_key_time_unit not in (None, *TIME_UNITS):
        raise ValidationError(f"sort_key_time_unit {sort_key_time_unit!r} must be 's', 'ms', 'iso' or None")
    if shrink is not None:
        _check_shrink(shrink, sort_key_time_unit, cooldown_seconds)


def _check_shrink(shrink: Any, sort_key_time_unit: Any, cooldown_seconds: Any) -> None:
    """Refuse a shrink setting the table cannot honour: keys shrink by time, never inside a growth's cooldown."""
    if not isinstance(shrink, ShardShrink):
        raise ValidationError(f"shrink {shrink!r} must be a ShardShrink(...) or None")
    if sort_key_time_unit is None:
        raise ValidationError(
            "shrink needs sort_key_time_unit ('s', 'ms' or 'iso'): a smaller count applies to items from a time on, "
            "so the sort key must be that time"
        )
    if shrink.quiet_seconds < cooldown_seconds:
        raise ValidationError(
            f"shrink quiet_seconds {shrink.quiet_seconds!r} is shorter than cooldown_seconds {cooldown_seconds!r}; "
            f"a key never shrinks inside a growth's cooldown: give quiet_seconds >= {cooldown_seconds!r}"
        )
