"""RotationOptions: the keywords of ``RotatingTimeSeriesTables`` besides its ``table_prefix``, documented once."""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns

from cdk_ts.rotation.base import PeriodTableOptions
from cdk_ts_runtime._rotation.config import DEFAULT_CURRENT, DEFAULT_OLDER, DEFAULT_PREVIOUS, CapacityTier


class RotationOptions(PeriodTableOptions, total=False):
    """What ``RotatingTimeSeriesTables`` does with its tables: tiers, schedules, retention, table settings, alarms.

    The constructor takes these as keywords (``retain_periods=7``), with the layout keywords of
    ``PeriodTableOptions`` (``period``, ``partition_key``, ``sort_key``, ``time_unit``); each is optional. A
    keyword that is none of these, nor ``table_prefix``, is refused with the closest valid name.

    :param period: how long one table covers (``PeriodTableOptions`` says more, as for the keys below).
        Default: ``RotationPeriod.DAILY`` — one table per UTC day.
    :param partition_key: the partition key of every period table. Default: None — ``pk``, a Number.
    :param sort_key: the sort key of every period table, holding the event time that picks the table.
        Default: None — ``sk``, a Number.
    :param time_unit: what a Number sort key counts since the epoch, or ``"iso"`` for a String one.
        Default: None — ``"ms"`` for a Number sort key, ``"iso"`` for a String one.
    :param current_tier: capacity of the current period's table (and of the next one, created before the
        boundary): a ``CapacityTier.provisioned(...)`` or ``CapacityTier.on_demand(...)``, with warm
        throughput, table class and right-sizing from the observed peak if you want them.
        Default: ``CapacityTier.provisioned(300, 1000)`` — 300 RCU / 1000 WCU, no auto scaling.
    :param previous_tier: state the previous period's table is moved to after the boundary.
        Default: ``CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")`` — on-demand in
        Standard-IA: late writes and reads are billed per request, an idle table costs storage only
        (chosen with the planner, docs/planner.md).
    :param older_tier: state of every table older than the previous one.
        Default: the same on-demand Standard-IA tier (no second class change when a table ages).
    :param create_lead: how long before each boundary the next period's table is created.
        Default: None — 15 minutes (23:45 UTC on a daily rotation).
    :param missing_table_alarm_lead: how long before each boundary a next period's table that is still
        missing counts as missing: a second ``create_new`` run is scheduled then (a create refused for
        longer than the first run could wait is tried again before the boundary), every run from then on
        publishes ``NextPeriodTableMissing``, and the ``next_table_missing`` alarm, evaluated every minute,
        fires before the boundary while the table is missing. Whole minutes, at least 3 (a minute's
        datapoint and an evaluation), shorter than ``create_lead``.
        Default: None — 5 minutes (a retry at 23:55 UTC on a daily rotation), or a minute less than a
        ``create_lead`` of 6 minutes or less.
    :param resize_delay: how long after each boundary older tables are moved down their tiers and
        expired tables are removed. Default: None — 15 minutes (00:15 UTC on a daily rotation).
    :param reconcile_every: how often the reconcile run converges any state (creates missing tables,
        fixes tiers, expires). At least 5 minutes. Default: None — every hour.
    :param enable_reconcile_schedule: schedule the periodic reconcile run.
        Default: True; False leaves
        only the create and resize schedules (and the deploy-time run, see ``run_at_deploy``).
    :param retain_periods: how many periods are kept, counting the current one (at least 2; 7 on a
        daily rotation keeps today and six days back); older tables are exported (with
        ``archive_bucket``) and deleted. Default: None — tables are kept forever (on a daily or weekly
        rotation a synth warning states when the quota of 2,500 tables per account and Region is reached).
    :param archive_bucket: the bucket expired tables are exported to (``ExportTableToPointInTime``, DynamoDB
        JSON) before they are deleted; a table is deleted only after its export completed. Needs
        ``retain_periods`` and ``point_in_time_recovery``. Default: None — expired tables are deleted
        without an export.
    :param archive_prefix: key prefix of the exports in ``archive_bucket``; each table's export goes under
        ``{archive_prefix}{table name}/``. Default: ``"exports/"``.
    :param encryption_key: the KMS key every period table is encrypted with; grants include its use.
        Default: None — tables are encrypted with an AWS owned key.
    :param point_in_time_recovery: enable point-in-time recovery on every period table.
        Default: True.
    :param time_to_live_attribute: the attribute holding each item's expiry (epoch seconds) for DynamoDB's
        TTL. Default: None — no TTL; items live as long as their table.
    :param stream: the stream view type every period table gets.
        Default: None — no stream (``StreamArchiver`` and ``add_stream_consumer`` need one).
    :param deletion_protection: enable deletion protection on every period table (expiry turns it off
        just before it deletes a table past retention). Default: False.
    :param throttled_keys_insights: turn on CloudWatch Contributor Insights in ``THROTTLED_KEYS`` mode on
        every period table, at run time (the tables are created by the function, not the template), so
        the keys DynamoDB throttles are named (docs/monitoring.md, "Hot keys named"). Grants the function
        ``UpdateContributorInsights``/``DescribeContributorInsights`` on the prefix's tables and the
        creation of DynamoDB's Contributor Insights service-linked role.
        Default: False — no Contributor Insights rules (each rule is billed).
    :param run_at_deploy: reconcile during ``cdk deploy`` (a custom resource invokes the rotation
        function), so the current period's table exists when the deployment ends. Default: True.
    :param max_concurrency: how many tables one run updates in parallel.
        Default: 8.
    :param max_changes_per_run: how many mutating calls (UpdateTable, DeleteTable) one run may make; the
        rest is deferred to the next run. Default: 50.
    :param reserved_concurrent_executions: concurrency reserved for the rotation function (at least 1),
        as a second guard beside the lock. Default: None — no reservation: a template that reserves
        any concurrency fails to deploy in an account whose Lambda concurrency quota is 10 or 50 (new
        accounts), because Lambda keeps 100 executions unreserved; the lock makes runs single-flight
        without it.
    :param alarm_topic: create the default alarms now, notifying this SNS topic (same as calling
        ``add_default_alarms(alarm_topic=topic)``). Default: None — no alarms until
        ``add_default_alarms`` is called.
    """

    current_tier: CapacityTier
    previous_tier: CapacityTier
    older_tier: CapacityTier
    create_lead: Duration | None
    missing_table_alarm_lead: Duration | None
    resize_delay: Duration | None
    reconcile_every: Duration | None
    enable_reconcile_schedule: bool
    retain_periods: int | None
    archive_bucket: s3.IBucket | None
    archive_prefix: str
    encryption_key: kms.IKey | None
    point_in_time_recovery: bool
    time_to_live_attribute: str | None
    stream: dynamodb.StreamViewType | None
    deletion_protection: bool
    throttled_keys_insights: bool
    run_at_deploy: bool
    max_concurrency: int
    max_changes_per_run: int
    reserved_concurrent_executions: int | None
    alarm_topic: sns.ITopic | None


#: The value of each ``RotationOptions`` keyword a caller leaves out (the ``Default:`` its entry states).
ROTATION_DEFAULTS: dict[str, Any] = {
    "current_tier": DEFAULT_CURRENT,
    "previous_tier": DEFAULT_PREVIOUS,
    "older_tier": DEFAULT_OLDER,
    "create_lead": None,
    "missing_table_alarm_lead": None,
    "resize_delay": None,
    "reconcile_every": None,
    "enable_reconcile_schedule": True,
    "retain_periods": None,
    "archive_bucket": None,
    "archive_prefix": "exports/",
    "encryption_key": None,
    "point_in_time_recovery": True,
    "time_to_live_attribute": None,
    "stream": None,
    "deletion_protection": False,
    "throttled_keys_insights": False,
    "run_at_deploy": True,
    "max_concurrency": 8,
    "max_changes_per_run": 50,
    "reserved_concurrent_executions": None,
    "alarm_topic": None,
}
