"""Metric factory of a construct's one DynamoDB table: what to measure, apart from the graphs and alarms built on it.

As in cdk-monitoring-constructs (a metric factory per resource, the monitoring that draws and alarms apart),
the ``metric_*`` methods of ``DeviceLogTableBase`` and ``ShardMetadataTableBase`` ask this factory, and the
dashboard row (``TableThrottleWidgets``) asks those methods.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts._metrics import metric_options


class TableMetricFactory:
    """The ``AWS/DynamoDB`` metrics of one table, each a five-minute period unless the caller says otherwise."""

    def __init__(self, table: dynamodb.ITable | dynamodb.ITableV2) -> None:
        """Measure ``table``.

        :param table: the table, created in this app or imported.
        """
        self.table = table

    def throttled_requests(self, **props: Any) -> cloudwatch.IMetric:
        """Throttled requests on the table, every operation summed (``ThrottledRequests``), sum over 5 minutes.

        :param props: metric options (``label``, ``period``...).
        """
        return self.table.metric_throttled_requests_for_operations(**metric_options(props))
