"""Every ``RulesSettings`` value checked before a proxy starts or takes it: a harness that silently never throttles
(a NaN rate, a negative window, a string where a number goes) is worse than none.

``RulesSettings.updated`` calls :func:`problems` for every way settings arrive: keywords of ``local_dynamodb`` or
``start_rules_proxy``, ``configure(...)`` on a running proxy, and ``cdk-ts local --set NAME=VALUE``.
"""

from __future__ import annotations

import math
from datetime import datetime

from cdk_ts_runtime._errors import ValidationError

#: Settings that must be a number greater than zero (a rate, a size, a factor): zero would mean no throughput at all,
#: or a window of nothing that DynamoDB has.
POSITIVE = frozenset({
    "write_units_per_second", "read_units_per_second", "on_demand_peak_factor", "on_demand_peak_window_seconds",
    "table_write_units_quota", "table_read_units_quota",
})
#: Settings that must be a whole number of at least one (a count of operations DynamoDB allows).
AT_LEAST_ONE = frozenset({"control_plane_limit", "control_plane_limit_with_indexes"})
#: Optional numbers: None, or a number greater than zero.
OPTIONAL_POSITIVE = frozenset({"on_demand_write_units", "on_demand_read_units"})
#: The largest number any setting takes: a year of seconds and far more units than any table serves; past it the
#: value is a typo, and arithmetic on the clock would overflow.
LARGEST = 1e12


def _number_problem(name: str, value: object, *, whole: bool, minimum: float, strict: bool) -> str | None:
    kind = "a whole number" if whole else "a number"
    bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        return f"{name}={value!r} ({type(value).__name__}): must be {kind} {bound}"
    if not math.isfinite(value):
        return f"{name}={value!r}: must be a finite number {bound}"
    if value < minimum or (strict and value == minimum):
        return f"{name}={value!r}: must be {bound}"
    if value > LARGEST:
        return f"{name}={value!r}: must be at most {LARGEST:g}"
    return None


def problems(values: dict[str, object], defaults: dict[str, object]) -> list[str]:
    """What is wrong with ``values`` (setting name -> value), judged by each setting's default's type."""
    found = []
    for name, value in values.items():
        default = defaults[name]
        if isinstance(default, bool):
            if not isinstance(value, bool):
                found.append(f"{name}={value!r} ({type(value).__name__}): must be true or false")
        elif isinstance(default, list):
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                found.append(f"{name}={value!r}: must be a list of rule names")
        elif name in OPTIONAL_POSITIVE:
            if value is not None:
                found.append(_number_problem(name, value, whole=False, minimum=0, strict=True) or "")
        elif isinstance(default, int | float):
            found.append(_number_problem(
                name, value, whole=isinstance(default, int), minimum=1 if name in AT_LEAST_ONE else 0,
                strict=name in POSITIVE) or "")
    return [problem for problem in found if problem]


def aware_time(name: str, value: object) -> datetime:
    """``value`` if it is an aware datetime; a ValidationError naming ``name`` otherwise."""
    if not isinstance(value, datetime):
        raise ValidationError(f"{name} must be an aware datetime, e.g. datetime(2026, 3, 10, tzinfo=UTC), "
                         f"not {type(value).__name__} {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(f"{name}={value.isoformat()} has no time zone: give an aware datetime, e.g. "
                         f"datetime(2026, 3, 10, tzinfo=UTC)")
    return value
