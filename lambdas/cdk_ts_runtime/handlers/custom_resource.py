"""The deploy-time reconcile as a CloudFormation custom resource, and the reply CloudFormation waits on.

Create and Update run ``reconcile`` now, so the current period's table exists once ``cdk deploy``
finishes. Delete does nothing: period tables hold data and outlive the stack. The reply is sent with
the standard library only, like AWS's cfn-response module.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from cdk_ts_runtime.rotation import TableRotator
from cdk_ts_runtime.table_layout import ENV_TABLE_PREFIX

logger = logging.getLogger(__name__)


def is_request(event: Mapping[str, Any]) -> bool:
    """True for a CloudFormation custom resource request (it carries ``RequestType`` and ``ResponseURL``)."""
    return "RequestType" in event and "ResponseURL" in event


def handle(event: dict[str, Any], context: object, build: Callable[[], TableRotator]) -> dict[str, Any]:
    """Reconcile on Create/Update, nothing on Delete, and always reply to CloudFormation before returning."""
    physical_id = event.get("PhysicalResourceId") or f"rotation-{os.environ.get(ENV_TABLE_PREFIX, 'tables')}"
    try:
        data: dict[str, Any] = {}
        if event["RequestType"] in ("Create", "Update"):
            report = build().run("reconcile", datetime.now(UTC))
            data = {"Actions": str(len(report["actions"]))}
        send(event, context, "SUCCESS", data, physical_id)
        return data
    except Exception as error:  # CloudFormation waits an hour for a reply that never comes otherwise
        logger.exception("deploy-time reconcile failed")
        send(event, context, "FAILED", {}, physical_id, reason=f"{type(error).__name__}: {error}")
        raise


def send(
    event: Mapping[str, Any],
    context: object,
    status: str,
    data: Mapping[str, Any],
    physical_resource_id: str,
    *,
    reason: str | None = None,
) -> None:
    """PUT the SUCCESS/FAILED response to the pre-signed ``ResponseURL`` CloudFormation waits on.

    :param event: the custom resource request.
    :param context: the Lambda context (its log stream is named in the default reason).
    :param status: ``"SUCCESS"`` or ``"FAILED"``.
    :param data: the ``Data`` attributes returned to CloudFormation.
    :param physical_resource_id: the resource's physical ID.
    :param reason: why, shown in CloudFormation events (first 1,000 characters).
        Default: None — "See CloudWatch Logs stream {log stream}".
    """
    log_stream = getattr(context, "log_stream_name", "unknown")
    body = json.dumps({
        "Status": status,
        "Reason": (reason or f"See CloudWatch Logs stream {log_stream}")[:1000],
        "PhysicalResourceId": physical_resource_id,
        "StackId": event["StackId"],
        "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"],
        "NoEcho": False,
        "Data": dict(data),
    }).encode()
    request = urllib.request.Request(  # noqa: S310 - the URL is CloudFormation's pre-signed S3 URL
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        response.read()
