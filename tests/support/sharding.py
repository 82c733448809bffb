"""ShardedTable's test tables and doubles: the audit-log key schema, a settable clock, injected throttles."""

from __future__ import annotations

import random

import boto3

from cdk_ts_runtime import ShardedTable
from cdk_ts_runtime._retries import WRITE_PATH
from tests.support.waiting import wait_until_active
from tests.support.wire import answer, on_demand_throttle, parse_error, provisioned_throttle

#: The reason of a base-table partition (key range) at its write limit.
KEY_RANGE = "TableWriteKeyRangeThroughputExceeded"


def throttle(*reasons, on_demand=False, table="audit"):
    """A PutItem throttle as botocore parses DynamoDB's answer: the provisioned shape, or ``on_demand``'s.

    No reasons: the answer of an engine (or an older DynamoDB) that names none.
    """
    body = on_demand_throttle(table, *reasons) if on_demand else provisioned_throttle(table, *reasons)
    return parse_error(body)


def throttle_puts(client, table, *, times=None, on_demand=False, reasons=(KEY_RANGE,)):
    """Answer ``client``'s PutItem calls on ``table`` with a key-range throttle: every one, or the next ``times``.

    The answer is DynamoDB's wire body in the table's billing mode (``on_demand``: ``ThrottlingException`` with
    ``throttlingReasons``), parsed by the client's own botocore. Returns the counter, ``{"throttles": times}``;
    set it again to throttle more calls.
    """
    pending = {"throttles": times}
    make = on_demand_throttle if on_demand else provisioned_throttle

    def answer_for(request):
        if request.get("TableName") != table:
            return None
        if pending["throttles"] is None:
            return make(table, *reasons)
        if pending["throttles"]:
            pending["throttles"] -= 1
            return make(table, *reasons)
        return None

    answer(client, "PutItem", answer_for)
    return pending


def create_tables(client, prefix, *, main_capacity=None, main_max_writes=None):
    """Create ``<prefix>-audit`` (file_path + timestamp) and its shard-metadata table; wait until both are ACTIVE.

    The main table is on-demand, capped at ``main_max_writes`` write request units a second when given
    (``OnDemandThroughput``), or provisioned with ``main_capacity`` units (read and write) when given.
    """
    main, metadata = f"{prefix}-audit", f"{prefix}-audit-shards"
    capacity: dict = {"BillingMode": "PAY_PER_REQUEST"}
    if main_capacity is not None:
        capacity = {"BillingMode": "PROVISIONED", "ProvisionedThroughput": {
            "ReadCapacityUnits": main_capacity, "WriteCapacityUnits": main_capacity}}
    elif main_max_writes is not None:
        capacity["OnDemandThroughput"] = {"MaxWriteRequestUnits": main_max_writes}
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
        **capacity,
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


def write_client(client):
    """A client to ``client``'s engine set up as the library sets up its write path: one attempt (``WRITE_PATH``)."""
    return boto3.client(
        "dynamodb", region_name=client.meta.region_name, endpoint_url=client.meta.endpoint_url,
        aws_access_key_id="testing", aws_secret_access_key="testing", config=WRITE_PATH,
    )


def sharded(tables, **kwargs):
    """A ShardedTable over ``(client, main, metadata)`` on a fake clock, no real sleeps, a seeded rng.

    Its writes go through a one-attempt client (:func:`write_client`, as the library creates it: a throttle
    reaches the writer on the first throttled request), ``table.dynamodb``; its reads and the metadata table
    through ``client``.
    """
    client, main, metadata = tables
    kwargs.setdefault("clock", Clock())
    kwargs.setdefault("sleep", lambda _s: None)
    kwargs.setdefault("rng", random.Random(1))
    kwargs.setdefault("dynamodb_read_client", client)
    kwargs.setdefault("dynamodb_client", write_client(client))
    return ShardedTable(main, metadata, partition_key="file_path", sort_key="timestamp", **kwargs)


def metadata_item(tables, key):
    """The stored shard-metadata item of ``key`` (a consistent read), or None."""
    client, _main, metadata = tables
    return client.get_item(TableName=metadata, Key={"file_path": {"S": key}}, ConsistentRead=True).get("Item")


def shard_history(item):
    """The metadata item's ``shard_history`` as ``(epoch, count)`` pairs, oldest first."""
    entries = item.get("shard_history", {}).get("SS", [])
    return sorted((int(epoch), int(count)) for epoch, count in (entry.split(":") for entry in entries))
