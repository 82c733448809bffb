"""Reply to a CloudFormation custom resource request (stdlib only, like AWS's cfn-response module)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping
from typing import Any


def send(
    event: Mapping[str, Any],
    context: object,
    status: str,
    data: Mapping[str, Any],
    physical_resource_id: str,
    *,
    reason: str | None = None,
) -> None:
    """PUT the SUCCESS/FAILED response to the pre-signed ``ResponseURL`` CloudFormation waits on."""
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
