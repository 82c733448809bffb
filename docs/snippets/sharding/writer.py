import os

from cdk_ts_runtime import ShardedTable

audit = ShardedTable.from_env(os.environ)  # or ShardedTable(table, metadata, partition_key=..., sort_key=...)
audit.put_item({"file_path": "/viral.mp4", "timestamp": 1767225600, "action": "GET"})
hour = audit.query("/viral.mp4", between=(1767225600, 1767229200))   # every shard, in parallel, merged by sort key
item = audit.get_item("/viral.mp4", 1767225600)
assert hour == [item] and item["action"] == "GET"
assert audit.shard_count("/viral.mp4") == 1   # grows only when DynamoDB throttles the key's partition
