"""Entry point of the custom resource that tells CloudFormation a table's throttled-keys rule name.

Create and Update answer ``Data.RuleName`` (the table's ``DynamoDBContributorInsights-PKT-...`` rule, found by
:func:`cdk_ts_runtime._contributor_insights.throttled_keys_rule`) so the dashboard can graph it; Delete changes
nothing (the rule belongs to the table's insights setting) and answers SUCCESS.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import boto3

from cdk_ts_runtime._contributor_insights import throttled_keys_rule
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._retries import CONTROL_PLANE
from cdk_ts_runtime.handlers.custom_resource import UnanswerableRequestError, send

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery

logger = logging.getLogger(__name__)


def handle(event: dict[str, Any], context: object, find: Callable[[str], str]) -> dict[str, str]:
    """Answer one CloudFormation request with the rule name of the table in ``ResourceProperties.TableName``.

    A failure is answered FAILED with its reason and not raised: Lambda would retry an asynchronous invocation
    that raises and reply a second time to a request CloudFormation has closed.

    :param event: the custom resource request.
    :param context: the Lambda context.
    :param find: gives the rule name of a table (``throttled_keys_rule`` with a client, in production).
    :raises UnanswerableRequestError: for a request without an https ResponseURL (from ``send``).
    """
    if not isinstance(event.get("ResponseURL"), str):
        raise UnanswerableRequestError("custom resource request without a ResponseURL: cannot reply")
    table_name = (event.get("ResourceProperties") or {}).get("TableName")
    physical_id = event.get("PhysicalResourceId") or f"throttled-keys-rule-{table_name}"
    if event.get("RequestType") == "Delete":
        send(event, context, "SUCCESS", {}, physical_id, reason="the rule belongs to the table's insights; kept")
        return {}
    try:
        if not table_name:
            raise ValidationError("ResourceProperties.TableName is missing: give the custom resource the table's name")
        rule = find(table_name)
    except Exception as error:  # CloudFormation waits an hour for a reply that never comes otherwise
        logger.exception("could not find the throttled-keys rule")
        send(event, context, "FAILED", {}, physical_id, reason=f"{type(error).__name__}: {error}")
        return {}
    send(event, context, "SUCCESS", {"RuleName": rule}, rule)
    return {"RuleName": rule}


def handler(event: dict[str, Any], context: object) -> dict[str, str]:
    """Lambda entry point: :func:`handle` with a DynamoDB client made now (at call time)."""
    dynamodb = boto3.client("dynamodb", config=CONTROL_PLANE)
    return handle(event, context, lambda table: throttled_keys_rule(dynamodb, table))
