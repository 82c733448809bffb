"""Dynamic write sharding on virtual time, driving the real ShardedTable, plus read fan-out latency.

Run: .venv/bin/python -m bench.sharding [--seconds 60] [--plot bench/results/sharding.png]

Part 1 simulates one partition limit of 1,000 WCU/s per physical key (a write over the limit in
the current virtual second is throttled with the TableWriteKeyRangeThroughputExceeded reason) and
offers 10x that on one logical key. The simulated data plane is the environment; the metadata table
is moto's, and the sharding decisions are ShardedTable's own code. Part 2 times ``query`` over
1..64 shards against a moto_server on 127.0.0.1, in parallel and one shard after another.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path

import boto3
from botocore.exceptions import ClientError
from moto import mock_aws

from cdk_ts_runtime.sharding import ShardedTable
from examples.local_aws import server_client_for, start_moto_server

PARTITION_LIMIT = 1000  # WCU/s one partition (one physical key) accepts
KEY = "/hot/file.mp4"


class VirtualClock:
    def __init__(self) -> None:
        self.now = 1_767_225_600.0

    def __call__(self) -> float:
        return self.now


class PartitionLimitedTable:
    """The main table's data plane: per physical key, at most PARTITION_LIMIT writes per virtual second."""

    def __init__(self, metadata_client, main_table: str, clock: VirtualClock) -> None:
        self.metadata_client = metadata_client
        self.main_table = main_table
        self.clock = clock
        self.window: Counter[str] = Counter()
        self.second = int(clock())

    def put_item(self, TableName: str, Item: dict, **kwargs):  # noqa: N803 - boto3's parameter names
        if TableName != self.main_table:
            return self.metadata_client.put_item(TableName=TableName, Item=Item, **kwargs)
        second = int(self.clock())
        if second != self.second:
            self.window.clear()
            self.second = second
        key = Item["pk"]["S"]
        if self.window[key] >= PARTITION_LIMIT:
            raise ClientError(
                {
                    "Error": {"Code": "ProvisionedThroughputExceededException", "Message": "partition limit"},
                    "ThrottlingReasons": [
                        {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": self.main_table}
                    ],
                },
                "PutItem",
            )
        self.window[key] += 1
        return {}

    def __getattr__(self, name):
        return getattr(self.metadata_client, name)


def simulate(growth: str, max_shards: int, seconds: int, offered: int) -> list[dict]:
    """Per virtual second: offered, written, throttled and the shard count at its end."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="meta",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        clock = VirtualClock()
        table = ShardedTable(
            "main",
            "meta",
            partition_key="pk",
            sort_key="sk",
            growth=growth,
            max_shards=max_shards,
            dynamodb_client=PartitionLimitedTable(client, "main", clock),
            clock=clock,
            rng=random.Random(42),
            sleep=lambda _s: None,
            max_attempts=1,
            cache_ttl_seconds=1,
        )
        timeline = []
        step = 1.0 / offered
        for second in range(seconds):
            written = throttled = 0
            for i in range(offered):
                clock.now += step
                try:
                    table.put_item({"pk": KEY, "sk": second * offered + i})
                    written += 1
                except ClientError:
                    throttled += 1
            timeline.append(
                {
                    "second": second + 1,
                    "offered": offered,
                    "written": written,
                    "throttled": throttled,
                    "shards": table.shard_info(KEY).number_of_shards,
                }
            )
        return timeline


def summary(timeline: list[dict]) -> tuple[int | None, float | None, float]:
    """(time to converge, throttled fraction after it, share of offered load written in the last 10 s)."""
    converged = None
    for index in range(len(timeline)):
        if all(t["written"] >= 0.9 * t["offered"] for t in timeline[index:]):
            converged = timeline[index]["second"]
            break
    after = timeline[converged:] if converged is not None else []
    throttled = sum(t["throttled"] for t in after) / sum(t["offered"] for t in after) if after else None
    tail = timeline[-10:]
    return converged, throttled, sum(t["written"] for t in tail) / sum(t["offered"] for t in tail)


def fan_out(shard_counts: list[int], repeat: int) -> list[tuple[int, float, float]]:
    """Median seconds of ``query`` over N shards: one after another vs in parallel, on moto_server."""
    server = start_moto_server()
    try:
        client = server_client_for(server)
        for name, keys in (("fan-main", [("pk", "HASH"), ("sk", "RANGE")]), ("fan-meta", [("pk", "HASH")])):
            client.create_table(
                TableName=name,
                KeySchema=[{"AttributeName": k, "KeyType": t} for k, t in keys],
                AttributeDefinitions=[
                    {"AttributeName": k, "AttributeType": "S" if k == "pk" else "N"} for k, _ in keys
                ],
                BillingMode="PAY_PER_REQUEST",
            )
        results = []
        for count in shard_counts:
            key = f"/fan/{count}"
            client.put_item(
                TableName="fan-meta",
                Item={
                    "pk": {"S": key},
                    "number_of_shards": {"N": str(count)},
                    "last_updated": {"N": "1"},
                    "shard_history": {"SS": [f"1:{count}"]},
                },
            )
            for shard in range(1, count + 1):
                for i in range(5):
                    client.put_item(
                        TableName="fan-main", Item={"pk": {"S": f"{key}_{shard}"}, "sk": {"N": str(shard * 10 + i)}}
                    )
            timings = {}
            for workers in (1, 16):
                table = ShardedTable(
                    "fan-main",
                    "fan-meta",
                    partition_key="pk",
                    sort_key="sk",
                    dynamodb_client=client,
                    max_workers=workers,
                )
                assert len(table.query(key)) == 5 * count
                samples = []
                for _ in range(repeat):
                    started = time.perf_counter()
                    table.query(key)
                    samples.append(time.perf_counter() - started)
                timings[workers] = statistics.median(samples)
            results.append((count, timings[1], timings[16]))
        return results
    finally:
        server.stop()


def plot(timelines: dict[str, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for label, timeline in timelines.items():
        seconds = [t["second"] for t in timeline]
        top.plot(seconds, [t["written"] for t in timeline], label=label)
        bottom.step(seconds, [t["shards"] for t in timeline], where="post", label=label)
    top.axhline(timelines[next(iter(timelines))][0]["offered"], color="grey", linestyle="--", label="offered")
    top.set_ylabel("writes/s accepted")
    bottom.set_ylabel("shards")
    bottom.set_xlabel("virtual seconds")
    top.legend()
    top.set_title("10x one partition's write limit on one key")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--offered", type=int, default=10 * PARTITION_LIMIT)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    policies = {"unsharded": ("increment", 1), "increment (+1)": ("increment", 64), "double": ("double", 64)}
    timelines = {}
    print(
        f"| policy | converged (>= 90% of {args.offered}/s) at | throttled after | written, last 10 s | shards at end |"
    )
    print("|---|---|---|---|---|")
    for label, (growth, max_shards) in policies.items():
        timeline = simulate(growth, max_shards, args.seconds, args.offered)
        timelines[label] = timeline
        converged, throttled, tail = summary(timeline)
        print(
            f"| {label} | {f'{converged} s' if converged else 'never'} | "
            f"{f'{throttled:.2%}' if throttled is not None else '-'} | {tail:.1%} | {timeline[-1]['shards']} |"
        )
    if args.plot:
        plot(timelines, args.plot)
        print(f"\nplot: {args.plot}")
    print("\n| shards | sequential query (median s) | parallel, 16 workers (median s) | speed-up |")
    print("|---|---|---|---|")
    for count, sequential, parallel in fan_out([1, 2, 4, 8, 16, 32, 64], args.repeat):
        print(f"| {count} | {sequential:.4f} | {parallel:.4f} | {sequential / parallel:.1f}x |")


if __name__ == "__main__":
    main()
