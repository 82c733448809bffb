"""The deploy-time reconcile as a CloudFormation custom resource, and the reply CloudFormation waits on.

Create and Update run ``reconcile`` now, so the current period's table exists once ``cdk deploy``
finishes. Delete keeps the period tables (they hold data and outlive the stack); when the stack itself
is being deleted it removes the event source mappings the rotation created from its period tables'
streams to its own stream consumer (a table proves it is the rotation's by its tags, never by its name
alone), and answers SUCCESS whatever happens. The reply is sent with the
standard library only, like AWS's cfn-response module.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

import boto3

from cdk_ts_runtime import _deprecations
from cdk_ts_runtime._errors import CdkTsError
from cdk_ts_runtime._periods import parse_table_name
from cdk_ts_runtime._retries import CONTROL_PLANE
from cdk_ts_runtime._rotation.ownership import is_owned
from cdk_ts_runtime._rotation.report import describe_table
from cdk_ts_runtime._rotation.rotator import TableRotator
from cdk_ts_runtime._table_layout import ENV_TABLE_PREFIX

logger = logging.getLogger(__name__)


REQUEST_TYPES = ("Create", "Update", "Delete")
#: How long the deploy-time run waits for a scheduled run that holds the rotation lock; after that it answers
#: SUCCESS, reporting the other run (which converges the same tables).
LOCK_WAIT_SECONDS = 120
_REPLY_FIELDS = ("StackId", "RequestId", "LogicalResourceId")
#: TLS settings for the reply; None is the system's default verification (tests pass their own CA).
SSL_CONTEXT: ssl.SSLContext | None = None


class UnanswerableRequestError(CdkTsError, ValueError):
    """A request CloudFormation cannot be answered for (no usable ``ResponseURL``)."""


def is_request(event: Mapping[str, Any]) -> bool:
    """True for a CloudFormation custom resource request (it carries ``RequestType`` or ``ResponseURL``)."""
    return "RequestType" in event or "ResponseURL" in event


def handle(
    event: dict[str, Any],
    context: object,
    build: Callable[[], TableRotator],
    stack_status: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Reconcile on Create/Update, clean up on Delete, and reply to CloudFormation whenever it can be answered.

    A request with no ``https`` ResponseURL cannot be answered and raises :class:`UnanswerableRequestError`.
    An unknown ``RequestType`` or missing reply fields answer FAILED with the reason. Delete always
    answers SUCCESS (period tables outlive the stack, and a failed reply would block stack deletion); see
    :func:`remove_stream_mappings` for what it removes, with the outcome in the reply's reason.

    :param event: the custom resource request.
    :param context: the Lambda context.
    :param build: builds the rotator from the function's environment (called only when a run is needed).
    :param stack_status: gives the status of the stack by its ID.
        Default: None — CloudFormation's DescribeStacks.
    """
    url = event.get("ResponseURL")
    if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme != "https":
        raise UnanswerableRequestError(f"custom resource request without an https ResponseURL ({url!r}): cannot reply")
    physical_id = event.get("PhysicalResourceId") or f"rotation-{os.environ.get(ENV_TABLE_PREFIX, 'tables')}"
    request_type = event.get("RequestType")
    missing = [name for name in _REPLY_FIELDS if not event.get(name)]
    if missing or request_type not in REQUEST_TYPES:
        problem = (
            f"missing {', '.join(missing)}" if missing
            else f"unknown RequestType {request_type!r}; expected one of {', '.join(REQUEST_TYPES)}"
        )
        send(event, context, "FAILED", {}, physical_id, reason=problem)
        return {}
    if request_type == "Delete":
        reason = remove_stream_mappings(event["StackId"], build, stack_status or _stack_status)
        send(event, context, "SUCCESS", {}, physical_id, reason=reason)
        return {}
    try:
        rotator = build()
        report = rotator.run("reconcile", rotator.clock(), wait_for_lock=LOCK_WAIT_SECONDS)
        data = {"Actions": str(len(report["actions"]))}
    except Exception as error:  # CloudFormation waits an hour for a reply that never comes otherwise
        logger.exception("deploy-time reconcile failed")
        send(event, context, "FAILED", {}, physical_id, reason=f"{type(error).__name__}: {error}")
        raise
    send(event, context, "SUCCESS", data, physical_id)
    return data


def remove_stream_mappings(
    stack_id: str, build: Callable[[], TableRotator], stack_status: Callable[[str], str]
) -> str:
    """On stack deletion, delete the mappings from this rotation's period tables to its stream consumer.

    Only while the stack is ``DELETE_IN_PROGRESS``: a Delete during an update (the resource replaced,
    ``run_at_deploy`` turned off) leaves the running rotation's mappings alone. Only mappings of the
    consumer function on tables named ``{prefix}_{label}`` by this rotation's layout AND carrying this
    rotation's ``cdk-ts:prefix``/``cdk-ts:period`` tags are removed: a look-alike table with the name but
    not the tags, or a table that can no longer be described, keeps its mapping, and the reason says how
    many were kept. Never raises: the outcome, a failure included, is the returned reason (and logged).
    """
    try:
        status = stack_status(stack_id)
        if status != "DELETE_IN_PROGRESS":
            return f"stack is {status}, not being deleted: period tables and their stream mappings are kept"
        rotator = build()
        consumer = rotator.stream_consumer
        if consumer is None:
            return "stack deleted: period tables are kept; no stream consumer, so no mappings to remove"
        layout = rotator.layout
        not_ours: list[str] = []

        def ours(name: str) -> bool:
            if parse_table_name(layout.table_prefix, layout.period, name) is None:
                return False
            description = describe_table(rotator.dynamodb, name)
            if description and is_owned(rotator.dynamodb, description, layout):
                return True
            not_ours.append(name)
            return False

        removed = consumer.detach_all(rotator.lambda_client, ours)
        logger.info("removed %d event source mappings of %s: %s", len(removed), consumer.function_name, removed)
        kept = (
            f"; kept the mappings of {len(not_ours)} table(s) named like period tables but without this rotation's "
            f"tags: {', '.join(sorted(not_ours)[:10])}" if not_ours else ""
        )
        return (
            f"stack deleted: period tables are kept; removed {len(removed)} event source mapping(s) of "
            f"{consumer.function_name} from {layout.table_prefix}_* streams{kept}"
        )
    except Exception as error:  # a failed reply would block stack deletion; report and let it go on
        logger.exception("could not remove the rotation's event source mappings")
        return (
            f"stack deleted: period tables are kept; the event source mappings could not be removed "
            f"({type(error).__name__}: {error}); delete them with aws lambda delete-event-source-mapping"
        )


def _stack_status(stack_id: str) -> str:
    client = boto3.client("cloudformation", config=CONTROL_PLANE)
    return client.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"]


def send(
    event: Mapping[str, Any],
    context: object,
    status: str,
    data: Mapping[str, Any],
    physical_resource_id: str,
    *,
    reason: str | None = None,
) -> None:
    """PUT the SUCCESS/FAILED response to the pre-signed ``https`` ``ResponseURL`` CloudFormation waits on.

    :param event: the custom resource request.
    :param context: the Lambda context (its log stream is named in the default reason).
    :param status: ``"SUCCESS"`` or ``"FAILED"``.
    :param data: the ``Data`` attributes returned to CloudFormation.
    :param physical_resource_id: the resource's physical ID.
    :param reason: why, shown in CloudFormation events (first 1,000 characters).
        Default: None — "See CloudWatch Logs stream {log stream}".
    :raises UnanswerableRequestError: when the ResponseURL is not https.
    """
    url = event["ResponseURL"]
    if urllib.parse.urlsplit(url).scheme != "https":
        raise UnanswerableRequestError(f"ResponseURL {url!r} is not https; refusing to send the reply in clear text")
    log_stream = getattr(context, "log_stream_name", "unknown")
    body = json.dumps({
        "Status": status,
        "Reason": (reason or f"See CloudWatch Logs stream {log_stream}")[:1000],
        "PhysicalResourceId": physical_resource_id,
        **{name: str(event.get(name, "")) for name in _REPLY_FIELDS},
        "NoEcho": False,
        "Data": dict(data),
    }).encode()
    request = urllib.request.Request(  # noqa: S310 - https only, checked above
        url, data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    with urllib.request.urlopen(request, timeout=30, context=SSL_CONTEXT) as response:  # noqa: S310
        response.read()


def __getattr__(name: str) -> Any:
    """Old names of renamed errors, deprecated until the release the registry names."""
    return globals()[_deprecations.renamed_attribute(__name__, name)]
