"""CloudWatch Embedded Metric Format (EMF): metrics as one JSON log line each, no API call, no CloudWatch endpoint.

In Lambda, a line written to stdout reaches CloudWatch Logs, which extracts the metrics the line declares
(CloudWatch's "Specification: Embedded metric format"): the line is one JSON object whose ``_aws`` member
holds ``Timestamp`` (epoch milliseconds) and ``CloudWatchMetrics``, a list of directives
``{"Namespace", "Dimensions": [[names]], "Metrics": [{"Name", "Unit"}]}``; every metric and dimension
named there is a member of the object itself. A directive declares at most 100 metrics and a dimension set
at most 30 dimensions. The function needs only ``logs:PutLogEvents`` (its execution role's basic policy),
so metrics arrive from a VPC without a CloudWatch endpoint and never count against ``PutMetricData``'s
per-account rate.

Why not Powertools' Metrics utility: it does the same, but the runtime imports only the standard library and
boto3, and the package would multiply the asset's size (measured in ``bench/README.md``).
"""

from __future__ import annotations

import json
import logging
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cdk_ts_runtime._errors import ValidationError

logger = logging.getLogger(__name__)

#: The namespace of every metric cdk-ts's own functions write (the rotation's and the archiver's).
METRIC_NAMESPACE = "cdk-ts"

#: The most metrics one directive may declare (the EMF specification's limit).
MAX_METRICS_PER_OBJECT = 100
#: The most dimensions one dimension set may hold (the EMF specification's limit).
MAX_DIMENSIONS = 30
#: The longest metric or dimension name (CloudWatch API reference: ``MetricDatum.MetricName``, ``Dimension.Name``).
MAX_NAME_LENGTH = 255
#: The longest dimension value (CloudWatch API reference: ``Dimension.Value``).
MAX_DIMENSION_VALUE_LENGTH = 1024
#: The largest magnitude CloudWatch stores: "Values must be in the range of -2^360 to 2^360" (``MetricDatum.Value``).
MAX_MAGNITUDE = 2.0**360
#: The member holding the EMF metadata: no metric, dimension or property may take its name.
RESERVED_MEMBER = "_aws"
#: Units CloudWatch accepts: the ``StandardUnit`` enum of botocore's CloudWatch service model.
UNITS = frozenset({
    "Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
    "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second",
    "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second",
    "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None",
})


@dataclass(frozen=True)
class MetricPoint:
    """One value of one metric, with its dimensions and the context a reader of the log line wants.

    :param name: the metric name.
    :param value: the value.
    :param unit: a CloudWatch unit (one of ``UNITS``).
        Default: ``"Count"``.
    :param dimensions: dimension name to value.
        Default: none.
    :param properties: further members of the log line, searchable in CloudWatch Logs Insights but not
        metrics (a key, a shard count). Default: none.
    """

    name: str
    value: float
    unit: str = "Count"
    dimensions: Mapping[str, str] = field(default_factory=dict)
    properties: Mapping[str, Any] = field(default_factory=dict)


#: What takes metric points: an :class:`EmfWriter`, or any callable of the user's (a test list's ``append``).
MetricsSink = Callable[[MetricPoint], None]


def emf_objects(
    namespace: str,
    values: Mapping[str, float],
    *,
    dimensions: Mapping[str, str] | None = None,
    units: Mapping[str, str] | None = None,
    properties: Mapping[str, Any] | None = None,
    timestamp_ms: int,
) -> list[dict[str, Any]]:
    """The EMF objects that carry ``values``: one per 100 metrics, each declaring every metric it holds.

    :param namespace: the CloudWatch namespace.
    :param values: metric name to value.
    :param dimensions: dimension name to value, one dimension set for every metric.
        Default: None — no dimensions.
    :param units: metric name to unit.
        Default: None — ``Count`` for every metric.
    :param properties: further members of every object (never named like a metric or a dimension).
        Default: None.
    :param timestamp_ms: the metrics' time in epoch milliseconds.
    :raises ValidationError: for a namespace, metric name, dimension name or dimension value CloudWatch would
        not take (empty, too long, not ASCII, a control character, ``_aws``), more than 30 dimensions, a name
        used as both a metric and a dimension, an unknown unit, a value that is not a finite number within
        -2^360..2^360, or a property named like a metric, a dimension or ``_aws``.
    """
    dimensions = dict(dimensions or {})
    units = dict(units or {})
    properties = dict(properties or {})
    check_namespace(namespace)
    _check_metrics(values, units)
    _check_dimensions(dimensions)
    both = sorted(set(values) & set(dimensions), key=str)
    if both:
        raise ValidationError(f"{both} named both a metric and a dimension; one member cannot be both: rename one")
    clash = sorted((set(properties) & (set(values) | set(dimensions))) | ({RESERVED_MEMBER} & set(properties)), key=str)
    if clash:
        raise ValidationError(f"properties {clash} are named like a metric, a dimension or _aws; rename them")
    names = list(values)
    objects = []
    for start in range(0, len(names), MAX_METRICS_PER_OBJECT):
        chunk = names[start : start + MAX_METRICS_PER_OBJECT]
        objects.append({
            "_aws": {
                "Timestamp": timestamp_ms,
                "CloudWatchMetrics": [{
                    "Namespace": namespace,
                    "Dimensions": [list(dimensions)],
                    "Metrics": [{"Name": name, "Unit": units.get(name, "Count")} for name in chunk],
                }],
            },
            **properties,
            **dimensions,
            **{name: values[name] for name in chunk},
        })
    return objects


# The rules below are those CloudWatch applies to what an EMF line declares: the embedded metric format
# specification (CloudWatch User Guide, "Specification: Embedded metric format": a DimensionSet holds at most
# 30 names, a directive at most 100 metrics, the root's ``_aws`` member is the metadata) and the API reference
# it extracts into (``Dimension``: names 1-255 and values 1-1024 characters, ASCII only, no ASCII control
# characters, at least one non-whitespace character, a name not starting with ``:``; ``MetricDatum``: a name
# of 1-255 characters, a value in -2^360..2^360 and never NaN or infinite). CloudWatch drops a line that breaks
# them without a word to the writer, so they are refused here, naming the value.


def check_namespace(namespace: object) -> None:
    """Refuse a namespace CloudWatch would not take: empty, over 255 characters, or starting with ``:``.

    :raises ValidationError: naming the namespace.
    """
    if not isinstance(namespace, str) or not namespace.strip():
        raise ValidationError(f"namespace {namespace!r} must be a non-empty string: EMF needs a CloudWatch namespace")
    if len(namespace) > MAX_NAME_LENGTH or namespace.startswith(":") or _has_non_ascii_or_control(namespace):
        raise ValidationError(
            f"namespace {namespace!r} is not a CloudWatch namespace: use 1-{MAX_NAME_LENGTH} ASCII characters, "
            "no control characters, not starting with ':'"
        )


def _has_non_ascii_or_control(text: str) -> bool:
    return not text.isascii() or any(ord(c) < 32 or ord(c) == 127 for c in text)


def _check_metrics(values: Mapping[str, float], units: Mapping[str, str]) -> None:
    for name, value in values.items():
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH:
            raise ValidationError(f"metric name {name!r} must be a string of 1-{MAX_NAME_LENGTH} characters")
        if name == RESERVED_MEMBER:
            raise ValidationError("metric name '_aws' is the EMF metadata's member: rename the metric")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValidationError(f"metric {name!r} value {value!r} must be a finite number")
        if abs(value) > MAX_MAGNITUDE:
            raise ValidationError(f"metric {name!r} value {value!r} is outside CloudWatch's range -2^360..2^360")
        if units.get(name, "Count") not in UNITS:
            raise ValidationError(f"metric {name!r} unit {units[name]!r} is not a CloudWatch unit: {sorted(UNITS)}")


def _check_dimensions(dimensions: Mapping[str, str]) -> None:
    if len(dimensions) > MAX_DIMENSIONS:
        raise ValidationError(f"{len(dimensions)} dimensions; an EMF dimension set holds at most {MAX_DIMENSIONS}")
    for name, value in dimensions.items():
        if (
            not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH
            or name.startswith(":") or _has_non_ascii_or_control(name) or name == RESERVED_MEMBER
        ):
            raise ValidationError(
                f"dimension name {name!r} is not one CloudWatch takes: use 1-{MAX_NAME_LENGTH} ASCII characters, "
                "no control characters, not starting with ':', not '_aws'"
            )
        if (
            not isinstance(value, str) or not value.strip() or len(value) > MAX_DIMENSION_VALUE_LENGTH
            or _has_non_ascii_or_control(value)
        ):
            raise ValidationError(
                f"dimension {name!r} value {value!r:.80} is not one CloudWatch takes: use a string of "
                f"1-{MAX_DIMENSION_VALUE_LENGTH} ASCII characters with no control characters"
            )


def _stdout_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class EmfWriter:
    """Writes metrics as EMF lines (by default to stdout, where Lambda sends them to CloudWatch Logs).

    Usable as a :data:`MetricsSink`: ``ShardedTable(..., metrics=EmfWriter("MyApp/Writers"))``. Outside
    Lambda, pass ``write`` to send the lines to your own log shipper (the CloudWatch agent reads EMF too).

    :param namespace: the CloudWatch namespace every metric goes to.
    :param write: takes one line of JSON (no newline).
        Default: None — written to ``sys.stdout`` and flushed.
    :param clock: returns the time in epoch seconds.
        Default: ``time.time``.
    :raises ValidationError: for a namespace CloudWatch would not take (empty, too long, not ASCII).
    """

    def __init__(
        self, namespace: str, *, write: Callable[[str], None] | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        check_namespace(namespace)
        self.namespace = namespace
        self.write = write or _stdout_line
        self.clock = clock

    def publish(
        self,
        values: Mapping[str, float],
        *,
        dimensions: Mapping[str, str] | None = None,
        units: Mapping[str, str] | None = None,
        properties: Mapping[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Write ``values`` (one line per 100 metrics) and return the objects written.

        :param values: metric name to value.
        :param dimensions: dimension name to value.
            Default: None — none.
        :param units: metric name to unit.
            Default: None — ``Count``.
        :param properties: further members of each line.
            Default: None.
        """
        objects = emf_objects(
            self.namespace, values, dimensions=dimensions, units=units, properties=properties,
            timestamp_ms=int(self.clock() * 1000),
        )
        for document in objects:
            self.write(json.dumps(document, separators=(",", ":"), default=str))
        return objects

    def __call__(self, point: MetricPoint) -> None:
        """Write one metric point as one line (the :data:`MetricsSink` form)."""
        self.publish(
            {point.name: point.value}, dimensions=point.dimensions, units={point.name: point.unit},
            properties=point.properties,
        )


def emit(sink: MetricsSink | None, points: Iterable[MetricPoint]) -> None:
    """Give ``points`` to ``sink`` (nothing when it is None); a sink that fails never fails the caller's write."""
    if sink is None:
        return
    for point in points:
        try:
            sink(point)
        except Exception:  # noqa: BLE001 - a metric is never worth a failed write
            logger.exception("metrics sink failed on %s", point.name)


class WriterMetric(StrEnum):
    """What the data-plane writers (``ShardedTable``, ``PeriodRouter``) report to a :data:`MetricsSink`."""

    #: A key grown to more shards (value 1; properties ``key``, ``from``, ``to``, ``share``).
    SHARD_GROWTHS = "ShardGrowths"
    #: A throttled request (value 1), dimension ``ThrottleScope``: ``partition``, ``index``, ``table`` or ``unknown``.
    THROTTLES = "Throttles"
    #: Items not written after every attempt (value: how many; properties say why).
    REFUSED_WRITES = "RefusedWrites"
    #: A key recorded at fewer shards once it cooled (value 1; properties ``key``, ``from``, ``to``,
    #: ``effective``: the epoch second the smaller count applies from).
    SHARD_SHRINKS = "ShardShrinks"
    #: Shards one ``ShardedTable.query`` read (value: how many; properties ``key``, ``low``, ``high``: the window).
    SHARDS_READ = "ShardsRead"


#: The dimension naming the table a writer's metric is about.
TABLE_DIMENSION = "TableName"
#: The dimension naming what a throttle exhausted (``cdk_ts_runtime.ThrottleScope``).
SCOPE_DIMENSION = "ThrottleScope"


def writer_point(
    metric: WriterMetric, table: str, value: float = 1, *, scope: str | None = None, **properties: Any
) -> MetricPoint:
    """One :class:`WriterMetric` point for ``table`` (and ``scope``, for throttles)."""
    dimensions = {TABLE_DIMENSION: table, **({SCOPE_DIMENSION: scope} if scope is not None else {})}
    return MetricPoint(metric.value, value, dimensions=dimensions, properties=properties)
