"""Configuration of the rotation function: capacity tiers, table options, retention, schedule lead.

The construct serialises a :class:`RotationConfig` to JSON in one environment variable
(:data:`ENV_ROTATION_CONFIG`); the key schema and prefix travel separately as a
:class:`~cdk_ts_runtime.TableLayout`.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from types import MethodType
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypedDict, TypeVar, cast, overload

from cdk_ts_runtime import _deprecations, _environment
from cdk_ts_runtime._errors import UnknownKeywordError, ValidationError
from cdk_ts_runtime._inputs import json_object_env, number, whole
from cdk_ts_runtime._keywords import unknown_keyword

#: What a new on-demand table serves at once (its warm throughput at creation), reads and writes per second.
NEW_ON_DEMAND_WARM_READS = 12000
NEW_ON_DEMAND_WARM_WRITES = 4000

ENV_ROTATION_CONFIG = _environment.ROTATION_CONFIG
#: The longest create lead (and wait) that means something: a yearly period's 366 days.
MAX_LEAD_SECONDS = 366 * 86_400
#: What one rotation run may be asked to do (the scheduled rules' ``operation``). Here, not in ``rotator``, so the
#: construct side (rule descriptions) reads it without importing the run's code, botocore's client config with it.
OPERATIONS = ("create_new", "resize_old", "reconcile")
STREAM_VIEW_TYPES = ("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES")


@dataclass(frozen=True)
class AutoScaling:
    """Target tracking for a tier: capacity floats between the tier's units and ``max_*``.

    :param target_utilization: the consumed/provisioned percentage the scaler aims for (20-90).
        Default: 70.0.
    :param max_read_capacity: the most RCU the scaler may provision (>= the tier's RCU).
        Default: 3000.
    :param max_write_capacity: the most WCU the scaler may provision (>= the tier's WCU).
        Default: 4000.
    :raises ValueError: for a target outside 20-90 percent.
    """

    target_utilization: float = 70.0
    max_read_capacity: int = 3000
    max_write_capacity: int = 4000

    def __post_init__(self) -> None:
        for name in ("max_read_capacity", "max_write_capacity"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValidationError(f"{name} {value!r} must be a whole number >= 1")
        utilization = self.target_utilization
        if not isinstance(utilization, int | float) or isinstance(utilization, bool):
            raise ValidationError(f"target_utilization {utilization!r} must be a number of percent")
        if not 20 <= self.target_utilization <= 90:
            raise ValidationError(
                f"target_utilization {self.target_utilization} is outside 20-90 percent (DynamoDB auto scaling range)"
            )


TABLE_CLASSES = ("STANDARD", "STANDARD_INFREQUENT_ACCESS")


class TableClassEnum(Protocol):
    """An enum member whose value is a table class name: ``aws_cdk.aws_dynamodb.TableClass`` is one."""

    @property
    def value(self) -> str:
        """The table class name, e.g. ``"STANDARD"``."""
        ...


def table_class_name(value: str | TableClassEnum, *, label: str = "table_class") -> str:
    """The one stored form of a table class: DynamoDB's name (``"STANDARD"``), from the name or the CDK enum.

    The runtime reads ``.value`` instead of importing ``aws_cdk``, so constructs and tiers take either form.

    :param value: ``"STANDARD"``, ``"STANDARD_INFREQUENT_ACCESS"`` or an enum member with that value.
    :param label: the name the error message gives the value.
        Default: ``"table_class"``.
    :raises ValueError: for anything else, naming the value and the valid names.
    """
    name = value if isinstance(value, str) else getattr(value, "value", None)
    if not isinstance(name, str) or name not in TABLE_CLASSES:
        raise ValidationError(
            f"{label} {value!r} is not one of {', '.join(TABLE_CLASSES)} (a name or aws_dynamodb.TableClass)"
        )
    return str(name)


def _whole(name: str, value: Any, *, optional: bool = True, low: int = 1) -> None:
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValidationError(f"{name} {value!r} must be a whole number >= {low}")


@dataclass(frozen=True)
class RightSizing:
    """Size the next period's table from the current one's observed peak (CloudWatch consumed capacity).

    The peak is the largest per-minute Sum of ``ConsumedReadCapacityUnits`` / ``ConsumedWriteCapacityUnits``
    over the current period, divided by 60. The next table gets ``peak × headroom`` bounded by ``floor`` and
    ``ceiling``: provisioned units for a provisioned tier, warm throughput for an on-demand tier.

    :param headroom: multiplier above the observed peak (>= 1).
        Default: 1.3.
    :param floor: the fewest units per second chosen.
        Default: 1.
    :param ceiling: the most units per second chosen.
        Default: 40000 — DynamoDB's default per-table throughput quota.
    :raises ValueError: for a headroom below 1, or a floor above the ceiling.
    """

    headroom: float = 1.3
    floor: int = 1
    ceiling: int = 40000

    def __post_init__(self) -> None:
        headroom = self.headroom
        if not isinstance(headroom, int | float) or isinstance(headroom, bool) or not math.isfinite(headroom):
            raise ValidationError(f"headroom {headroom!r} must be a finite number >= 1")
        if headroom < 1:
            raise ValidationError(f"headroom {headroom!r} must be a finite number >= 1")
        _whole("floor", self.floor, optional=False)
        _whole("ceiling", self.ceiling, optional=False)
        if self.floor > self.ceiling:
            raise ValidationError(f"floor {self.floor} is above ceiling {self.ceiling}")

    def size(self, peak: float) -> int:
        """Units per second for an observed ``peak``: ``ceil(peak × headroom)`` within floor..ceiling."""
        number("peak", peak)
        return max(self.floor, min(self.ceiling, math.ceil(peak * self.headroom)))


class TierOptions(TypedDict, total=False):
    """The table options every capacity tier takes, whatever its billing mode, as a typed dict.

    :meth:`CapacityTier.provisioned` and :meth:`CapacityTier.on_demand` take each as a keyword-only parameter,
    documented there with its default (``warm_read_units_per_second``, ``warm_write_units_per_second``,
    ``table_class``, ``right_size``). This dict type is for options several tiers share: ``**options``.
    """

    warm_read_units_per_second: int | None
    warm_write_units_per_second: int | None
    table_class: str | TableClassEnum
    right_size: bool | RightSizing


class Billing(StrEnum):
    """How a capacity tier's tables are billed: DynamoDB's ``BillingMode`` values."""

    PROVISIONED = "PROVISIONED"
    ON_DEMAND = "PAY_PER_REQUEST"


_P = ParamSpec("_P")
_F = TypeVar("_F", bound=Callable[..., Any])


def _refuses_unknown_keywords(factory: _F) -> _F:
    """Name a keyword ``CapacityTier``'s factory does not take, with the closest one (Python 3.11 names neither).

    :raises UnknownKeywordError: (a ``TypeError``) ``CapacityTier.on_demand(): unknown keyword argument 'x';
        did you mean 'y'?``, one entry per unknown keyword.
    """
    parameters = [name for name in inspect.signature(factory).parameters if name != "cls"]

    @functools.wraps(factory)
    def checked(cls: type, *args: Any, **kwargs: Any) -> Any:
        unknown = sorted(set(kwargs) - set(parameters))
        if unknown:
            messages = "; ".join(unknown_keyword(name, parameters) for name in unknown)
            raise UnknownKeywordError(f"CapacityTier.{factory.__name__}(): {messages}")
        return factory(cls, *args, **kwargs)

    return cast(_F, checked)


class _FactoryAndDeprecatedFlag(Generic[_P]):
    """``CapacityTier.on_demand(...)`` is an ordinary classmethod factory; ``tier.on_demand`` is 0.2's flag.

    In 0.2 ``on_demand`` was also the tier's bool field. Read on a tier it still answers that bool (never a
    truthy bound method), with a :class:`DeprecationWarning` pointing at :attr:`CapacityTier.is_on_demand`,
    until the release ``cdk_ts_runtime._deprecations`` names; then it becomes a plain classmethod.
    """

    def __init__(self, factory: Callable[Concatenate[type[CapacityTier], _P], CapacityTier]) -> None:
        self.__func__ = factory
        self.__wrapped__ = factory  # what inspect.signature and the API reference show
        self.__doc__ = factory.__doc__

    @overload
    def __get__(self, instance: None, owner: type[CapacityTier]) -> Callable[_P, CapacityTier]: ...
    @overload
    def __get__(self, instance: CapacityTier, owner: type[CapacityTier]) -> bool: ...
    def __get__(self, instance: CapacityTier | None, owner: type[CapacityTier]) -> Any:
        if instance is None:
            return MethodType(self.__func__, owner)
        _deprecations.warn("cdk_ts.CapacityTier.on_demand")
        return instance.is_on_demand


@dataclass(frozen=True)
class CapacityTier:
    """The whole capacity state one class of period table converges to.

    Billing mode (provisioned units with optional auto scaling, or on-demand with optional maximum
    throughput), warm throughput and table class. Build one with :meth:`provisioned` or :meth:`on_demand`
    (:meth:`pay_per_request` is the on-demand tier with no options).

    :param read_capacity: provisioned RCU (>= 1); must be None for an on-demand tier.
        Default: None — required for a provisioned tier.
    :param write_capacity: provisioned WCU (>= 1); must be None for an on-demand tier.
        Default: None — required for a provisioned tier.
    :param billing: ``Billing.PROVISIONED`` or ``Billing.ON_DEMAND`` (pay per request); the factories set it.
        Default: ``Billing.PROVISIONED``.
    :param auto_scaling: target tracking above the provisioned units (not for on-demand).
        Default: None — the capacity stays at ``read_capacity``/``write_capacity``.
    :param max_read_request_units: on-demand maximum read request units per second (``OnDemandThroughput``).
        Default: None — no cap (an existing cap is removed).
    :param max_write_request_units: on-demand maximum write request units per second.
        Default: None — no cap (an existing cap is removed).
    :param warm_read_units_per_second: warm throughput for reads; raised to, never lowered.
        Default: None — whatever DynamoDB gives the table.
    :param warm_write_units_per_second: warm throughput for writes; raised to, never lowered.
        Default: None — whatever DynamoDB gives the table.
    :param table_class: ``"STANDARD"`` or ``"STANDARD_INFREQUENT_ACCESS"`` (an ``aws_dynamodb.TableClass``
        member is accepted and stored as its name). Default: ``"STANDARD"``.
    :param right_sizing: size tables of this tier from the previous period's observed peak (used on the
        current tier, when the next period's table is created).
        Default: None — the tier's units as configured.
    :raises ValueError: naming the bad value, for missing or invalid units, provisioned settings on an on-demand
        tier or on-demand caps on a provisioned one, an auto-scaling maximum below the tier's units, an
        unknown table class.
    """

    read_capacity: int | None = None
    write_capacity: int | None = None
    billing: Billing = Billing.PROVISIONED
    auto_scaling: AutoScaling | None = None
    max_read_request_units: int | None = None
    max_write_request_units: int | None = None
    warm_read_units_per_second: int | None = None
    warm_write_units_per_second: int | None = None
    table_class: str = "STANDARD"
    right_sizing: RightSizing | None = None

    def __post_init__(self) -> None:
        for name in (
            "max_read_request_units", "max_write_request_units",
            "warm_read_units_per_second", "warm_write_units_per_second",
        ):
            _whole(name, getattr(self, name))
        object.__setattr__(self, "table_class", table_class_name(self.table_class))
        if self.right_sizing is not None and not isinstance(self.right_sizing, RightSizing):
            raise ValidationError(f"right_sizing {self.right_sizing!r} must be a RightSizing")
        if not isinstance(self.billing, Billing):
            try:
                object.__setattr__(self, "billing", Billing(self.billing))
            except ValueError:
                raise ValidationError(
                    f"billing {self.billing!r} is not one of {', '.join(b.value for b in Billing)}"
                ) from None
        if self.is_on_demand:
            if self.read_capacity is not None or self.write_capacity is not None or self.auto_scaling:
                raise ValidationError("an on-demand tier takes no read/write capacity and no auto scaling")
            self._check_on_demand_warm_throughput()
            return
        for name in ("max_read_request_units", "max_write_request_units"):
            if getattr(self, name) is not None:
                raise ValidationError(
                    f"{name} {getattr(self, name)!r} is an on-demand cap; a provisioned tier takes none"
                )
        for name in ("read_capacity", "write_capacity"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValidationError(f"{name} {value!r} must be a whole number >= 1 (or use an on-demand tier)")
        scaling = self.auto_scaling
        if scaling and (
            scaling.max_read_capacity < self.read_capacity or scaling.max_write_capacity < self.write_capacity
        ):
            raise ValidationError(
                f"auto scaling maximum ({scaling.max_read_capacity} RCU / {scaling.max_write_capacity} WCU) is below "
                f"the tier's {self.read_capacity} RCU / {self.write_capacity} WCU"
            )

    def _check_on_demand_warm_throughput(self) -> None:
        """Warm throughput at or below what a new on-demand table starts with would do nothing: refused.

        Every new on-demand table starts at 12,000 reads / 4,000 writes per second, and warm throughput is
        never lowered (developer guide, "Understanding DynamoDB warm throughput"). Provisioned tables take
        any value from 1 (hashicorp/terraform-provider-aws#49894).
        """
        floors = {
            "warm_read_units_per_second": NEW_ON_DEMAND_WARM_READS,
            "warm_write_units_per_second": NEW_ON_DEMAND_WARM_WRITES,
        }
        for name, floor in floors.items():
            value = getattr(self, name)
            if value is not None and value <= floor:
                raise ValidationError(
                    f"{name} {value} on an on-demand tier would do nothing: a new on-demand table already starts "
                    f"at {floor:,} per second and warm throughput is never lowered; use a value above {floor:,} "
                    "or leave it unset"
                )

    @classmethod
    @_refuses_unknown_keywords
    def provisioned(
        cls, read: int, write: int, auto_scaling: AutoScaling | None = None, *,
        warm_read_units_per_second: int | None = None,
        warm_write_units_per_second: int | None = None,
        table_class: str | TableClassEnum = "STANDARD",
        right_size: bool | RightSizing = False,
    ) -> CapacityTier:
        """A provisioned tier of ``read`` RCU and ``write`` WCU, optionally auto scaled.

        :param read: read capacity units (>= 1).
        :param write: write capacity units (>= 1).
        :param auto_scaling: target tracking above these units.
            Default: None — fixed capacity.
        :param warm_read_units_per_second: warm throughput for reads (raised to, never lowered).
            Default: None — DynamoDB's own.
        :param warm_write_units_per_second: warm throughput for writes (raised to, never lowered).
            Default: None — DynamoDB's own.
        :param table_class: ``"STANDARD"`` or ``"STANDARD_INFREQUENT_ACCESS"``, or the same
            ``aws_dynamodb.TableClass`` member; stored as the name. Default: ``"STANDARD"``.
        :param right_size: True (``RightSizing()``) or a ``RightSizing``: the next table's provisioned units
            follow the observed peak. Default: False — the units given.
        :raises UnknownKeywordError: (a ``TypeError``) for a keyword that is not a table option, naming it.
        """
        return cls(
            read_capacity=read, write_capacity=write, auto_scaling=auto_scaling,
            warm_read_units_per_second=warm_read_units_per_second,
            warm_write_units_per_second=warm_write_units_per_second,
            table_class=table_class, right_sizing=_right_sizing(right_size),  # type: ignore[arg-type]
        )

    @property
    def is_on_demand(self) -> bool:
        """True when the tier's tables bill per request (``billing`` is ``Billing.ON_DEMAND``)."""
        return self.billing is Billing.ON_DEMAND

    @_FactoryAndDeprecatedFlag
    @_refuses_unknown_keywords
    def on_demand(
        cls,
        max_read_request_units: int | None = None,
        max_write_request_units: int | None = None,
        *,
        warm_read_units_per_second: int | None = None,
        warm_write_units_per_second: int | None = None,
        table_class: str | TableClassEnum = "STANDARD",
        right_size: bool | RightSizing = False,
    ) -> CapacityTier:
        """An on-demand tier with optional maximum throughput, warm throughput and table class.

        :param max_read_request_units: cap on read request units per second.
            Default: None — no cap.
        :param max_write_request_units: cap on write request units per second.
            Default: None — no cap.
        :param warm_read_units_per_second: reads per second a new table serves at once, above the 12,000 a
            new on-demand table starts with. Default: None — those 12,000.
        :param warm_write_units_per_second: writes per second a new table serves at once, above its 4,000.
            Default: None — those 4,000.
        :param table_class: the table class, by name or ``aws_dynamodb.TableClass`` member.
            Default: ``"STANDARD"``.
        :param right_size: True or a ``RightSizing``: the next table's warm throughput follows the observed peak.
            Default: False — the warm throughput given.
        :raises UnknownKeywordError: (a ``TypeError``) naming a keyword that is not a table option.
        """
        return cls(
            billing=Billing.ON_DEMAND,
            max_read_request_units=max_read_request_units, max_write_request_units=max_write_request_units,
            warm_read_units_per_second=warm_read_units_per_second,
            warm_write_units_per_second=warm_write_units_per_second,
            table_class=table_class, right_sizing=_right_sizing(right_size),  # type: ignore[arg-type]
        )

    @classmethod
    def pay_per_request(cls) -> CapacityTier:
        """An on-demand tier with no caps, no warm throughput, Standard class."""
        return cls(billing=Billing.ON_DEMAND)

    def describe(self) -> str:
        """Short text for logs: ``300/1000``, ``on-demand``, plus warm/max/class when set."""
        text = "on-demand" if self.is_on_demand else f"{self.read_capacity}/{self.write_capacity}"
        if self.max_read_request_units or self.max_write_request_units:
            text += f" max {self.max_read_request_units or '-'}/{self.max_write_request_units or '-'}"
        if self.warm_read_units_per_second or self.warm_write_units_per_second:
            text += f" warm {self.warm_read_units_per_second or '-'}/{self.warm_write_units_per_second or '-'}"
        if self.table_class != "STANDARD":
            text += " IA"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The tier as JSON-ready values, in the wire form every release reads: ``"on_demand": true/false``.

        The 0.2 form is kept on the wire so a function of either release reads the other's config while a
        deploy (or a rollback) is under way.
        """
        # the flag takes billing's place: key order is part of what the construct fingerprints
        return {
            ("on_demand" if name == "billing" else name): (value is Billing.ON_DEMAND if name == "billing" else value)
            for name, value in asdict(self).items()
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CapacityTier:
        """Inverse of :meth:`to_dict`; ``billing`` (a ``Billing`` value) is accepted in place of ``on_demand``."""
        if not isinstance(data, Mapping):
            raise ValidationError(f"capacity tier {data!r} must be an object")
        unknown = set(data) - set(cls.__dataclass_fields__) - {"on_demand"}
        if unknown:
            raise ValidationError(f"unknown capacity tier settings: {', '.join(sorted(unknown))}")
        scaling = data.get("auto_scaling")
        if scaling is not None and not isinstance(scaling, Mapping):
            raise ValidationError(f"auto_scaling {scaling!r} must be an object")
        sizing = data.get("right_sizing")
        if sizing is not None and not isinstance(sizing, Mapping):
            raise ValidationError(f"right_sizing {sizing!r} must be an object")
        if not isinstance(data.get("on_demand", False), bool):
            raise ValidationError(f"on_demand {data.get('on_demand')!r} must be true or false")
        values = dict(data)
        if "on_demand" in values:
            if "billing" in values:
                raise ValidationError("capacity tier has both on_demand and billing; give one")
            values["billing"] = Billing.ON_DEMAND if values.pop("on_demand") else Billing.PROVISIONED
        values["auto_scaling"] = _from_fields(AutoScaling, scaling, "auto scaling") if scaling else None
        values["right_sizing"] = _from_fields(RightSizing, sizing, "right sizing") if sizing else None
        return cls(**values)


def _right_sizing(value: bool | RightSizing) -> RightSizing | None:
    if isinstance(value, RightSizing):
        return value
    if isinstance(value, bool):
        return RightSizing() if value else None
    raise ValidationError(f"right_size {value!r} must be true, false or a RightSizing")


def _from_fields(kind: type, data: Mapping[str, Any], label: str) -> Any:
    unknown = set(data) - set(kind.__dataclass_fields__)
    if unknown:
        raise ValidationError(f"unknown {label} settings: {', '.join(sorted(unknown))}")
    return kind(**data)


# Chosen with the planner (bench/README.md): for the README's sample workload (1,000 writes/s peak, 400
# average, 1 KB items, 14 daily periods) closed periods on-demand in Standard-IA cost storage only and
# beat the 2016 tiers (100/1, 1/1 provisioned) by $79.56 a month.
DEFAULT_CURRENT = CapacityTier.provisioned(300, 1000)
DEFAULT_PREVIOUS = CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")
DEFAULT_OLDER = CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")


@dataclass(frozen=True)
class RotationConfig:
    """Everything the rotation function needs besides the table layout.

    ``RotatingTimeSeriesTables`` builds it from its own parameters, whose defaults match these.

    :param current: capacity of the current (and the next) period's table.
        Default: ``DEFAULT_CURRENT`` — 300 RCU / 1000 WCU.
    :param previous: capacity of the previous period's table.
        Default: ``DEFAULT_PREVIOUS`` — on-demand, Standard-IA (an idle table costs storage only).
    :param older: capacity of every older table.
        Default: ``DEFAULT_OLDER`` — on-demand, Standard-IA.
    :param retain_periods: periods kept, counting the current one (>= 2); 7 on a daily rotation keeps
        today and six days back. Default: None — tables are never expired.
    :param archive_bucket: the bucket expired tables are exported to before deletion (needs
        ``retain_periods`` and ``point_in_time_recovery``). Default: None — expired tables are deleted
        without an export.
    :param archive_prefix: key prefix of the exports; each goes under ``{archive_prefix}{table}/``.
        Default: ``""`` — at the top of the bucket.
    :param create_lead_seconds: how long before a boundary the next table is wanted; reconcile creates
        it inside this window. Default: 900 (15 minutes).
    :param missing_table_alarm_seconds: how long before a boundary a next period's table that is still
        missing counts as missing: every run from then on publishes ``NextPeriodTableMissing`` (1 while it is
        missing), a create still being retried publishes 1 as soon as this time passes, and the construct
        schedules a ``create_new`` retry then. At most ``create_lead_seconds``.
        Default: None — 300 (5 minutes), or ``create_lead_seconds`` when that is shorter.
    :param point_in_time_recovery: enable point-in-time recovery on every table.
        Default: True.
    :param kms_key_arn: the KMS key new tables are encrypted with.
        Default: None — an AWS owned key.
    :param ttl_attribute: the TTL attribute enabled on every table.
        Default: None — no TTL.
    :param stream_view_type: ``KEYS_ONLY``, ``NEW_IMAGE``, ``OLD_IMAGE`` or ``NEW_AND_OLD_IMAGES``.
        Default: None — tables have no stream.
    :param deletion_protection: enable deletion protection on new tables (expiry lifts it before it
        deletes). Default: False.
    :param tags: tags every new table gets, besides the ``cdk-ts`` prefix and period tags.
        Default: an empty dict — only those two.
    :param max_concurrency: tables updated in parallel in one run.
        Default: 8.
    :param max_changes_per_run: UpdateTable/DeleteTable calls one run may make; the rest waits for the
        next run. Default: 50.
    :param wait_for_new_tables_seconds: how long a run waits for a table it created to become ACTIVE
        before applying PITR, TTL and the stream consumer (the next run finishes otherwise). Default: 60.
    :param metric_namespace: the CloudWatch namespace of the ``NextPeriodTableMissing`` metric.
        Default: ``"cdk-ts"``; None publishes no metric.
    :param throttled_keys_insights: turn on CloudWatch Contributor Insights in ``THROTTLED_KEYS`` mode on
        every period table (``UpdateContributorInsights``), so the keys DynamoDB throttles are named; a table
        whose insights are already on, in either mode, is left as it is.
        Default: False — no Contributor Insights (and no cost for its rules).
    :raises ValueError: for ``retain_periods`` below 2, an archive bucket without retention or PITR, an
        unknown stream view type, a negative lead or limits below 1, or right-sizing on the previous or
        older tier.
    """

    current: CapacityTier = DEFAULT_CURRENT
    previous: CapacityTier = DEFAULT_PREVIOUS
    older: CapacityTier = DEFAULT_OLDER
    retain_periods: int | None = None
    archive_bucket: str | None = None
    archive_prefix: str = ""
    create_lead_seconds: int = 900
    missing_table_alarm_seconds: int | None = None
    point_in_time_recovery: bool = True
    kms_key_arn: str | None = None
    ttl_attribute: str | None = None
    stream_view_type: str | None = None
    deletion_protection: bool = False
    tags: dict[str, str] = field(default_factory=dict)
    max_concurrency: int = 8
    max_changes_per_run: int = 50
    wait_for_new_tables_seconds: int = 60
    metric_namespace: str | None = "cdk-ts"
    throttled_keys_insights: bool = False

    def __post_init__(self) -> None:
        if self.missing_table_alarm_seconds is None and isinstance(self.create_lead_seconds, int):
            object.__setattr__(self, "missing_table_alarm_seconds", min(300, self.create_lead_seconds))
        self._check_types()
        for name in ("previous", "older"):
            if getattr(self, name).right_sizing is not None:
                raise ValidationError(
                    f"{name} tier {getattr(self, name).describe()} has right_sizing; only the current tier is sized "
                    "(from the observed peak, when the next table is created)"
                )
        if self.retain_periods is not None and self.retain_periods < 2:
            raise ValidationError(
                f"retain_periods {self.retain_periods} must be >= 2 (the current and the previous period) or None"
            )
        if self.archive_bucket and self.retain_periods is None:
            raise ValidationError("archive_bucket needs retain_periods: only expired tables are archived")
        if self.archive_bucket and not self.point_in_time_recovery:
            raise ValidationError("archive_bucket needs point_in_time_recovery: ExportTableToPointInTime requires PITR")
        if self.stream_view_type is not None and self.stream_view_type not in STREAM_VIEW_TYPES:
            raise ValidationError(
                f"stream_view_type {self.stream_view_type!r} is not one of {', '.join(STREAM_VIEW_TYPES)}"
            )
        whole("create_lead_seconds", self.create_lead_seconds, minimum=0, maximum=MAX_LEAD_SECONDS,
              hint="a lead longer than the longest period (a year) is no lead")
        if not 0 <= self.missing_table_alarm_seconds <= self.create_lead_seconds:
            raise ValidationError(
                f"missing_table_alarm_seconds {self.missing_table_alarm_seconds} must be from 0 to create_lead_seconds "
                f"({self.create_lead_seconds}): a table is not missing before it is due"
            )
        if self.max_concurrency < 1 or self.max_changes_per_run < 1:
            raise ValidationError("max_concurrency and max_changes_per_run must be >= 1")

    def _check_types(self) -> None:
        """Every field has the type it must have: a config read from JSON is checked before it is used."""
        for name in ("current", "previous", "older"):
            if not isinstance(getattr(self, name), CapacityTier):
                raise ValidationError(f"{name} {getattr(self, name)!r} must be a CapacityTier")
        whole_numbers = {
            "retain_periods": (self.retain_periods, True),
            "create_lead_seconds": (self.create_lead_seconds, False),
            "missing_table_alarm_seconds": (self.missing_table_alarm_seconds, False),
            "max_concurrency": (self.max_concurrency, False),
            "max_changes_per_run": (self.max_changes_per_run, False),
            "wait_for_new_tables_seconds": (self.wait_for_new_tables_seconds, False),
        }
        for name, (value, optional) in whole_numbers.items():
            if value is None and optional:
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValidationError(f"{name} {value!r} must be a whole number")
        whole("wait_for_new_tables_seconds", self.wait_for_new_tables_seconds, minimum=0, maximum=MAX_LEAD_SECONDS)
        for name in ("point_in_time_recovery", "deletion_protection", "throttled_keys_insights"):
            if not isinstance(getattr(self, name), bool):
                raise ValidationError(f"{name} {getattr(self, name)!r} must be true or false")
        for name in ("archive_bucket", "kms_key_arn", "ttl_attribute", "metric_namespace"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValidationError(f"{name} {value!r} must be a non-empty string or null")
        if not isinstance(self.archive_prefix, str):
            raise ValidationError(f"archive_prefix {self.archive_prefix!r} must be a string")
        if not isinstance(self.tags, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.tags.items()
        ):
            raise ValidationError(f"tags {self.tags!r} must map strings to strings")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values, each tier in :meth:`CapacityTier.to_dict`'s wire form; inverse of :meth:`from_dict`."""
        data = asdict(self)
        for tier in ("current", "previous", "older"):
            data[tier] = getattr(self, tier).to_dict()
        return data

    def to_json(self) -> str:
        """JSON for :data:`ENV_ROTATION_CONFIG`."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RotationConfig:
        """Build from the parsed JSON; unknown keys are an error so typos do not pass silently."""
        data = dict(data)
        for tier in ("current", "previous", "older"):
            if tier in data:
                data[tier] = CapacityTier.from_dict(data[tier])
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValidationError(f"unknown rotation settings: {', '.join(sorted(unknown))}")
        return cls(**data)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RotationConfig:
        """Read :data:`ENV_ROTATION_CONFIG`; unset means all defaults."""
        data = json_object_env(env, ENV_ROTATION_CONFIG)
        if data is None:
            return cls()
        try:
            return cls.from_dict(data)
        except ValidationError as error:
            raise ValidationError(f"environment variable {ENV_ROTATION_CONFIG}: {error}") from None
