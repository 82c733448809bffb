"""What every ``metric_*`` method shares: a five-minute period by default, the caller's options on top."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from cdk_ts._insights import throttled_keys_graph

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


class TableThrottleWidgets:
    """Mixin: the dashboard row of a construct with one table, its ``metric_throttled_requests()``, and the
    throttled keys of its ``throttled_keys_rule`` when it has one."""

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The graphs ``MonitoringDashboard.monitor`` shows for this construct: its table's throttled requests and,
        with ``throttled_keys_insights=True``, the top throttled key and how many keys were throttled."""
        widgets: list[cloudwatch.IWidget] = [
            graph(f"{self.node.id}: throttled requests", self.metric_throttled_requests(label="throttled"))
        ]
        rule = getattr(self, "throttled_keys_rule", None)
        if rule is not None:
            widgets.append(throttled_keys_graph(rule.rule_name, title=f"{self.node.id}: throttled keys"))
        return widgets
