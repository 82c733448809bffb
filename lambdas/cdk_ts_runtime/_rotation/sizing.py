"""Right-sizing: the next period's table sized from the current one's observed peak in CloudWatch."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._rotation.config import NEW_ON_DEMAND_WARM_READS, NEW_ON_DEMAND_WARM_WRITES, CapacityTier
from cdk_ts_runtime._rotation.report import RunReport

#: A new on-demand table can already serve this much at once: warm throughput at or below it changes nothing.
ON_DEMAND_BASELINE = {"read": NEW_ON_DEMAND_WARM_READS, "write": NEW_ON_DEMAND_WARM_WRITES}
_METRICS = {"read": "ConsumedReadCapacityUnits", "write": "ConsumedWriteCapacityUnits"}
_MAX_POINTS = 1440  # GetMetricStatistics returns at most 1,440 data points per call


def observed_peaks(cloudwatch, table: str, start: datetime, end: datetime) -> dict[str, float] | None:
    """Per-second peak consumed read and write units of ``table`` between ``start`` and ``end``.

    Each peak is the largest per-minute ``Sum`` divided by 60. None when CloudWatch has no data point for
    either metric (a table never used, or metrics not there yet); a metric without data points while the
    other has some counts as 0. A data point whose ``Sum`` is not a finite, non-negative number counts as
    missing. ``ClientError`` (e.g. AccessDenied) and connection errors propagate.

    :param cloudwatch: the boto3 CloudWatch client.
    :param table: the table observed.
    :param start: the first minute observed (the period's start).
    :param end: the end of the observation (the run's reference time).
    """
    peaks: dict[str, float] = {}
    seen = False
    for kind, metric in _METRICS.items():
        sums: list[float] = []
        chunk_start = start
        while chunk_start < end:
            chunk_end = min(end, chunk_start + timedelta(minutes=_MAX_POINTS))
            answer = cloudwatch.get_metric_statistics(
                Namespace="AWS/DynamoDB", MetricName=metric,
                Dimensions=[{"Name": "TableName", "Value": table}],
                StartTime=chunk_start, EndTime=chunk_end, Period=60, Statistics=["Sum"],
            )
            sums.extend(point["Sum"] for point in answer.get("Datapoints", []) if _usable(point.get("Sum")))
            chunk_start = chunk_end
        seen = seen or bool(sums)
        peaks[kind] = max(sums, default=0.0) / 60
    return peaks if seen else None


def _usable(value: Any) -> bool:
    """A data point worth sizing from: a finite, non-negative number (anything else counts as missing)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def right_sized(
    tier: CapacityTier, cloudwatch, observed: str, start: datetime, end: datetime, table: str, report: RunReport
) -> CapacityTier:
    """``tier`` sized to the observed peak of table ``observed``; the tier as is without data. Reported.

    Without usable data (no client, no data points, nothing finite and non-negative, an error, no answer
    at all) the configured tier applies: creating the next table never depends on CloudWatch.

    Provisioned tiers get ``peak × headroom`` (within floor and ceiling, and an auto-scaling maximum) as
    units; on-demand tiers get it as warm throughput when it is above both the tier's own warm throughput
    and what a new on-demand table already serves (12,000 reads / 4,000 writes per second).
    """
    sizing = tier.right_sizing
    if sizing is None:
        return tier
    details: dict[str, Any] = {"observed_table": observed}
    peaks = None
    if cloudwatch is None:
        details["reason"] = "no CloudWatch client: the configured tier"
    else:
        try:
            peaks = observed_peaks(cloudwatch, observed, start, end)
        except ClientError as error:
            details["reason"] = f"{error_code(error)} reading CloudWatch: the configured tier"
        except Exception as error:  # noqa: BLE001 - no answer (unreachable endpoint, timeout): never block creation
            details["reason"] = f"no answer from CloudWatch ({type(error).__name__}): the configured tier"
        if peaks is None and "reason" not in details:
            details["reason"] = "no consumed-capacity data points: the configured tier"
    if peaks is None:
        report.add("right_size", table, chosen=tier.describe(), **details)
        return tier
    size = {kind: sizing.size(peak) for kind, peak in peaks.items()}
    if tier.is_on_demand:
        warm = {
            kind: max(size[kind], configured or 0)
            for kind, configured in (("read", tier.warm_read_units_per_second),
                                     ("write", tier.warm_write_units_per_second))
        }
        chosen = replace(
            tier,
            warm_read_units_per_second=warm["read"] if warm["read"] > ON_DEMAND_BASELINE["read"] else None,
            warm_write_units_per_second=warm["write"] if warm["write"] > ON_DEMAND_BASELINE["write"] else None,
        )
    else:
        read, write = size["read"], size["write"]
        if tier.auto_scaling:
            read = min(read, tier.auto_scaling.max_read_capacity)
            write = min(write, tier.auto_scaling.max_write_capacity)
        chosen = replace(tier, read_capacity=read, write_capacity=write)
    report.add(
        "right_size", table, chosen=chosen.describe(), headroom=sizing.headroom,
        observed={kind: round(peak, 2) for kind, peak in peaks.items()}, **details,
    )
    return chosen
