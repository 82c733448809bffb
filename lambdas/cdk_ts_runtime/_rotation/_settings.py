"""The settings a period table gets once it is ACTIVE: PITR, TTL, Contributor Insights and the stream consumer."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.report import RunReport, describe_table, record_failure
from cdk_ts_runtime._stream_consumer import StreamConsumer

#: The Contributor Insights mode that names only throttled keys (``ContributorInsightsMode``, botocore's model).
THROTTLED_KEYS_MODE = "THROTTLED_KEYS"


#: The report action of a table whose TTL is on for another attribute than the configured one.
TTL_DRIFT_ACTION = "ttl_drift"


def ttl_drift(description: dict[str, Any], wanted: str | None) -> str | None:
    """Why a table's TTL (DescribeTimeToLive's ``TimeToLiveDescription``) is not ``wanted``'s; None when it is.

    DynamoDB keeps one TTL attribute per table and changes it only by disabling TTL and enabling it again,
    at most once an hour (UpdateTimeToLive): the rotation does not turn off a TTL someone set, it reports it.
    """
    on = description.get("TimeToLiveStatus") in ("ENABLED", "ENABLING")
    if not wanted or not on or description.get("AttributeName") == wanted:
        return None
    return (
        f"TTL is on for attribute {description.get('AttributeName')!r}, not the configured {wanted!r}: items expire "
        "by the other attribute; disable TTL on the table and the next run enables it for the configured one"
    )


@dataclass(eq=False, kw_only=True)
class TableSettings:
    """Applies the configured settings to tables of this rotation, each setting on its own; one is set up per run.

    :param dynamodb: the boto3 DynamoDB client.
    :param config: the rotation settings (``point_in_time_recovery``, ``ttl_attribute``, ...).
    :param owned: whether a table, given its DescribeTable description, belongs to this rotation.
    :param stream_consumer: the consumer every table's stream is mapped to; None maps none.
    :param lambda_client: the boto3 Lambda client for the stream consumer's mappings.
    :param dry_run: report what would change, change nothing.
    """

    dynamodb: Any
    config: RotationConfig
    owned: Callable[[dict[str, Any]], bool]
    stream_consumer: StreamConsumer | None
    lambda_client: Any
    dry_run: bool

    def ensure(self, names: Iterable[str], report: RunReport) -> None:
        """PITR, TTL and the stream consumer need an ACTIVE table, so they are applied after creation."""
        for name in names:
            try:
                self._ensure_table(name, report)
            except Exception as error:  # noqa: BLE001 - one table's failure must not stop the others
                record_failure(report, name, "settings", error)

    def report_planned(self, name: str, report: RunReport) -> None:
        """What a real run applies to the table it has just created (a dry run cannot describe it)."""
        if self.config.point_in_time_recovery:
            report.add("enable_pitr", name)
        if self.config.ttl_attribute:
            report.add("enable_ttl", name, attribute=self.config.ttl_attribute)
        if self.config.throttled_keys_insights:
            report.add("enable_contributor_insights", name, mode=THROTTLED_KEYS_MODE)
        if self.stream_consumer is not None and self.config.stream_view_type:
            report.add("attach_stream_consumer", name, stream="(the new table's stream)")

    def _ensure_table(self, name: str, report: RunReport) -> None:
        description = describe_table(self.dynamodb, name)
        status = description.get("TableStatus")
        if status == "UPDATING":  # a tier step is under way (reported by it); the next run checks the settings
            return
        if status != "ACTIVE":
            report.add("defer", name, reason=f"status {status}: settings next run")
            return
        if not self.owned(description):
            report.add("not_owned", name, reason="no cdk-ts:prefix/period tags of this rotation; left as it is")
            return
        # Each setting on its own: one DynamoDB refuses for now (a new table's backups still being enabled, a
        # TTL changed within the hour) is deferred to the next run without holding back the others.
        steps = (
            ("pitr", self._ensure_pitr), ("ttl", self._ensure_ttl), ("contributor_insights", self._ensure_insights),
            ("stream_consumer", self._ensure_consumer),
        )
        for step, ensure in steps:
            try:
                ensure(name, description, report)
            except Exception as error:  # noqa: BLE001 - reported (deferred or failed); the other settings go on
                record_failure(report, name, step, error)

    def _ensure_pitr(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        if not self.config.point_in_time_recovery:
            return
        status = self.dynamodb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
        if status.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus") == "ENABLED":
            return
        if not self.dry_run:
            self.dynamodb.update_continuous_backups(
                TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
            )
        report.add("enable_pitr", name)

    def _ensure_ttl(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        if not self.config.ttl_attribute:
            return
        ttl = self.dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
        if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
            drift = ttl_drift(ttl, self.config.ttl_attribute)
            if drift:
                report.add(TTL_DRIFT_ACTION, name, attribute=ttl.get("AttributeName"),
                           wanted=self.config.ttl_attribute, reason=drift)
            return
        if not self.dry_run:
            self.dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": self.config.ttl_attribute},
            )
        report.add("enable_ttl", name, attribute=self.config.ttl_attribute)

    def _ensure_insights(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        """Contributor Insights naming the throttled keys; insights already on in either mode are left as they are.

        ``ENABLE`` with a mode is how the mode is set (API_UpdateContributorInsights); ``ACCESSED_AND_THROTTLED_KEYS``
        names the throttled keys too, so a table someone is debugging with it keeps it.
        """
        if not self.config.throttled_keys_insights:
            return
        current = self.dynamodb.describe_contributor_insights(TableName=name)
        if current.get("ContributorInsightsStatus") in ("ENABLED", "ENABLING"):
            return
        if not self.dry_run:
            self.dynamodb.update_contributor_insights(
                TableName=name, ContributorInsightsAction="ENABLE", ContributorInsightsMode=THROTTLED_KEYS_MODE
            )
        report.add("enable_contributor_insights", name, mode=THROTTLED_KEYS_MODE)

    def _ensure_consumer(self, name: str, description: dict[str, Any], report: RunReport) -> None:
        stream_arn = description.get("LatestStreamArn")
        if self.stream_consumer is None or not stream_arn:
            return
        if self.dry_run:
            if not self.stream_consumer.attached(self.lambda_client, stream_arn):
                report.add("attach_stream_consumer", name, stream=stream_arn)
        elif self.stream_consumer.attach(self.lambda_client, stream_arn):
            report.add("attach_stream_consumer", name, stream=stream_arn)
