# handler.py
"""A device's reading handler, and the operator's "more capacity" function."""

from __future__ import annotations

import os
from typing import Any

import boto3


def record(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Store one reading of ``event["device"]``."""
    boto3.client("dynamodb").put_item(
        TableName=os.environ["TABLE"],
        Item={"device": {"S": event["device"]}, "at": {"N": str(event["at"])}},
    )
    return {"stored": event["device"]}


def more_capacity(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Give the table ``event["units"]`` read and write capacity units."""
    units = int(event["units"])
    boto3.client("dynamodb").update_table(
        TableName=os.environ["TABLE"],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": units, "WriteCapacityUnits": units},
    )
    return {"units": units}
