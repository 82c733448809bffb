import os

from cdk_ts_runtime import EmfWriter, MetricPoint, ShardedTable

seen: list[MetricPoint] = []
writer = ShardedTable.from_env(os.environ, metrics=seen.append)  # or metrics=EmfWriter("MyApp/Writers")
writer.put_item({"file_path": "/videos/cat.mp4", "timestamp": 1767225600000, "bytes": 1024})
assert seen == []  # nothing throttled, nothing grown: no metric
lines = []
EmfWriter("MyApp/Writers", write=lines.append)(MetricPoint("Throttles", 1, dimensions={"TableName": "audit", "ThrottleScope": "table"}))
assert '"ThrottleScope":"table"' in lines[0]
