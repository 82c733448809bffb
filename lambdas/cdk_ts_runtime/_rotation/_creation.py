"""Creating one period table: its CreateTable request, the retries DynamoDB's "not now" calls for, then its settings."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._periods import parse_table_name, shift, table_name
from cdk_ts_runtime._retries import Failure, RetryPolicy, call_with_retries
from cdk_ts_runtime._rotation._run_metrics import RunMetrics
from cdk_ts_runtime._rotation._settings import TableSettings
from cdk_ts_runtime._rotation.config import CapacityTier, RotationConfig
from cdk_ts_runtime._rotation.ownership import RunOwnership, ownership_tags
from cdk_ts_runtime._rotation.report import RETRY_LATER_CODES, ChangeBudget, RunReport, describe_table, record_failure
from cdk_ts_runtime._rotation.sizing import right_sized
from cdk_ts_runtime._rotation.tiers import TierChanges, capacity_request
from cdk_ts_runtime._table_layout import TableLayout

#: A CreateTable DynamoDB answers with "not now" (a throttle, ``LimitExceededException``, a same-named table
#: still being deleted) is sent again after full-jitter backoff of up to ``base * 2**n`` s, capped, while
#: the run has time for the wait, at most ``CREATE_ATTEMPTS`` times. The SDK's own retries (5 attempts,
#: ``_retries.CONTROL_PLANE``) come first and last seconds; these waits are longer, because the next
#: period's table is wanted before its boundary and the next scheduled try may come too late.
CREATE_RETRY_BASE_SECONDS = 5.0
CREATE_RETRY_CAP_SECONDS = 60.0
CREATE_ATTEMPTS = 8
#: :data:`CREATE_ATTEMPTS` of CreateTable on the "not now" codes, with the waits above.
CREATE_RETRIES = RetryPolicy(
    max_attempts=CREATE_ATTEMPTS, base_seconds=CREATE_RETRY_BASE_SECONDS, cap_seconds=CREATE_RETRY_CAP_SECONDS,
    retry_codes=RETRY_LATER_CODES,
)
#: How ``_send_create``'s tries end when they did not create the table: it was there, or it is deferred.
_ALREADY_THERE, _DEFERRED = 0, -1
#: How often a run looks whether a table it created is ACTIVE yet.
WAIT_STEP_SECONDS = 2


@dataclass(eq=False, kw_only=True)
class TableCreation:
    """Creates period tables of one rotation, for one run; a failure is reported, never raised.

    :param layout: the tables' prefix, period and key schema.
    :param config: the rotation settings (the current tier, encryption, stream, tags, waits).
    :param dynamodb: the boto3 DynamoDB client.
    :param cloudwatch: the boto3 CloudWatch client that reads consumed capacity (right-sizing), or None.
    :param budget: the run's change budget (its time left).
    :param ownership: the run's ownership test, which knows the tables this run created before their tags read back.
    :param tiers: the run's tier changes (auto scaling of a new table).
    :param settings: the run's table settings (PITR, TTL, insights, stream consumer).
    :param run_metrics: the run's metrics (a next table still missing near its deadline).
    :param sleep: how to wait.
    :param rng: a source of floats in [0, 1) for the retries' jitter.
    :param dry_run: report what would be created, create nothing.
    """

    layout: TableLayout
    config: RotationConfig
    dynamodb: Any
    cloudwatch: Any
    budget: ChangeBudget
    ownership: RunOwnership
    tiers: TierChanges
    settings: TableSettings
    run_metrics: RunMetrics
    sleep: Callable[[float], None]
    rng: Callable[[], float]
    dry_run: bool

    def ensure(self, name: str, report: RunReport, when: datetime) -> None:
        """Create table ``name`` unless it exists, then apply its settings; a failure is reported, not raised."""
        try:
            self._create(name, report, when)
        except Exception as error:  # noqa: BLE001 - reported; the run goes on with the other tables
            record_failure(report, name, "create", error)

    def _create(self, name: str, report: RunReport, when: datetime) -> None:
        tier = self._tier_for_new(name, when, report)
        request = self._request(name, tier)
        if self.dry_run:
            self._report_dry_create(name, tier, report)
            return
        if not self._send_create(name, request, tier, report):
            return
        self.settings.ensure([name], report)
        if tier.auto_scaling and self.ownership(describe_table(self.dynamodb, name)):
            self.tiers.register_scaling(name, tier, self.tiers.autoscaled_tables([name]), report)

    def _request(self, name: str, tier: CapacityTier) -> dict[str, Any]:
        """CreateTable's arguments: keys, tags, deletion protection, the tier's capacity, encryption, stream."""
        key_schema, definitions = self.layout.key_schema()
        tags = {**self.config.tags, **ownership_tags(self.layout)}
        request: dict[str, Any] = {
            "TableName": name,
            "KeySchema": key_schema,
            "AttributeDefinitions": definitions,
            "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())],
            "DeletionProtectionEnabled": self.config.deletion_protection,
        }
        request.update(capacity_request(tier))
        if self.config.kms_key_arn:
            request["SSESpecification"] = {"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": self.config.kms_key_arn}
        if self.config.stream_view_type:
            request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": self.config.stream_view_type}
        return request

    def _tier_for_new(self, name: str, when: datetime, report: RunReport) -> CapacityTier:
        """The current tier, right-sized from the table before ``name`` when the tier asks for it."""
        tier = self.config.current
        if tier.right_sizing is None or describe_table(self.dynamodb, name):
            return tier
        prefix, period = self.layout.table_prefix, self.layout.period
        start = parse_table_name(prefix, period, name)
        observed_start = shift(period, start, -1)
        end = min(when, start)
        observed = table_name(prefix, period, observed_start)
        return right_sized(tier, self.cloudwatch, observed, observed_start, end, name, report)

    def _send_create(self, name: str, request: dict[str, Any], tier: CapacityTier, report: RunReport) -> bool:
        """CreateTable, sent again while DynamoDB answers "not now" and the run has time; True when the table is there.

        Waits follow :data:`CREATE_RETRY_BASE_SECONDS` and :data:`CREATE_RETRY_CAP_SECONDS` (full jitter), at
        most :data:`CREATE_ATTEMPTS` tries, and none once a wait of the cap would reach the run's last margin.
        Past the missing-table deadline the metric says so at once, while the tries go on. A create still
        refused when they end is deferred: the create-retry schedule and reconcile try again, and the alarm
        tells someone if the table is still missing at the deadline.
        """

        def create(attempt: int) -> int:
            try:
                self.ownership.created(self.dynamodb.create_table(**request)["TableDescription"])
            except ClientError as error:
                if error_code(error) == "ResourceInUseException" and self._table_there(name):
                    return _ALREADY_THERE  # someone else's CreateTable (or an earlier run's) made it
                raise
            return attempt

        def deferred(failure: Failure[int]) -> int:
            assert failure.error is not None  # create() returns only accepted results
            record_failure(report, name, "create", failure.error, attempts=failure.attempt)
            return _DEFERRED

        try:
            attempt = call_with_retries(
                create, CREATE_RETRIES,
                on_failure=lambda _failure: self.run_metrics.tell_if_late(name, report),
                may_retry=lambda: self.budget.has_time_for(CREATE_RETRY_CAP_SECONDS),
                give_up=deferred, sleep=self.sleep, rng=self.rng,
            )
        except ClientError as error:  # an answer that is not "not now"
            record_failure(report, name, "create", error)
            return False
        if attempt == _ALREADY_THERE:
            report.add("exists", name, reason="table already exists")
            return True
        if attempt == _DEFERRED:
            return False
        report.add("create", name, tier=tier.describe(), **({"attempts": attempt} if attempt > 1 else {}))
        self._wait_active(name)
        return True

    def _table_there(self, name: str) -> bool:
        """True when ``name`` exists and is not being deleted (CreateTable's ResourceInUseException means either)."""
        return describe_table(self.dynamodb, name).get("TableStatus") in ("CREATING", "ACTIVE", "UPDATING")

    def _report_dry_create(self, name: str, tier: CapacityTier, report: RunReport) -> None:
        """What creating ``name`` would record, without a call: create, then the new table's settings."""
        if describe_table(self.dynamodb, name):
            report.add("exists", name, reason="table already exists")
            self.settings.ensure([name], report)
            return
        report.add("create", name, tier=tier.describe())
        self.settings.report_planned(name, report)
        if tier.auto_scaling:
            report.add("register_autoscaling", name, target=tier.auto_scaling.target_utilization)

    def _wait_active(self, name: str) -> None:
        """Wait up to ``wait_for_new_tables_seconds`` (and never into the run's last margin) for ACTIVE."""
        for _ in range(math.ceil(self.config.wait_for_new_tables_seconds / WAIT_STEP_SECONDS)):
            if describe_table(self.dynamodb, name).get("TableStatus") == "ACTIVE" or self.budget.out_of_time():
                return
            self.sleep(WAIT_STEP_SECONDS)
