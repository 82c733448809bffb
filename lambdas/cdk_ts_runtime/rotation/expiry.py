"""Expiry of period tables past retention: export to S3 first when an archive bucket is set, then delete."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code, error_message
from cdk_ts_runtime.periods import RotationPeriod, shift
from cdk_ts_runtime.rotation.report import ChangeBudget, PeriodTable, RunReport, describe_table
from cdk_ts_runtime.rotation_config import RotationConfig
from cdk_ts_runtime.stream_consumer import StreamConsumer


class TableExpiry:
    """Deletes tables older than ``retain_periods``, never before their export completed (with a bucket)."""

    def __init__(
        self,
        *,
        dynamodb,
        config: RotationConfig,
        period: RotationPeriod,
        budget: ChangeBudget,
        stream_consumer: StreamConsumer | None = None,
        lambda_client=None,
    ) -> None:
        """Set up expiry for one run.

        :param dynamodb: the boto3 DynamoDB client.
        :param config: the rotation settings (``retain_periods``, ``archive_bucket``, ...).
        :param period: the rotation period.
        :param budget: the run's change budget, shared with the tier changes.
        :param stream_consumer: the consumer whose mappings are removed before a table is deleted.
            Default: None — no stream consumer.
        :param lambda_client: the boto3 Lambda client for ``stream_consumer``.
            Default: None — only needed with a stream consumer.
        """
        self.dynamodb = dynamodb
        self.config = config
        self.period = period
        self.budget = budget
        self.stream_consumer = stream_consumer
        self.lambda_client = lambda_client

    def split(self, tables: list[PeriodTable], current: datetime) -> tuple[list[PeriodTable], list[PeriodTable]]:
        """(kept, expired): expired tables get no capacity change, which would only delay their deletion."""
        if self.config.retain_periods is None:
            return tables, []
        cutoff = shift(self.period, current, -(self.config.retain_periods - 1))
        return [t for t in tables if t.start >= cutoff], [t for t in tables if t.start < cutoff]

    def expire(self, tables: list[PeriodTable], report: RunReport) -> None:
        """Export (when configured) and delete each expired table, within the run's change budget."""
        for table in tables:
            if self.config.archive_bucket and not self._archived(table.name, report):
                continue
            if not self.budget.take():
                report.add("defer", table.name, reason="max_changes_per_run reached")
                continue
            self._delete(table.name, report)

    def _archived(self, name: str, report: RunReport) -> bool:
        """True once a completed export exists; otherwise starts (or waits for) one. Never loses data."""
        description = describe_table(self.dynamodb, name)
        arn = description.get("TableArn")
        if arn is None or description.get("TableStatus") != "ACTIVE":
            report.add("skip", name, reason=f"status {description.get('TableStatus')}: expiry retried next run")
            return False
        statuses = [s["ExportStatus"] for s in _all_exports(self.dynamodb, arn)]
        if "COMPLETED" in statuses:
            return True
        if "IN_PROGRESS" in statuses:
            report.add("wait_export", name, reason="export in progress: delete after it completes")
            return False
        try:
            self.dynamodb.export_table_to_point_in_time(
                TableArn=arn,
                S3Bucket=self.config.archive_bucket,
                S3Prefix=f"{self.config.archive_prefix}{name}/",
                ExportFormat="DYNAMODB_JSON",
                ClientToken=f"{name}-{statuses.count('FAILED')}"[:64],
            )
        except ClientError as error:
            report.add("export_failed", name, reason=f"{error_code(error)}: {error_message(error)}; table kept")
            return False
        report.add("export", name, bucket=self.config.archive_bucket, retry=statuses.count("FAILED"))
        return False

    def _delete(self, name: str, report: RunReport) -> None:
        description = describe_table(self.dynamodb, name)
        if description.get("TableStatus") not in ("ACTIVE", None):
            report.add("skip", name, reason=f"status {description.get('TableStatus')}: expiry retried next run")
            return
        stream_arn = description.get("LatestStreamArn")
        if self.stream_consumer is not None and stream_arn:
            self.stream_consumer.detach(self.lambda_client, stream_arn)
        if description.get("DeletionProtectionEnabled"):
            # Deletion protection guards against people; expiry is the configured retention policy.
            self.dynamodb.update_table(TableName=name, DeletionProtectionEnabled=False)
        try:
            self.dynamodb.delete_table(TableName=name)
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                return
            if error_code(error) in ("ResourceInUseException", "LimitExceededException"):
                report.add("defer", name, reason=error_message(error))
                return
            raise
        report.add("delete", name, archived=bool(self.config.archive_bucket))


def _all_exports(dynamodb, table_arn: str) -> list[dict[str, Any]]:
    exports, kwargs = [], {"TableArn": table_arn}
    while True:
        page = dynamodb.list_exports(**kwargs)
        exports.extend(page.get("ExportSummaries", []))
        if not page.get("NextToken"):
            return exports
        kwargs["NextToken"] = page["NextToken"]
