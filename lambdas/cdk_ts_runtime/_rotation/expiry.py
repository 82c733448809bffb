"""Expiry of period tables past retention: proven export to S3 first when an archive bucket is set, then delete.

Deleting a table loses its data unless it was archived, so every precondition is proven first: the
table is this rotation's (tags), and with an archive bucket a FULL export of that table to the
configured bucket and prefix COMPLETED with an export time at or after the end of the table's
period (so it holds every write of the period). Other exports, ad-hoc or incremental, never count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code, error_message
from cdk_ts_runtime._periods import RotationPeriod, next_start, shift
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.report import ChangeBudget, PeriodTable, RunReport, describe_table, record_failure
from cdk_ts_runtime._stream_consumer import StreamConsumer

#: What ExportTableToPointInTime answers for a table without point-in-time recovery (API_ExportTableToPointInTime).
PITR_MISSING = "PointInTimeRecoveryUnavailableException"


@dataclass(eq=False, kw_only=True)
class TableExpiry:
    """Deletes tables older than ``retain_periods``, never before their export is proven (with a bucket).

    One is set up for each rotation run.

    :param dynamodb: the boto3 DynamoDB client.
    :param config: the rotation settings (``retain_periods``, ``archive_bucket``, ...).
    :param period: the rotation period.
    :param budget: the run's change budget, shared with the tier changes.
    :param owned: whether a table, given its DescribeTable description, belongs to this rotation (its tags).
    :param stream_consumer: the consumer whose mappings are removed before a table is deleted.
        Default: None — no stream consumer.
    :param lambda_client: the boto3 Lambda client for ``stream_consumer``.
        Default: None — only needed with a stream consumer.
    :param dry_run: prove and decide as a real run would, but start no export and delete nothing.
        Default: False.
    """

    dynamodb: Any
    config: RotationConfig
    period: RotationPeriod
    budget: ChangeBudget
    owned: Callable[[dict[str, Any]], bool]
    stream_consumer: StreamConsumer | None = None
    lambda_client: Any = None
    dry_run: bool = False

    def split(self, tables: list[PeriodTable], current: datetime) -> tuple[list[PeriodTable], list[PeriodTable]]:
        """(kept, expired): expired tables get no capacity change, which would only delay their deletion."""
        if self.config.retain_periods is None:
            return tables, []
        cutoff = shift(self.period, current, -(self.config.retain_periods - 1))
        return [t for t in tables if t.start >= cutoff], [t for t in tables if t.start < cutoff]

    def expire(self, tables: list[PeriodTable], report: RunReport) -> None:
        """Export (when configured) and delete each expired table; one table's failure does not stop the rest."""
        for table in tables:
            try:
                self._expire(table, report)
            except Exception as error:  # noqa: BLE001 - one table's failure must not stop the others
                record_failure(report, table.name, "expire", error)

    def _expire(self, table: PeriodTable, report: RunReport) -> None:
        description = describe_table(self.dynamodb, table.name)
        if not description or description.get("TableStatus") == "DELETING":
            return
        if description.get("TableStatus") != "ACTIVE":
            report.add("defer", table.name, reason=f"status {description.get('TableStatus')}: expiry retried next run")
            return
        if not self.owned(description):
            report.add("not_owned", table.name, reason="no cdk-ts:prefix/period tags of this rotation; not deleted")
            return
        if self.config.archive_bucket and not self._archived(table, description, report):
            return
        if not self.budget.take():
            report.add("defer", table.name, reason=self.budget.reason)
            return
        self._delete(table.name, description, report)

    def export_prefix(self, name: str) -> str:
        """The S3 prefix the rotation exports table ``name`` to."""
        return f"{self.config.archive_prefix}{name}/"

    def _archived(self, table: PeriodTable, description: dict[str, Any], report: RunReport) -> bool:
        """True once a proving export exists; otherwise starts (or waits for) one. Never loses data."""
        arn = description["TableArn"]
        proof = self.export_proof(table, description)
        if proof["proven"]:
            return True
        if proof["in_progress"]:
            report.add("wait_export", table.name, reason="export in progress: delete after it completes")
            return False
        failed = proof["failed"]
        if self.dry_run:
            if not self._point_in_time_recovery(table.name):  # what ExportTableToPointInTime would answer
                report.add("export_failed", table.name, reason=(
                    f"{PITR_MISSING}: point-in-time recovery is not enabled on the table, so the real run's export "
                    "is refused; table kept"
                ))
                return False
            report.add("export", table.name, bucket=self.config.archive_bucket, retry=failed)
            return False
        try:
            self.dynamodb.export_table_to_point_in_time(
                TableArn=arn,
                S3Bucket=self.config.archive_bucket,
                S3Prefix=self.export_prefix(table.name),
                ExportFormat="DYNAMODB_JSON",
                ExportType="FULL_EXPORT",
                ClientToken=f"{table.name}-{failed}"[:64],
            )
        except ClientError as error:
            report.add("export_failed", table.name, reason=f"{error_code(error)}: {error_message(error)}; table kept")
            return False
        report.add("export", table.name, bucket=self.config.archive_bucket, retry=failed)
        return False

    def _point_in_time_recovery(self, name: str) -> bool:
        """True when PITR is ENABLED on ``name`` (DescribeContinuousBackups, a read)."""
        backups = self.dynamodb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
        return backups.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus") == "ENABLED"

    def export_proof(self, table: PeriodTable, description: dict[str, Any]) -> dict[str, Any]:
        """What the exports of ``table`` to the configured bucket and prefix prove (reads only).

        :param table: the period table.
        :param description: its DescribeTable description (for the ARN).
        :return: ``proven`` (a FULL export COMPLETED at or after ``period_end``), ``proving_export`` (its
            ARN and time, or None), ``in_progress``, ``failed`` (how many failed), ``period_end`` (ISO-8601).
        """
        period_end = next_start(self.period, table.start)
        ours = [e for e in self._exports(description["TableArn"]) if self._to_our_archive(e, table.name)]
        proving = [e for e in ours if self._proves(e, period_end)]
        first = proving[0] if proving else None
        return {
            "proven": bool(proving),
            "proving_export": {
                "arn": first.get("ExportArn"),
                "time": (first.get("ExportTime") or first.get("StartTime")).astimezone(UTC).isoformat(),
            } if first else None,
            "in_progress": any(e.get("ExportStatus") == "IN_PROGRESS" for e in ours),
            "failed": sum(e.get("ExportStatus") == "FAILED" for e in ours),
            "period_end": period_end.isoformat(),
        }

    def _exports(self, table_arn: str) -> list[dict[str, Any]]:
        """ExportDescription of every export of the table (ListExports pages, then DescribeExport each)."""
        summaries, kwargs = [], {"TableArn": table_arn}
        while True:
            page = self.dynamodb.list_exports(**kwargs)
            summaries.extend(page.get("ExportSummaries", []))
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
        return [
            self.dynamodb.describe_export(ExportArn=s["ExportArn"])["ExportDescription"]
            for s in summaries
            if s.get("ExportType", "FULL_EXPORT") == "FULL_EXPORT"
        ]

    def _to_our_archive(self, export: dict[str, Any], name: str) -> bool:
        prefix = (export.get("S3Prefix") or "").rstrip("/")
        return (
            export.get("S3Bucket") == self.config.archive_bucket
            and prefix == self.export_prefix(name).rstrip("/")
            and export.get("ExportType", "FULL_EXPORT") == "FULL_EXPORT"
        )

    @staticmethod
    def _proves(export: dict[str, Any], period_end: datetime) -> bool:
        if export.get("ExportStatus") != "COMPLETED":
            return False
        exported_at = export.get("ExportTime") or export.get("StartTime")
        if not isinstance(exported_at, datetime):
            return False
        return exported_at.astimezone(UTC) >= period_end

    def _delete(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        if self.dry_run:
            lifted = {"deletion_protection_lifted_first": True} if description.get("DeletionProtectionEnabled") else {}
            report.add("delete", name, archived=bool(self.config.archive_bucket), **lifted)
            return
        stream_arn = description.get("LatestStreamArn")
        if self.stream_consumer is not None and stream_arn:
            self.stream_consumer.detach(self.lambda_client, stream_arn)
        if description.get("DeletionProtectionEnabled"):
            # Deletion protection guards against people; expiry is the configured, now proven, retention policy.
            self.dynamodb.update_table(TableName=name, DeletionProtectionEnabled=False)
            status = describe_table(self.dynamodb, name).get("TableStatus")
            if status != "ACTIVE":  # DeleteTable on an UPDATING table is refused: the next run deletes it
                report.add("defer", name, reason=f"deletion protection lifted; status {status}: deleted next run")
                return
        try:
            self.dynamodb.delete_table(TableName=name)
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                return
            raise
        report.add("delete", name, archived=bool(self.config.archive_bucket))
