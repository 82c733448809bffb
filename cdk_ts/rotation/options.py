"""RotationOptions: the keywords of ``RotatingTimeSeriesTables`` besides its ``table_prefix``, as a typed dict."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns

from cdk_ts.rotation.base import PeriodTableOptions
from cdk_ts_runtime._rotation.config import CapacityTier


class RotationOptions(PeriodTableOptions, total=False):
    """The keywords of ``RotatingTimeSeriesTables`` besides ``table_prefix``, as one typed dict, each optional.

    The constructor takes each as a keyword-only parameter, typed, with its default in the signature and
    documented (``Default: ...``) on ``RotatingTimeSeriesTables``. This dict type is for settings several
    rotations share: ``shared: RotationOptions = {"retain_periods": 7}``, then
    ``RotatingTimeSeriesTables(stack, "R", table_prefix="r", **shared)``; mypy checks its keys and types
    against the constructor.
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

