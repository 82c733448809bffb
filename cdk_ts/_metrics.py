"""What every ``metric_*`` method shares: a five-minute period by default, the caller's options on top."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

#: The default period of every ``metric_*`` method (and so of the default alarms built on them).
DEFAULT_PERIOD = Duration.minutes(5)


def metric_options(props: Mapping[str, Any], statistic: str | None = None) -> dict[str, Any]:
    """The caller's metric ``props`` over the defaults: ``period`` five minutes and ``statistic`` when given."""
    defaults: dict[str, Any] = {"period": DEFAULT_PERIOD}
    if statistic is not None:
        defaults["statistic"] = statistic
    return {**defaults, **props}


def graph(title: str, *metrics: cloudwatch.IMetric) -> cloudwatch.GraphWidget:
    """A half-width graph (two per dashboard row), the unit of every construct's ``dashboard_widgets``."""
    return cloudwatch.GraphWidget(title=title, left=list(metrics), width=12)
