"""The base of a data construct around one DynamoDB table: ``bind``, grants and that table's dashboard row."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch

from cdk_ts._binding import BindableConstruct
from cdk_ts._insights import ThrottledKeysRule, throttled_keys_graph
from cdk_ts._metrics import graph


class SingleTableConstruct(BindableConstruct):
    """Base of ``DeviceLogTableBase`` and ``ShardMetadataTableBase``: ``bind`` (see :class:`BindableConstruct`) and the
    dashboard row of the one table, its ``metric_throttled_requests()`` and the keys of its ``throttled_keys_rule``.

    A subclass defines ``metric_throttled_requests`` (and what ``BindableConstruct`` asks); Python refuses to
    instantiate one that does not.
    """

    #: The Contributor Insights rule naming the table's throttled keys; None without ``throttled_keys_insights``.
    throttled_keys_rule: ThrottledKeysRule | None = None

    @abstractmethod
    def metric_throttled_requests(self, **props: Any) -> cloudwatch.IMetric:
        """Throttled requests on the table.

        :param props: metric options (``label``, ``period``...).
        """

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The graphs ``MonitoringDashboard.monitor`` shows for this construct: its table's throttled requests and,
        with ``throttled_keys_insights=True``, the top throttled key and how many keys were throttled."""
        widgets: list[cloudwatch.IWidget] = [
            graph(f"{self.node.id}: throttled requests", self.metric_throttled_requests(label="throttled"))
        ]
        rule = self.throttled_keys_rule
        if rule is not None:
            widgets.append(throttled_keys_graph(rule.rule_name, title=f"{self.node.id}: throttled keys"))
        return widgets
