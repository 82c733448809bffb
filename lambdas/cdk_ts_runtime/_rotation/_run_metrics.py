"""The metrics of one rotation run: its counts, and whether the next period's table is missing near its deadline."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cdk_ts_runtime._emf import EmfWriter
from cdk_ts_runtime._periods import next_start, parse_table_name, require_utc, table_name
from cdk_ts_runtime._rotation._settings import TTL_DRIFT_ACTION
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.metrics import RotationMetric, publish
from cdk_ts_runtime._rotation.report import RunReport, describe_table, record_failure
from cdk_ts_runtime._table_layout import TableLayout


@dataclass(eq=False, kw_only=True)
class RunMetrics:
    """Publishes one run's metrics as EMF lines (never in a dry run); a failure to publish is reported, not raised.

    :param metrics: the EMF writer; None publishes nothing.
    :param config: the rotation settings (``metric_namespace``, ``missing_table_alarm_seconds``).
    :param layout: the tables' prefix and period.
    :param dynamodb: the boto3 DynamoDB client (to see whether the next table exists).
    :param clock: returns "now" as an aware datetime.
    :param dry_run: report what a real run would publish, publish nothing.
    """

    metrics: EmfWriter | None
    config: RotationConfig
    layout: TableLayout
    dynamodb: Any
    clock: Callable[[], datetime]
    dry_run: bool
    told_missing: bool = False

    def publish(self, report: RunReport, table: str, values: Mapping[RotationMetric, float]) -> bool:
        """Publish ``values`` (never in a dry run); a failure is reported, never raised. True when sent."""
        if self.metrics is None or not self.config.metric_namespace or self.dry_run:
            return False
        try:
            publish(self.metrics, self.layout.table_prefix, values)
        except Exception as error:  # noqa: BLE001 - the run's own outcome is reported either way
            record_failure(report, table, "metrics", error)
            return False
        return True

    def publish_run_counts(self, report: RunReport) -> None:
        """Tables left alone (future-dated, foreign look-alikes), failed or with TTL drift, so alarms can watch them."""
        self.publish(report, "-", {
            RotationMetric.FUTURE_PERIOD_TABLES: report.count("future"),
            RotationMetric.FOREIGN_LOOKALIKE_TABLES: report.count("not_owned"),
            RotationMetric.FAILED_TABLES: report.count("error"),
            RotationMetric.TTL_DRIFT_TABLES: report.count(TTL_DRIFT_ACTION),
        })

    def deadline(self, upcoming: datetime) -> datetime:
        """When a still-missing next table starts to count as missing: ``missing_table_alarm_seconds`` before it."""
        return upcoming - timedelta(seconds=self.config.missing_table_alarm_seconds)

    def tell_if_late(self, name: str, report: RunReport) -> None:
        """Past the deadline, publish ``NextPeriodTableMissing`` 1 now (once a run), before the tries go on."""
        start = parse_table_name(self.layout.table_prefix, self.layout.period, name)
        if self.told_missing or start is None or self.clock() < self.deadline(start):
            return
        if self.publish(report, name, {RotationMetric.NEXT_PERIOD_TABLE_MISSING: 1}):
            self.told_missing = True
            report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: 1})

    def report_next_table(self, when: datetime, report: RunReport) -> None:
        """Publish ``NextPeriodTableMissing`` (1 or 0) from every run that ends past the deadline.

        The deadline is ``missing_table_alarm_seconds`` before the next boundary, by the later of the event
        time and the clock (a run that retried its create for minutes may end past it). A dry run reports
        what the real run would publish.
        """
        if self.metrics is None or not self.config.metric_namespace:
            return
        upcoming = next_start(self.layout.period, when)
        if max(when, require_utc(self.clock())) < self.deadline(upcoming):
            return
        name = table_name(self.layout.table_prefix, self.layout.period, upcoming)
        missing = 0 if describe_table(self.dynamodb, name).get("TableStatus") else 1
        if self.dry_run:  # what the real run would publish: 0 once it has created the table
            created = any(a["action"] == "create" and a["table"] == name for a in report.actions)
            report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: 0 if created else missing})
            return
        if self.publish(report, name, {RotationMetric.NEXT_PERIOD_TABLE_MISSING: missing}):
            report.add("metric", name, **{RotationMetric.NEXT_PERIOD_TABLE_MISSING: missing})
