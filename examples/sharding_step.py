"""The scenario's sharding step: a hot key written through the sharded writer until it spreads, read back.

The emulator has no partition limit, so the step puts the rules proxy (``cdk_ts.testing``) in front of it: the
proxy throttles a key over its partition's write rate as DynamoDB does, in the shape of the table's billing
mode. The sample's audit log is on-demand, so the writer sees ``ThrottlingException`` with
``throttlingReasons``, as on DynamoDB. The proxy's clock is frozen and moved by the writes and by the writer's
waits, so twenty seconds of a hot key pass without a real wait.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from examples.progress import say

if TYPE_CHECKING:
    from examples.scenario import Scenario

#: Writes one partition takes a second in this step: DynamoDB's is 1,000 write units, scaled down so a demo's
#: ten writes a second are a hot key.
PARTITION_WRITES_PER_SECOND = 4
HOT_KEY = "/releases/viral.mp4"
WRITES = 200


def sharding(scenario: Scenario) -> None:
    """A hot key through the sharded writer, over the rules proxy's partition limit; read back from every shard."""
    from cdk_ts.testing import LocalServer, start_rules_proxy
    from cdk_ts_runtime import ShardedTable

    say(f"\n5. Sharded audit log: a hot key over a partition limit of {PARTITION_WRITES_PER_SECOND} writes a "
        "second (the rules proxy in front of the emulator)")
    engine = LocalServer("moto_server", os.environ["AWS_ENDPOINT_URL"], None)  # running already; not ours to stop
    proxy = start_rules_proxy(
        engine, start_time=datetime.now(UTC), write_units_per_second=PARTITION_WRITES_PER_SECOND,
        partition_per_key_value=True,
    )
    try:
        table_name = scenario.outputs["AuditLogTableName"]
        audit = ShardedTable(
            table_name,
            scenario.outputs["AuditLogShardsTableName"],
            partition_key="file_path",
            sort_key="timestamp",
            dynamodb_client=proxy.client(),
            cooldown_seconds=1,
            growth="increment",
            clock=lambda: proxy.now().timestamp(),
            sleep=proxy.advance,
        )
        start = int(proxy.now().timestamp())
        for i in range(WRITES):
            proxy.advance(1 / 10)
            audit.put_item({"file_path": HOT_KEY, "timestamp": start * 1000 + i, "action": "GET"})
        throttles = proxy.refusals(table=table_name, code="ThrottlingException",
                                   reason="TableWriteKeyRangeThroughputExceeded")
        count = audit.shard_count(HOT_KEY)
        items = audit.query(HOT_KEY)
    finally:
        proxy.stop()
    scenario.check("hot key grew past one shard on partition throttles", count > 1 and throttles > 0,
                   f"{count} shards after {throttles} on-demand throttles (ThrottlingException)")
    scenario.check("every write read back across the shards", len(items) == WRITES, f"{len(items)} of {WRITES} items")
