"""The scenario's sharding step: a hot key written through the sharded writer until it spreads, read back.

The emulator has no partition limit, so one is injected at the client (a botocore event hook) on a simulated
clock that the writer's waits move too.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from examples.progress import say

if TYPE_CHECKING:
    from examples.scenario import Scenario


def sharding(scenario: Scenario) -> None:
    """A hot key through the sharded writer, read back from every shard."""
    from botocore.exceptions import ClientError

    from cdk_ts_runtime import ShardedTable

    say("\n5. Sharded audit log: a hot key over a partition limit injected at the client (the emulator has none)")
    client = scenario.boto3.client("dynamodb")
    # Simulated time: each write is a tenth of a second later and the writer's waits move the same clock,
    # so 20 s of a key offered 10 writes a second pass in the demo without a real wait.
    simulated = {"now": time.time()}
    per_second_limit = 4  # writes one partition key takes a simulated second (DynamoDB's is 1,000 WCU)
    taken: dict[str, list[float]] = {}

    def partition_limit(params, **_kwargs):
        if params.get("TableName") != scenario.outputs["AuditLogTableName"]:
            return
        now = simulated["now"]
        recent = [at for at in taken.get(params["Item"]["file_path"]["S"], []) if at > now - 1]
        if len(recent) >= per_second_limit:
            raise ClientError(
                {
                    "Error": {"Code": "ProvisionedThroughputExceededException", "Message": "injected"},
                    "ThrottlingReasons": [{"reason": "TableWriteKeyRangeThroughputExceeded"}],
                },
                "PutItem",
            )
        taken[params["Item"]["file_path"]["S"]] = [*recent, now]

    client.meta.events.register("provide-client-params.dynamodb.PutItem", partition_limit)
    audit = ShardedTable(
        scenario.outputs["AuditLogTableName"],
        scenario.outputs["AuditLogShardsTableName"],
        partition_key="file_path",
        sort_key="timestamp",
        dynamodb_client=client,
        cooldown_seconds=1,
        growth="increment",
        clock=lambda: simulated["now"],
        sleep=lambda seconds: simulated.update(now=simulated["now"] + seconds),
    )
    start = int(time.time())
    for i in range(200):
        simulated["now"] += 0.1
        audit.put_item({"file_path": "/releases/viral.mp4", "timestamp": start * 1000 + i, "action": "GET"})
    count = audit.shard_count("/releases/viral.mp4")
    items = audit.query("/releases/viral.mp4")
    scenario.check("hot key grew past one shard on partition throttles", count > 1, f"{count} shards")
    scenario.check("every write read back across the shards", len(items) == 200, f"{len(items)} of 200 items")
