"""MonitoringDashboard: one CloudWatch dashboard for a deployment, built from the constructs' metric methods."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from cdk_ts._insights import throttled_keys_graph
from cdk_ts._validation import describe
from cdk_ts.protocols import HasAlarms, Monitorable


class MonitoringDashboard(Construct):
    """A CloudWatch dashboard with one row of graphs per monitored construct, and the state of their alarms.

    ``monitor(*constructs)`` adds, for a ``RotatingTimeSeriesTables``: the throttled requests of its
    period tables (SEARCH) and the rotation's health (function errors, next table missing, undelivered
    runs, failed runs kept in the function's dead-letter queue, future and failed tables); for a
    ``StreamArchiver``: iterator age, failed batches and errors; for a ``DeviceLogTable`` or
    ``ShardMetadataTable``: its table's throttled requests and, with ``throttled_keys_insights=True``, the top
    throttled key of its (main) table and how many keys were throttled. Alarms the constructs have when ``monitor``
    runs (``add_default_alarms`` first) are shown in an alarm-status widget. Exposes ``dashboard``
    (the ``aws_cloudwatch.Dashboard``).
    """

    def __init__(self, scope: Construct, construct_id: str, *, dashboard_name: str | None = None) -> None:
        """Create the empty dashboard.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param dashboard_name: the dashboard's name.
            Default: None — a name CloudFormation generates.
        """
        super().__init__(scope, construct_id)
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=dashboard_name)
        self._alarms: list[cloudwatch.IAlarm] = []

    def monitor(self, *constructs: Any) -> None:
        """Add a row of graphs for each construct, and their alarms to the alarm-status widget.

        :param constructs: ``RotatingTimeSeriesTables``, ``StreamArchiver``, ``DeviceLogTable`` and
            ``ShardMetadataTable`` instances (or their imports; anything with ``dashboard_widgets()``), in
            the order their rows should appear; each gives its own graphs.
        :raises TypeError: for anything else, naming it.
        """
        for construct in constructs:
            if not isinstance(construct, Monitorable):
                raise TypeError(
                    f"{describe(construct)} cannot be monitored here: pass RotatingTimeSeriesTables, StreamArchiver, "
                    "DeviceLogTable or ShardMetadataTable instances (anything with dashboard_widgets())"
                )
        alarms: list[cloudwatch.IAlarm] = []
        for construct in constructs:
            self.dashboard.add_widgets(*construct.dashboard_widgets())
            if isinstance(construct, HasAlarms):
                alarms.extend(construct.alarms.values())
        if alarms:
            self._alarms.extend(alarms)
            self.dashboard.add_widgets(cloudwatch.AlarmStatusWidget(
                title="Alarms", alarms=alarms, width=24,
                height=2 + len(alarms) // 4,
            ))

    def show_throttled_keys(self, *rule_names: str) -> None:
        """Add a graph per Contributor Insights throttled-keys rule: the top key's throttles and how many keys.

        Turn the rules on with ``throttled_keys_insights=True`` on ``DeviceLogTable``, ``ShardMetadataTable``
        (its main table) or ``RotatingTimeSeriesTables``. DynamoDB names each rule
        ``DynamoDBContributorInsights-PKT-{table}-{created ms}`` when insights are turned on, so the names are
        known after the first deployment: ``aws dynamodb describe-contributor-insights --table-name TABLE``.
        ``monitor`` graphs the rules of ``DeviceLogTable`` and ``ShardMetadataTable`` by itself; this is for the
        period tables' rules (made at run time) and tables defined elsewhere.

        :param rule_names: the rules' names.
        :raises ValidationError: for a name that is not a DynamoDB throttled-keys rule.
        """
        graphs = [throttled_keys_graph(name) for name in rule_names]
        for start in range(0, len(graphs), 2):
            self.dashboard.add_widgets(*graphs[start : start + 2])

    @property
    def alarms(self) -> list[cloudwatch.IAlarm]:
        """The alarms shown on the dashboard, in the order they were added."""
        return list(self._alarms)
