"""What runs a rotation: its function, the schedules that invoke it, and the reconcile run at deploy time."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_

from cdk_ts._defaults import runtime_function
from cdk_ts._lookups import stack_of
from cdk_ts.rotation._iam import grant_rotation_permissions
from cdk_ts.rotation._lock import acknowledge_unreserved_concurrency, grant_lock
from cdk_ts.rotation._settings import RotationSettings
from cdk_ts.rotation._texts import CREATE_RETRY, function_description, rule_description
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG
from cdk_ts_runtime._rotation.lock import LOCK_TABLE_ENV, RUN_TIMEOUT_ENV

if TYPE_CHECKING:
    from cdk_ts.rotation.tables import RotatingTimeSeriesTables

#: How long one rotation run may take (the function's timeout).
RUN_TIMEOUT = Duration.minutes(5)
#: How long CloudFormation waits for the deploy-time run's answer (its default is an hour). It invokes the
#: function asynchronously: a run that dies before answering is retried by Lambda after 1, then 2 minutes,
#: and then kept in the function's dead-letter queue; three runs and those waits fit in 20 minutes.
DEPLOY_TIME_RUN_TIMEOUT = Duration.minutes(20)

#: The four rules of a rotation: create_new, its retry, resize_old, and reconcile (None when disabled).
Schedules = tuple[events.Rule, events.Rule, events.Rule, "events.Rule | None"]


def rotation_function(tables: RotatingTimeSeriesTables, reserved_concurrent_executions: int | None) -> lambda_.Function:
    """The rotation function of ``tables``, set as ``tables.function``, with its grants and lock."""
    tables.function = runtime_function(
        tables,
        "Rotation",
        handler="cdk_ts_runtime.handlers.rotation.handler",
        description=function_description(tables.table_prefix, tables.period),
        environment={
            **tables.layout.to_env(),
            ENV_ROTATION_CONFIG: stack_of(tables).to_json_string(tables.config.to_dict()),
            LOCK_TABLE_ENV: tables.lock_table.table_name,
            # the longest a run can hold the lock, so a lock item expiring further ahead counts as malformed
            RUN_TIMEOUT_ENV: str(int(RUN_TIMEOUT.to_seconds())),
        },
        timeout=RUN_TIMEOUT,
        reserved_concurrent_executions=reserved_concurrent_executions,
        dead_letter_queue=tables.function_dead_letter_queue,
    )
    grant_rotation_permissions(tables)  # reads tables.function
    grant_lock(tables.lock_table, tables.function)
    if reserved_concurrent_executions is None:
        acknowledge_unreserved_concurrency(tables.function)
    return tables.function


def schedules(tables: RotatingTimeSeriesTables, settings: RotationSettings, *, reconcile: bool) -> Schedules:
    """The rules that invoke ``tables.function``: create_new, its retry, resize_old and (optionally) reconcile."""
    create_new = _schedule(tables, "CreateNew", "create_new", events.Schedule.cron(**settings.create_new))
    # The next table is needed at the boundary: a create DynamoDB refuses for longer than one run can wait
    # (too many tables changing in the account) is tried again before it. The hourly reconcile is no such
    # retry: a rate schedule runs at minutes set by the deploy time, rarely inside the lead window.
    create_new_retry = _schedule(
        tables, "CreateNewRetry", "create_new", events.Schedule.cron(**settings.create_new_retry),
        described_as=CREATE_RETRY,
    )
    resize_old = _schedule(tables, "ResizeOld", "resize_old", events.Schedule.cron(**settings.resize_old))
    reconcile_rule = None
    if reconcile:
        reconcile_rule = _schedule(tables, "Reconcile", "reconcile", events.Schedule.rate(settings.reconcile_every))
    return create_new, create_new_retry, resize_old, reconcile_rule


def _schedule(
    tables: RotatingTimeSeriesTables, construct_id: str, operation: str, schedule: events.Schedule, *,
    described_as: str | None = None,
) -> events.Rule:
    rule = events.Rule(
        tables,
        construct_id,
        schedule=schedule,
        description=rule_description(described_as or operation, tables.table_prefix, tables.period),
    )
    rule.add_target(targets.LambdaFunction(
        tables.function,
        # EventBridge's scheduled time, so a retried run acts on the period it was scheduled for.
        event=events.RuleTargetInput.from_object({"Operation": operation, "time": events.EventField.time}),
        retry_attempts=8,
        max_event_age=Duration.hours(2),
        dead_letter_queue=tables.schedule_dead_letter_queue,
    ))
    return rule


def deploy_time_run(tables: RotatingTimeSeriesTables) -> CustomResource:
    """The custom resource that reconciles during ``cdk deploy``, again whenever the configuration changes."""
    return CustomResource(
        tables,
        "DeployTimeReconcile",
        service_token=tables.function.function_arn,
        resource_type="Custom::CdkTsRotation",
        service_timeout=DEPLOY_TIME_RUN_TIMEOUT,
        # A changed configuration changes this property, so CloudFormation reconciles again.
        properties={"Layout": tables.layout.to_env(), "ConfigHash": _config_fingerprint(tables)},
    )


def _config_fingerprint(tables: RotatingTimeSeriesTables) -> str:
    stack = stack_of(tables)
    resolved = stack.resolve(stack.to_json_string(tables.config.to_dict()))
    return hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
