"""ShardedTable's test tables and doubles: the audit-log key schema, a settable clock, injected throttles."""

from __future__ import annotations

import random

from botocore.exceptions import ClientError

from cdk_ts_runtime.sharding import ShardedTable
from tests.support.requests import inject_failure
from tests.support.waiting import wait_until_active

#: The ThrottlingReasons reason of a partition (key range) at its write limit.
KEY_RANGE = "TableWriteKeyRangeThroughputExceeded"


def throttle(*reasons):
    """A PutItem ProvisionedThroughputExceededException carrying ``reasons`` as its ThrottlingReasons."""
    body = {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "injected"}}
    if reasons:
        body["ThrottlingReasons"] = [
            {"reason": r, "resource": "arn:aws:dynamodb:us-east-1:1:table/audit"} for r in reasons
        ]
    return ClientError(body, "PutItem")


def throttle_puts(client, table, *, times=None):
    """Throttle ``client``'s PutItem calls on ``table`` by key range: every one, or the next ``times``.

    Returns the counter, ``{"throttles": times}``; set it again to throttle more calls.
    """
    pending = {"throttles": times}

    def error_for(params):
        if params["TableName"] != table:
            return None
        if pending["throttles"] is None:
            return throttle(KEY_RANGE)
        if pending["throttles"]:
            pending["throttles"] -= 1
            return throttle(KEY_RANGE)
        return None

    inject_failure(client, "PutItem", error_for)
    return pending


def create_tables(client, prefix):
    """Create ``<prefix>-audit`` (file_path + timestamp) and its shard-metadata table; wait until both are ACTIVE."""
    main, metadata = f"{prefix}-audit", f"{prefix}-audit-shards"
    client.create_table(
        TableName=main,
        KeySchema=[
            {"AttributeName": "file_path", "KeyType": "HASH"},
            {"AttributeName": "timestamp", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "file_path", "AttributeType": "S"},
            {"AttributeName": "timestamp", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.create_table(
        TableName=metadata,
        KeySchema=[{"AttributeName": "file_path", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "file_path", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    wait_until_active(client, main, metadata)
    return main, metadata


class Clock:
    """A clock that stands still until a test moves ``now`` (epoch seconds, default 2026-01-01T00:00Z)."""

    def __init__(self, start=1_767_225_600.0):
        self.now = start

    def __call__(self):
        return self.now


def sharded(tables, **kwargs):
    """A ShardedTable over ``(client, main, metadata)`` on a fake clock, no real sleeps, a seeded rng."""
    client, main, metadata = tables
    kwargs.setdefault("clock", Clock())
    kwargs.setdefault("sleep", lambda _s: None)
    kwargs.setdefault("rng", random.Random(1))
    return ShardedTable(
        main, metadata, partition_key="file_path", sort_key="timestamp", dynamodb_client=client, **kwargs
    )


def metadata_item(tables, key):
    """The stored shard-metadata item of ``key`` (a consistent read), or None."""
    client, _main, metadata = tables
    return client.get_item(TableName=metadata, Key={"file_path": {"S": key}}, ConsistentRead=True).get("Item")


def shard_history(item):
    """The metadata item's ``shard_history`` as ``(epoch, count)`` pairs, oldest first."""
    entries = item.get("shard_history", {}).get("SS", [])
    return sorted((int(epoch), int(count)) for epoch, count in (entry.split(":") for entry in entries))
