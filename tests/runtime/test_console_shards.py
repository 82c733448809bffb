"""``cdk-ts shards`` on moto: a key's history with the count in force, a shrink still pending, and an unknown key."""

from __future__ import annotations

import json

import boto3

from cdk_ts.console.__main__ import main
from tests.support.sharding import Clock, create_tables, sharded


def test_it_shows_each_count_with_when_it_began_and_a_pending_shrink(aws, capsys):
    client = boto3.client("dynamodb", region_name="us-east-1")
    tables = (client, *create_tables(client, "console"))
    clock = Clock()  # 2026-01-01T00:00:00Z
    table = sharded(tables, clock=clock, sort_key_time_unit="s", cooldown_seconds=1)
    table.put_item({"file_path": "/hot", "timestamp": int(clock())})
    clock.now += 10
    table.grow("/hot", table.shard_info("/hot", fresh=True), target=16)
    clock.now += 600
    table.metadata.shrink("/hot", table.shard_info("/hot", fresh=True), 2)

    assert main(["shards", "/hot", "--table", tables[2], "--at", "2026-01-01T00:10:30Z", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(e["since_utc"], e["count"], e["state"]) for e in report["entries"]] == [
        ("2026-01-01T00:00:00Z", 1, "past"),
        ("2026-01-01T00:00:10Z", 16, "in force"),
        ("2026-01-01T00:11:10Z", 2, "pending"),
    ]
    assert (report["count_now"], report["readable_shards"]) == (16, 16)
    assert report["time_sharded_since_utc"] == "2026-01-01T00:00:00Z"

    assert main(["shards", "/hot", "--table", tables[2], "--at", "2026-01-01T00:12:00Z"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("/hot: 2 shards now; 16 at most ever")
    assert "2026-01-01T00:11:10Z     2 shards  in force" in text


def test_a_key_never_written_has_one_shard_and_no_history(aws, capsys):
    client = boto3.client("dynamodb", region_name="us-east-1")
    _client, _main, metadata = (client, *create_tables(client, "console-empty"))
    assert main(["shards", "/cold", "--table", metadata]) == 0
    assert "no metadata" in capsys.readouterr().out
