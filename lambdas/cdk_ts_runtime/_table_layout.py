"""The layout of a family of period tables: prefix, period and key schema, and how it travels as env vars.

``RotatingTimeSeriesTables`` writes this layout into the environment of the functions it binds; the
rotation function and ``PeriodRouter`` read it back with :meth:`TableLayout.from_env`, so the names
below are the one definition both sides share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_FLOOR, Context, Decimal, localcontext

from cdk_ts_runtime import _environment
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._periods import RotationPeriod, validate_table_prefix

#: The environment variable that carries each field of a :class:`TableLayout`.
ENV_VARIABLES = {
    "table_prefix": _environment.TABLE_PREFIX,
    "period": _environment.PERIOD,
    "partition_key": _environment.PARTITION_KEY,
    "partition_key_type": _environment.PARTITION_KEY_TYPE,
    "sort_key": _environment.SORT_KEY,
    "sort_key_type": _environment.SORT_KEY_TYPE,
    "time_unit": _environment.TIME_UNIT,
}
#: The one variable a bound function must have; the other fields have defaults.
ENV_TABLE_PREFIX = ENV_VARIABLES["table_prefix"]

KEY_TYPES = ("S", "N", "B")
#: Units a Number sort key may count time in, as divisors of one second; ``iso`` is for String sort keys.
TIME_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
ISO_TIME_UNIT = "iso"


@dataclass(frozen=True)
class TableLayout:
    """Prefix, period and key schema shared by every table of one rotation.

    The sort key holds the event time: a Number in ``time_unit`` since the Unix epoch (default
    milliseconds), or an ISO-8601 UTC string when ``sort_key_type`` is ``"S"`` (``time_unit="iso"``).

    :param table_prefix: the tables are named ``{table_prefix}_{label}``; every such name must be a
        valid DynamoDB table name.
    :param period: how long one table covers (a ``RotationPeriod`` or its value).
        Default: ``RotationPeriod.DAILY``.
    :param partition_key: the partition key attribute.
        Default: ``"pk"``.
    :param partition_key_type: ``"S"``, ``"N"`` or ``"B"``.
        Default: ``"N"`` (Number).
    :param sort_key: the sort key attribute, holding the event time.
        Default: ``"sk"``.
    :param sort_key_type: ``"N"`` (epoch time) or ``"S"`` (ISO-8601); ``"B"`` is refused.
        Default: ``"N"``.
    :param time_unit: ``"s"``, ``"ms"``, ``"us"`` or ``"ns"`` for a Number sort key, ``"iso"`` for a
        String one. Default: None — ``"ms"`` (milliseconds since the epoch) for a Number sort key,
        ``"iso"`` for a String one.
    :raises ValueError: for an invalid prefix, key name, key type or a time unit that does not fit
        the sort key type.
    """

    table_prefix: str
    period: RotationPeriod = RotationPeriod.DAILY
    partition_key: str = "pk"
    partition_key_type: str = "N"
    sort_key: str = "sk"
    sort_key_type: str = "N"
    time_unit: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "period", RotationPeriod.parse(self.period))
        if self.time_unit is None:
            object.__setattr__(self, "time_unit", ISO_TIME_UNIT if self.sort_key_type == "S" else "ms")
        validate_table_prefix(self.table_prefix, self.period)
        for name, value in (("partition_key", self.partition_key), ("sort_key", self.sort_key)):
            if not value or len(value) > 255:
                raise ValidationError(f"{name} {value!r} must be 1-255 characters")
        if self.partition_key == self.sort_key:
            raise ValidationError(f"partition_key and sort_key are both {self.sort_key!r}; use two attributes")
        for name, value in (("partition_key_type", self.partition_key_type), ("sort_key_type", self.sort_key_type)):
            if value not in KEY_TYPES:
                raise ValidationError(f"{name} {value!r} is not a DynamoDB key type; use one of {', '.join(KEY_TYPES)}")
        if self.sort_key_type == "N" and self.time_unit not in TIME_UNITS:
            raise ValidationError(
                f"time_unit {self.time_unit!r} does not fit a Number sort key; use one of {', '.join(TIME_UNITS)}"
            )
        if self.sort_key_type == "S" and self.time_unit != ISO_TIME_UNIT:
            raise ValidationError(
                f"time_unit {self.time_unit!r} does not fit a String sort key; String times are ISO-8601: "
                f"use time_unit={ISO_TIME_UNIT!r}"
            )
        if self.sort_key_type == "B":
            raise ValidationError("sort_key_type 'B' cannot hold an event time; use 'N' (epoch) or 'S' (ISO-8601)")

    def to_env(self) -> dict[str, str]:
        """The environment variables that carry this layout to a function (see :data:`ENV_VARIABLES`)."""
        return {variable: str(getattr(self, field)) for field, variable in ENV_VARIABLES.items()}

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TableLayout:
        """Read a layout written by :meth:`to_env`: an unset field has its default; no prefix is a clear error.

        :raises EnvironmentVariableMissingError: (a ``KeyError``) when ``CDK_TS_TABLE_PREFIX`` is not set.
        :raises ValueError: for a variable that does not parse, naming the variable and its value.
        """
        way_out = "bind the function with RotatingTimeSeriesTables.bind(function) or set it yourself"
        env = _environment.required(env, (ENV_TABLE_PREFIX,), way_out)
        given = {field: env[variable] for field, variable in ENV_VARIABLES.items() if variable in env}
        try:
            return cls(**given)
        except ValidationError as error:
            words = set(re.findall(r"\w+", str(error)))  # the fields the message names
            named = [f"{ENV_VARIABLES[field]}={value!r}" for field, value in given.items() if field in words]
            source = f"environment variable {', '.join(named)}" if named else "the layout's environment variables"
            raise ValidationError(f"{source}: {error}") from None

    def key_schema(self) -> tuple[list[dict], list[dict]]:
        """``(KeySchema, AttributeDefinitions)`` for CreateTable."""
        key_schema = [
            {"AttributeName": self.partition_key, "KeyType": "HASH"},
            {"AttributeName": self.sort_key, "KeyType": "RANGE"},
        ]
        definitions = [
            {"AttributeName": self.partition_key, "AttributeType": self.partition_key_type},
            {"AttributeName": self.sort_key, "AttributeType": self.sort_key_type},
        ]
        return key_schema, definitions

    def time_of(self, sort_value: int | float | Decimal | str) -> datetime:
        """The UTC event time a sort-key value stands for (epoch in ``time_unit``, or ISO-8601)."""
        if self.sort_key_type == "S":
            if not isinstance(sort_value, str):
                raise ValidationError(f"sort key {self.sort_key!r} is a String; {sort_value!r} is not an ISO-8601 time")
            try:
                parsed = datetime.fromisoformat(sort_value)
            except ValueError:
                raise ValidationError(f"sort key value {sort_value!r} is not an ISO-8601 time") from None
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            return parsed.astimezone(UTC)
        if isinstance(sort_value, bool) or not isinstance(sort_value, int | float | Decimal):
            raise ValidationError(f"sort key {self.sort_key!r} is a Number in {self.time_unit}; got {sort_value!r}")
        # Whole microseconds, rounded down, in integer (or exact decimal) arithmetic: a time 1 ns before a
        # period boundary stays in the period it belongs to (float or round-half-even would move it across).
        per_second = TIME_UNITS[self.time_unit]
        if isinstance(sort_value, int):
            micros = sort_value * 1_000_000 // per_second
        else:
            exact = Decimal(sort_value)  # a float's exact binary value, never its rounded repr
            if not exact.is_finite():
                raise ValidationError(
                    f"sort_value {sort_value!r} of sort key {self.sort_key!r} is not a finite time in {self.time_unit}"
                )
            with localcontext(Context(prec=80)):
                micros = int((exact * 1_000_000 / per_second).to_integral_value(rounding=ROUND_FLOOR))
        try:
            return _EPOCH + timedelta(microseconds=micros)
        except OverflowError:
            raise ValidationError(
                f"sort key {self.sort_key!r} value {sort_value!r} read as {self.time_unit} since the epoch is outside "
                "the years 1-9999: is the unit right?"
            ) from None

    def sort_value(self, when: datetime, *, last: bool = False) -> int | str:
        """The sort-key value for an aware datetime: an epoch integer in ``time_unit`` or an ISO-8601 string.

        :param when: the time (aware).
        :param last: the value of the last instant ``when`` stands for, to be an inclusive upper bound (a
            datetime counts whole microseconds, so in nanoseconds it covers up to ``+999`` ns).
            Default: False — the first instant.
        """
        if when.tzinfo is None:
            raise ValidationError(f"datetime {when.isoformat()} has no time zone; pass an aware datetime (UTC)")
        try:
            when = when.astimezone(UTC)
        except OverflowError:
            raise ValidationError(f"datetime {when.isoformat()} is outside the years 1-9999 in UTC") from None
        if self.sort_key_type == "S":
            return when.isoformat()
        delta = when - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        per_second = TIME_UNITS[self.time_unit]
        if last:  # the last unit that starts within [when, when + 1 us)
            return ((micros + 1) * per_second - 1) // 1_000_000
        return micros * per_second // 1_000_000


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

