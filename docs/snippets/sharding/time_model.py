import os

from cdk_ts_runtime import ShardedTable, ShardShrink

audit = ShardedTable.from_env(
    os.environ,
    sort_key_time_unit="s",                          # "s", "ms" (epoch numbers) or "iso" (ISO 8601 text, UTC)
    shrink=ShardShrink(partition_write_units=1000),  # off unless given: give shards back when the key cools
)
audit.put_item({"file_path": "/viral.mp4", "timestamp": 1767225600, "action": "GET"})
audit.put_item({"file_path": "/viral.mp4", "timestamp": 1767222000, "action": "GET"})  # an hour late: fine
day = audit.query("/viral.mp4", gte=1767222000)
assert [i["timestamp"] for i in day] == [1767222000, 1767225600]  # from the shards in force since then only
history = audit.shard_info("/viral.mp4", fresh=True)
assert history.shards_over(1767222000, 1767229200) == 1        # what that window read: one shard
