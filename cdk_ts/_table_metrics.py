"""Metric factories of the fixed tables: what to measure, apart from the graphs and alarms built on it.

As in cdk-monitoring-constructs (a metric factory per resource, the monitoring that draws and alarms apart),
the ``metric_*`` methods of ``DeviceLogTableBase``, ``ShardMetadataTableBase`` and ``TimestreamTableBase`` ask
these factories, and the dashboard row (``TableThrottleWidgets``) asks those methods.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts._metrics import metric_options

#: Timestream's table-level metrics carry the dimensions DatabaseName, TableName and Operation ("Timestream for
#: LiveAnalytics metrics and dimensions", Timestream Developer Guide); the Operation a metric is published under
#: is not documented, so queries sum over every Operation of the table.
_TIMESTREAM_TABLE_SCHEMA = 'SCHEMA("AWS/Timestream", DatabaseName, Operation, TableName)'


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


class TimestreamMetricFactory:
    """The ``AWS/Timestream`` metrics of one table, as Metrics Insights queries (alarmable), five minutes by default."""

    def __init__(self, database_name: str, table_name: str) -> None:
        """Measure the table ``table_name`` of the database ``database_name``.

        :param database_name: the database's name (a deploy-time value is fine).
        :param table_name: the table's name (a deploy-time value is fine).
        """
        self.database_name = database_name
        self.table_name = table_name

    def magnetic_store_rejected_records(self, **props: Any) -> cloudwatch.IMetric:
        """Records the magnetic store rejected after accepting the write (``MagneticStoreRejectedRecordCount``), summed.

        :param props: ``MathExpression`` options (``label``, ``period``...).
        """
        return self._table_sum("MagneticStoreRejectedRecordCount", {"label": "rejected records", **props})

    def _table_sum(self, metric_name: str, props: dict[str, Any]) -> cloudwatch.MathExpression:
        query = (
            f"SELECT SUM({metric_name}) FROM {_TIMESTREAM_TABLE_SCHEMA} "
            f"WHERE DatabaseName = '{self.database_name}' AND TableName = '{self.table_name}'"
        )
        return cloudwatch.MathExpression(expression=query, using_metrics={}, **metric_options(props))
