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
    :raises ValidationError: for an empty namespace, more than 30 dimensions, an unknown unit, a value that
        is not a finite number, or a property named like a metric, a dimension or ``_aws``.
    """
    dimensions = dict(dimensions or {})
    units = dict(units or {})
    properties = dict(properties or {})
    if not namespace:
        raise ValidationError("namespace must not be empty: EMF needs a CloudWatch namespace")
    if len(dimensions) > MAX_DIMENSIONS:
        raise ValidationError(f"{len(dimensions)} dimensions; an EMF dimension set holds at most {MAX_DIMENSIONS}")
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValidationError(f"metric {name!r} value {value!r} must be a finite number")
        if units.get(name, "Count") not in UNITS:
            raise ValidationError(f"metric {name!r} unit {units[name]!r} is not a CloudWatch unit: {sorted(UNITS)}")
    clash = sorted((set(properties) & (set(values) | set(dimensions))) | ({"_aws"} & set(properties)))
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
            **{str(k): str(v) for k, v in dimensions.items()},
            **{name: values[name] for name in chunk},
        })
    return objects


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
    :raises ValidationError: for an empty namespace.
    """

    def __init__(
        self, namespace: str, *, write: Callable[[str], None] | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        if not namespace:
            raise ValidationError("namespace must not be empty: EMF needs a CloudWatch namespace")
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
