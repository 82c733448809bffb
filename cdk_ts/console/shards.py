"""``cdk-ts shards``: one sharded key's history, from its shard-metadata table (one consistent GetItem).

Prints the count in force now, every entry of ``shard_history`` (when each count began, a shrink still waiting
to take effect marked as such), and from when items are placed by their sort-key time. Changes nothing.
Exit codes: 0 ok; 2 usage or configuration error (a corrupt item included); 3 an AWS read failed.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from cdk_ts.console import EXIT_OK, ConsoleError, parse_time


def parser() -> argparse.ArgumentParser:
    """The command line of ``cdk-ts shards``."""
    p = argparse.ArgumentParser(
        prog="cdk-ts shards",
        description="A sharded key's shard history: the count in force now and when each count began.",
    )
    p.add_argument("key", help="the logical partition key value (without a shard suffix)")
    p.add_argument("--table", required=True, help="the shard-metadata table (ShardMetadataTable.table)")
    p.add_argument("--partition-key", help="its partition key attribute (default: read from DescribeTable)")
    p.add_argument("--at", help="reference time, ISO-8601 (no zone means UTC); default now")
    p.add_argument("--json", action="store_true", help="print JSON for scripts instead of text")
    return p


def key_history(dynamodb, table: str, key: str, *, partition_key: str | None = None, now: float) -> dict[str, Any]:
    """The key's metadata as a report: ``count_now``, ``entries`` (``since``, ``count``, ``state``) and the rest."""
    from cdk_ts_runtime._items import from_attribute_values
    from cdk_ts_runtime._sharding.metadata import ShardMetadataStore

    if partition_key is None:
        schema = dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]
        partition_key = next(k["AttributeName"] for k in schema if k["KeyType"] == "HASH")
    response = dynamodb.get_item(TableName=table, Key={partition_key: {"S": key}}, ConsistentRead=True)
    if "Item" not in response:
        return {"key": key, "table": table, "recorded": False, "count_now": 1, "entries": []}
    store = ShardMetadataStore(table, partition_key=partition_key, dynamodb=lambda: dynamodb, cooldown_seconds=0,
                               cache_ttl_seconds=0, clock=lambda: now)
    info = store.parse(key, from_attribute_values(response["Item"]))
    in_force = max((since for since, _count in info.history if since <= now), default=None)
    entries = [
        {"since": since, "since_utc": _utc(since), "count": count,
         "state": "pending" if since > now else ("in force" if since == in_force else "past")}
        for since, count in info.history
    ]
    return {
        "key": key, "table": table, "recorded": True, "count_now": info.count_at(now),
        "readable_shards": info.readable_shards, "version": info.version, "max_shards": info.max_shards,
        "time_sharded_since": info.time_sharded_since,
        "time_sharded_since_utc": None if info.time_sharded_since is None else _utc(info.time_sharded_since),
        "entries": entries,
    }


def format_history(report: dict[str, Any]) -> str:
    """The report as text: a header line, then one line per history entry."""
    if not report["recorded"]:
        return f"{report['key']}: no metadata in {report['table']}; the key has 1 shard (never written sharded)"
    since = report["time_sharded_since_utc"]
    lines = [
        f"{report['key']}: {report['count_now']} shards now; {report['readable_shards']} at most ever; "
        f"version {report['version']}; "
        + (f"items placed by their sort-key time since {since}" if since else
           "items placed by their writer's clock (no writer with sort_key_time_unit yet): windows read every shard"),
    ]
    lines += [f"  {e['since_utc']}  {e['count']:>4} shards  {e['state']}" for e in report["entries"]]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Run ``cdk-ts shards``; returns the exit code (errors are reported by the console's caller)."""
    import boto3

    from cdk_ts_runtime._retries import DATA_PATH

    args = parser().parse_args(argv)
    now = parse_time(args.at).timestamp()
    if not args.key:
        raise ConsoleError("the key must not be empty")
    report = key_history(boto3.client("dynamodb", config=DATA_PATH), args.table, args.key,
                         partition_key=args.partition_key, now=now)
    print(json.dumps(report, indent=2) if args.json else format_history(report))
    return EXIT_OK


def _utc(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
