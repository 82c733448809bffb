"""The rotation's metric factory: every metric of one table prefix's rotation, made in one place.

cdk-monitoring-constructs' split: this module makes metrics; ``_monitoring`` turns them into alarms and graphs.
``RotatingTimeSeriesTablesBase`` and ``RotatingTimeSeriesTables`` answer their ``metric_*`` methods from here.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk_ts._metrics import DEFAULT_PERIOD, metric_options
from cdk_ts._validation import describe
from cdk_ts_runtime._emf import METRIC_NAMESPACE
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._rotation.metrics import TABLE_PREFIX_DIMENSION, RotationMetric


class RotationMetricFactory:
    """Metrics of the period tables ``{table_prefix}_*`` and of the rotation that manages them.

    :param owner: the construct the metrics are for (errors name it).
    :param table_prefix: the rotation's table prefix.
    """

    def __init__(self, owner: Construct, table_prefix: str) -> None:
        """Make metrics for ``owner``'s tables."""
        self._owner = owner
        self._table_prefix = table_prefix

    def throttled_requests(self, **props: Any) -> cloudwatch.SearchExpression:
        """SEARCH over ``AWS/DynamoDB`` ``ThrottledRequests`` of every table whose name holds the prefix as a term."""
        period = props.pop("period", None) or DEFAULT_PERIOD
        search = (
            "SEARCH('{AWS/DynamoDB,TableName,Operation} MetricName=\"ThrottledRequests\" "
            f"TableName={self._table_prefix}', 'Sum', {int(period.to_seconds())})"
        )
        return cloudwatch.SearchExpression(
            expression=search,
            **{"label": f"{self._table_prefix}_* throttled requests", "period": period, **props},
        )

    @staticmethod
    def throttled_requests_in_account(**props: Any) -> cloudwatch.MathExpression:
        """Metrics Insights: throttled requests summed over every DynamoDB table of the account and Region."""
        return cloudwatch.MathExpression(
            expression='SELECT SUM(ThrottledRequests) FROM SCHEMA("AWS/DynamoDB", Operation, TableName)',
            using_metrics={},
            **metric_options({"label": "DynamoDB throttled requests (account)", **props}),
        )

    def published(self, metric_name: RotationMetric | str, **props: Any) -> cloudwatch.Metric:
        """A metric the rotation function publishes for this prefix; Maximum by default.

        :raises ValueError: for a name the rotation function does not publish.
        """
        try:
            metric = RotationMetric(metric_name)
        except ValueError:
            raise ValidationError(
                f"{describe(self._owner)}: metric {metric_name!r} is not published by the rotation function; use "
                f"one of {', '.join(m.value for m in RotationMetric)}"
            ) from None
        return cloudwatch.Metric(
            namespace=METRIC_NAMESPACE,
            metric_name=metric.value,
            dimensions_map={TABLE_PREFIX_DIMENSION: self._table_prefix},
            **metric_options(props, "Maximum"),
        )

    @staticmethod
    def function_errors(function: lambda_.IFunction, **props: Any) -> cloudwatch.Metric:
        """The rotation function's failed runs (``AWS/Lambda`` ``Errors``); Sum by default."""
        return function.metric_errors(**metric_options(props, "Sum"))

    @staticmethod
    def messages_waiting(queue: sqs.IQueue, **props: Any) -> cloudwatch.Metric:
        """Messages in a dead-letter queue (``ApproximateNumberOfMessagesVisible``); Maximum by default."""
        return queue.metric_approximate_number_of_messages_visible(**metric_options(props, "Maximum"))
