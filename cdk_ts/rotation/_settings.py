"""A rotation's keywords checked at once, every problem reported together, and the settings built from them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from aws_cdk import Duration, Token
from constructs import Construct

from cdk_ts._lookups import path_of
from cdk_ts._validation import Problems, check_iam_text
from cdk_ts.rotation import _schedules
from cdk_ts.rotation._lock import check_reserved_concurrency
from cdk_ts.rotation._texts import check_derived_texts
from cdk_ts.rotation.base import METRIC_NAMESPACE, layout_period, literal_prefix, table_layout
from cdk_ts.rotation.options import RotationOptions
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._periods import LABEL_LENGTH, RotationPeriod, globs_overlap, table_name_glob, validate_table_prefix
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._table_layout import TableLayout

#: ``create_lead`` and ``resize_delay`` when not given.
DEFAULT_CREATE_LEAD = Duration.minutes(15)
DEFAULT_RESIZE_DELAY = Duration.minutes(15)
DEFAULT_RECONCILE_EVERY = Duration.hours(1)
#: The period whose labels are shortest: a prefix it refuses makes no valid table name with any period.
_SHORTEST_LABELS = min(RotationPeriod, key=LABEL_LENGTH.__getitem__)
#: A valid prefix ``TableLayout`` checks the other layout keywords with when the prefix has a problem already.
_STAND_IN_PREFIX = "t"


@dataclass(frozen=True)
class RotationSettings:
    """What ``RotatingTimeSeriesTables`` builds from: its checked layout and configuration, and its schedules.

    :param layout: the period tables' prefix, period, keys and time unit.
    :param config: what the rotation function reads (tiers, retention, leads, table settings).
    :param options: every ``RotationOptions`` keyword as the constructor got it (its default when left out).
    :param create_new: cron fields of the ``create_new`` run, ``create_lead`` before each boundary.
    :param create_new_retry: cron fields of its retry, ``missing_table_alarm_lead`` before each boundary.
    :param resize_old: cron fields of the ``resize_old`` run, ``resize_delay`` after each boundary.
    :param reconcile_every: the period of the reconcile run.
    """

    layout: TableLayout
    config: RotationConfig
    options: RotationOptions
    create_new: dict[str, str]
    create_new_retry: dict[str, str]
    resize_old: dict[str, str]
    reconcile_every: Duration


def rotation_keywords(arguments: Mapping[str, Any]) -> RotationOptions:
    """The keywords of ``RotatingTimeSeriesTables`` besides ``table_prefix``, out of its constructor's ``locals()``."""
    return cast(RotationOptions, {name: arguments[name] for name in RotationOptions.__annotations__})


def rotation_settings(
    scope: Construct, construct_id: str, table_prefix: str, options: Mapping[str, Any], rotation_class: type
) -> RotationSettings:
    """Check the keywords of ``rotation_class`` (``RotatingTimeSeriesTables``), all problems at once; build settings.

    :raises ConstructValidationError: naming the construct's path and every problem found.
    """
    problems = Problems(scope, construct_id)
    given = cast(RotationOptions, options)
    layout = _checked_layout(problems, table_prefix, options, given)
    lead, alarm_lead, delay = _checked_timings(problems, given)
    config = problems.collect(lambda: _config(given, lead, alarm_lead))
    check_reserved_concurrency(problems, given["reserved_concurrent_executions"])
    schedules = None
    if layout is not None:
        pattern = table_name_glob(layout.table_prefix, layout.period)
        _check_overlapping_rotations(problems, scope, pattern, rotation_class)
        if lead is not None and alarm_lead is not None and delay is not None:
            # the schedules refuse timings the period cannot take (a lead longer than the period, a delay under
            # a minute): with the other problems, under the construct's path
            schedules = problems.collect(lambda: (
                _schedules.before_boundary(layout.period, lead),
                _schedules.before_boundary(layout.period, alarm_lead, "missing_table_alarm_lead"),
                _schedules.after_boundary(layout.period, delay),
            ))
    problems.raise_if_any()
    # raise_if_any saw to it: each is None only with a problem recorded.
    assert layout is not None and config is not None and schedules is not None
    create_new, create_new_retry, resize_old = schedules
    return RotationSettings(
        layout=layout,
        config=config,
        options=given,
        create_new=create_new,
        create_new_retry=create_new_retry,
        resize_old=resize_old,
        reconcile_every=given["reconcile_every"] or DEFAULT_RECONCILE_EVERY,
    )


def _checked_layout(
    problems: Problems, table_prefix: str, options: Mapping[str, Any], given: RotationOptions
) -> TableLayout | None:
    """The layout, and every string made from the prefix checked against its AWS limit.

    ``TableLayout`` stops at its first problem, so the prefix is checked first on its own (against the period
    with the shortest labels when the period itself is refused) and the other keywords with a stand-in prefix:
    a bad prefix, period and keys are all reported in one run.
    """
    if not literal_prefix(problems, table_prefix):
        return None
    period = _parsed_period(layout_period(options))  # None: TableLayout reports the period
    check_iam_text(problems, "archive_prefix", given["archive_prefix"])
    if period is not None:
        archive_prefix = given["archive_prefix"] if given["archive_bucket"] else None
        check_derived_texts(problems, table_prefix, period, archive_prefix)
    try:
        validate_table_prefix(table_prefix, period or _SHORTEST_LABELS)
    except ValidationError as error:
        problems.add(str(error))
        problems.collect(lambda: table_layout(_STAND_IN_PREFIX, options))
        return None
    return problems.collect(lambda: table_layout(table_prefix, options))


def _checked_timings(
    problems: Problems, given: RotationOptions
) -> tuple[timedelta | None, timedelta | None, timedelta | None]:
    """``create_lead``, ``missing_table_alarm_lead`` and ``resize_delay``; None for each that has a problem."""
    lead = problems.collect(lambda: _to_timedelta("create_lead", given["create_lead"], DEFAULT_CREATE_LEAD))
    alarm_lead = None
    if lead is not None:
        default = Duration.seconds(_schedules.default_alarm_lead(lead).total_seconds())
        alarm_given = given["missing_table_alarm_lead"]
        alarm_lead = problems.collect(lambda: _to_timedelta("missing_table_alarm_lead", alarm_given, default))
    if lead is not None and alarm_lead is not None:
        was_given = given["missing_table_alarm_lead"] is not None
        problems.collect(lambda: _schedules.check_alarm_lead(alarm_lead, lead, given=was_given))
    delay = problems.collect(lambda: _to_timedelta("resize_delay", given["resize_delay"], DEFAULT_RESIZE_DELAY))
    every = given["reconcile_every"] or DEFAULT_RECONCILE_EVERY
    if given["enable_reconcile_schedule"]:
        problems.check(
            every.to_minutes() >= 5, lambda: f"reconcile_every {every.to_human_string()} must be at least 5 minutes"
        )
    return lead, alarm_lead, delay


def _config(given: RotationOptions, lead: timedelta | None, alarm_lead: timedelta | None) -> RotationConfig:
    """The rotation function's configuration; raises ValueError for an inconsistent retention or tier."""
    archive_bucket, encryption_key, stream = given["archive_bucket"], given["encryption_key"], given["stream"]
    return RotationConfig(
        current=given["current_tier"],
        previous=given["previous_tier"],
        older=given["older_tier"],
        retain_periods=given["retain_periods"],
        archive_bucket=archive_bucket.bucket_name if archive_bucket else None,
        archive_prefix=given["archive_prefix"],
        create_lead_seconds=int((lead or timedelta(minutes=15)).total_seconds()),
        missing_table_alarm_seconds=int(alarm_lead.total_seconds()) if alarm_lead else None,
        point_in_time_recovery=given["point_in_time_recovery"],
        kms_key_arn=encryption_key.key_arn if encryption_key else None,
        ttl_attribute=given["time_to_live_attribute"],
        stream_view_type=stream.value if stream else None,
        deletion_protection=given["deletion_protection"],
        throttled_keys_insights=given["throttled_keys_insights"],
        max_concurrency=given["max_concurrency"],
        max_changes_per_run=given["max_changes_per_run"],
        metric_namespace=METRIC_NAMESPACE,
    )


def _parsed_period(period: RotationPeriod | str) -> RotationPeriod | None:
    try:
        return RotationPeriod.parse(period)
    except ValueError:
        return None


def _to_timedelta(name: str, value: Duration | None, default: Duration) -> timedelta:
    duration = value or default
    if Token.is_unresolved(duration.to_seconds()):
        raise ValidationError(f"{name} must be a literal duration")
    return timedelta(seconds=duration.to_seconds())


def _check_overlapping_rotations(problems: Problems, scope: Construct, pattern: str, rotation_class: type) -> None:
    """Two rotations in one app whose table names could match each other's IAM pattern are a synth error."""
    clashes = [
        path_of(other)
        for other in scope.node.root.node.find_all()
        if isinstance(other, rotation_class) and globs_overlap(pattern, other.table_name_pattern)
    ]
    problems.check(
        not clashes,
        f"table names {pattern} overlap those of {', '.join(clashes)}; give each rotation a prefix that "
        "cannot produce the other's names (e.g. readings_eu and readings_us, not readings and readings_20)",
    )
