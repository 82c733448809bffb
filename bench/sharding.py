"""Dynamic write sharding under DynamoDB's per-partition limit, through the rules proxy; plus read fan-out.

Run: .venv/bin/python -m bench.sharding [--seconds 60] [--limit 3] [--plot bench/results/sharding.png] [--only-default]
     .venv/bin/python -m bench.sharding --burst [--limit 10] [--burst-seconds 60] [--cool-seconds 600]

``--burst`` runs the burst scenario instead (:mod:`bench.sharding_burst`): 10x a partition's limit for a minute,
then 0.2x for ten, on the proxy's frozen clock; shards at the peak and the end, and what windows read.

Part 1 offers one logical key 10x one partition's write throughput, open loop (write n is due at n / rate), from a
pool of threads over 4 ``ShardedTable`` instances (as a fleet of processes would), through the harness's rules
proxy on the real clock: a write over a partition key's units per second is answered with
``TableWriteKeyRangeThroughputExceeded`` in the shape of the main table's billing mode (on-demand:
``ThrottlingException`` with ``throttlingReasons``; provisioned: ``ProvisionedThroughputExceededException`` with
``ThrottlingReasons``), so botocore runs unmodified, its retries included. A third default run caps an on-demand
table below the partition's units (``TableWriteMaxOnDemandThroughputExceeded``): the key must not grow. The engine
is dynalite (conditional updates are atomic there, as in DynamoDB). The proxy is
``cdk_ts.testing``'s, the one the tests use (see bench/README.md). Each PutItem
request's outcome is counted per write through botocore's ``needs-retry`` event (one per request, the SDK's retries
included), so the throttled share of the writes offered after convergence is measured apart from the retries of
writes queued before it. Part 2 times ``query`` over 1..64 shards against moto_server on 127.0.0.1, in parallel and
one shard after another.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from botocore.config import Config

# The rules proxy and the emulators are the test harness (tests/support), not a library: imported, not
# copied, so the benchmark measures against the same rules the tests assert on.
from cdk_ts.testing import server_client_for, start_dynalite, start_moto_server, start_rules_proxy
from cdk_ts_runtime import ShardedTable, ShardGrowth
from cdk_ts_runtime._retries import DATA_PATH, WRITE_PATH

KEY = "/hot/file.mp4"
#: botocore's own default for a client given no retry settings (what a user's plain boto3.client has).
SDK_DEFAULT = Config(retries={"mode": "standard"})


#: The main table's capacity settings per billing mode of a run. A provisioned table's units are far above the
#: key's partition limit, so only the partition throttles; ``capped`` is an on-demand table whose own maximum is
#: half a partition's units (``OnDemandThroughput``): only the table throttles, and more shards cannot help.
BILLING = {
    "on-demand": lambda limit: {"BillingMode": "PAY_PER_REQUEST"},
    "provisioned": lambda limit: {"BillingMode": "PROVISIONED",
                                  "ProvisionedThroughput": {"ReadCapacityUnits": 1000, "WriteCapacityUnits": 1000}},
    "capped": lambda limit: {"BillingMode": "PAY_PER_REQUEST",
                             "OnDemandThroughput": {"MaxWriteRequestUnits": max(1, int(limit // 2))}},
}
#: The throttle each billing mode answers with (botocore's service model).
THROTTLE_CODES = ("ThrottlingException", "ProvisionedThroughputExceededException")


def create_tables(client, prefix: str, main_capacity: dict | None = None) -> tuple[str, str]:
    main, metadata = f"{prefix}-main", f"{prefix}-meta"
    for name, keys in ((main, [("pk", "HASH", "S"), ("sk", "RANGE", "N")]), (metadata, [("pk", "HASH", "S")])):
        capacity = (main_capacity if name == main else None) or {"BillingMode": "PAY_PER_REQUEST"}
        client.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": k, "KeyType": t} for k, t, _ in keys],
            AttributeDefinitions=[{"AttributeName": k, "AttributeType": a} for k, _, a in keys],
            **capacity,
        )
    return main, metadata


def record_key_long_ago(client, metadata: str) -> None:
    """The key's metadata as its first writer left it an hour ago: one shard, never grown."""
    epoch = int(time.time()) - 3600
    client.put_item(TableName=metadata, Item={
        "pk": {"S": KEY}, "number_of_shards": {"N": "1"}, "last_updated": {"N": str(epoch)},
        "last_updated_ms": {"N": str(epoch * 1000)}, "version": {"N": "1"}, "max_shards": {"N": "64"},
        "shard_history": {"SS": [f"{epoch}:1"]},
    })


def offer(engine, label: str, *, seconds: int, rate: float, limit: float, processes: int, threads: int,
          growth: ShardGrowth, write_config: Config, existing: bool = False, billing: str = "on-demand") -> dict:
    """Offer ``rate`` writes/s to one key for ``seconds``; per-second acceptance, shards, latencies, throttles.

    ``existing``: the key was recorded an hour before (a key that goes viral), not by the first write.
    ``billing``: the main table's mode (:data:`BILLING`), which decides the throttle's shape.
    """
    # one partition per key value: shards are measured against a key's limit, not against hash collisions
    proxy = start_rules_proxy(engine, create_seconds=0, write_units_per_second=limit, partition_per_key_value=True)
    try:
        admin = proxy.client()
        main, metadata = create_tables(admin, re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-"), BILLING[billing](limit))
        if existing:
            record_key_long_ago(admin, metadata)
        writers = [
            ShardedTable(
                main, metadata, partition_key="pk", sort_key="sk", growth=growth,
                dynamodb_client=proxy.client(config=write_config),
                dynamodb_read_client=proxy.client(config=DATA_PATH),
            )
            for _ in range(processes)
        ]
        records: list[tuple[float, bool, float]] = []  # (offset the call returned, stored, latency s)
        attempts: dict[int, list[bool]] = {}  # serial -> each PutItem request's outcome: throttled or not
        current = threading.local()

        def note_attempt(response=None, caught_exception=None, **_kwargs) -> None:
            """botocore's needs-retry event, once per request (the SDK's retries included); never retries itself."""
            error = (response[1].get("Error", {}) if response else {}).get("Code", "")
            with lock:
                attempts.setdefault(current.serial, []).append(error in THROTTLE_CODES)

        for writer in writers:
            writer.dynamodb.meta.events.register("needs-retry.dynamodb.PutItem", note_attempt)
        samples: list[tuple[float, int, int, int]] = []  # (offset, shards, PutItem requests, PutItem throttled)
        lock = threading.Lock()
        done = threading.Event()
        start = time.monotonic() + 1.0

        def write(serial: int) -> None:
            began = time.monotonic()
            current.serial = serial
            try:
                writers[serial % processes].put_item({"pk": KEY, "sk": serial})
                stored = True
            except Exception:  # noqa: BLE001 - a write refused after every attempt is what is counted
                stored = False
            ended = time.monotonic()
            with lock:
                records.append((ended - start, stored, ended - began))

        def monitor() -> None:
            while not done.is_set():
                offset = time.monotonic() - start
                item = admin.get_item(TableName=metadata, Key={"pk": {"S": KEY}}, ConsistentRead=True).get("Item")
                stats = proxy.stats()
                puts = stats["requests"].get("PutItem", 0)
                throttled = sum(stats["refusals"].get(f"PutItem:{code}", 0) for code in THROTTLE_CODES)
                samples.append((offset, int(item["number_of_shards"]["N"]) if item else 1, puts, throttled))
                done.wait(0.5)

        watcher = threading.Thread(target=monitor)
        watcher.start()
        # Open loop: write n is due at n / rate whatever the earlier writes are doing, as requests arriving at a
        # fleet are; a pool large enough that a write waiting out throttles never delays the next one.
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for serial in range(int(seconds * rate)):
                delay = start + serial / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(write, serial)
        done.set()
        watcher.join()
        return summarise(label, records, samples, seconds, rate, attempts)
    finally:
        proxy.stop()


def summarise(label: str, records, samples, seconds: int, rate: float, attempts: dict[int, list[bool]]) -> dict:
    """Writes stored per second of the run (by when the call returned) against the offered rate."""
    per_second = []
    for second in range(seconds):
        stored = sum(ok for at, ok, _lat in records if second <= at < second + 1)
        per_second.append({"second": second + 1, "offered": rate, "written": stored})
    def settled(width: int) -> int | None:
        """Seconds until every ``width``-second window from then on stores >= 90 % of what was offered in it."""
        for index in range(len(per_second) - width + 1):
            if per_second[index]["written"] < 0.9 * per_second[index]["offered"]:
                continue  # the first second counted must itself reach 90 %
            windows = [per_second[i : i + width] for i in range(index, len(per_second) - width + 1)]
            if all(sum(p["written"] for p in w) >= 0.9 * sum(p["offered"] for p in w) for w in windows):
                return index
        return None

    # At a few dozen writes a second one second's count is noisy (Poisson): the 3-second windows are the
    # measure, every single second is shown too.
    converged, strict = settled(3), settled(1)
    # Writes issued after it: a write issued before (a backlog retried across the growth) is not the
    # latency of a key that takes its load.
    latencies = sorted(lat for at, ok, lat in records if ok and converged is not None and at - lat >= converged)
    after = [s for s in samples if converged is not None and converged <= s[0] <= seconds]
    throttled = None
    if len(after) >= 2 and after[-1][2] > after[0][2]:
        throttled = (after[-1][3] - after[0][3]) / (after[-1][2] - after[0][2])
    # The writes offered after it: each write's own requests, so a backlog offered earlier and still retried
    # is not counted against the writes the grown key takes.
    later = [attempts.get(serial, []) for serial in range(int(seconds * rate))
             if converged is not None and serial / rate >= converged]
    later_writes_throttled = sum(any(a) for a in later) / len(later) if later else None
    later_requests = sum(len(a) for a in later)
    later_requests_throttled = sum(sum(a) for a in later) / later_requests if later_requests else None
    tail = [s for s in samples if seconds - 10 <= s[0] <= seconds]
    throttled_tail = None
    if len(tail) >= 2 and tail[-1][2] > tail[0][2]:
        throttled_tail = (tail[-1][3] - tail[0][3]) / (tail[-1][2] - tail[0][2])
    timeline = []
    for entry in per_second:
        shards = [n for at, n, _p, _t in samples if at < entry["second"]]
        timeline.append({**entry, "shards": shards[-1] if shards else 1})
    inside = [ok for at, ok, _lat in records if at < seconds]
    return {
        "label": label,
        "converged": converged,
        "strict": strict,
        "throttled_after": throttled,
        "throttled_tail": throttled_tail,
        "later_writes_throttled": later_writes_throttled,
        "later_requests_throttled": later_requests_throttled,
        "shards": samples[-1][1] if samples else 1,
        "written": sum(inside) / (rate * seconds),
        "refused": len(inside) - sum(inside),
        "p50": statistics.median(latencies) if latencies else None,
        "p99": latencies[int(0.99 * (len(latencies) - 1))] if latencies else None,
        "timeline": timeline,
    }


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


def plot(results: list[dict], path: Path, limit: float, rate: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for result in results:
        seconds = [t["second"] for t in result["timeline"]]
        top.plot(seconds, [t["written"] for t in result["timeline"]], label=result["label"])
        bottom.step(seconds, [t["shards"] for t in result["timeline"]], where="post", label=result["label"])
    top.axhline(rate, color="grey", linestyle="--", label="offered")
    top.set_ylabel("writes/s accepted")
    bottom.set_ylabel("shards")
    bottom.set_xlabel("seconds (real clock, through the rules proxy)")
    top.legend(fontsize=8)
    top.set_title(f"10x one partition's write limit on one key ({limit:g} units/s per partition, scaled down)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def seconds_text(value) -> str:
    return f"{value} s" if value is not None else "never"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--limit", type=float, default=3, help="write units per second per partition key")
    parser.add_argument("--writers", type=int, default=4, help="ShardedTable instances (processes of a fleet)")
    parser.add_argument("--threads", type=int, default=400, help="writes in flight at most (open loop)")
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-fan-out", action="store_true")
    parser.add_argument("--only-default", action="store_true",
                        help="run the default settings only: on-demand, provisioned, and a table at its own limit")
    parser.add_argument("--burst", action="store_true", help="run the burst scenario (bench/sharding_burst.py) only")
    parser.add_argument("--burst-seconds", type=float, default=60, help="--burst: seconds at 10x the limit")
    parser.add_argument("--cool-seconds", type=float, default=600, help="--burst: seconds at 0.2x the limit after")
    parser.add_argument("--tick", type=float, default=0.1, help="--burst: seconds of load offered at once")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(relativeCreated)8.0f ms %(message)s")
    for noisy in ("botocore", "urllib3"):  # urllib3 warns when 16 query threads share a pool of 10
        logging.getLogger(noisy).setLevel(logging.ERROR)
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    if args.burst:
        run_burst(args)
        return
    rate = 10 * args.limit
    runs = {
        "double, write path 1 attempt (default), on-demand": (ShardGrowth.DOUBLE, WRITE_PATH, False, "on-demand"),
        "default, provisioned table": (ShardGrowth.DOUBLE, WRITE_PATH, False, "provisioned"),
        "default, on-demand table capped at half a partition": (ShardGrowth.DOUBLE, WRITE_PATH, False, "capped"),
        "default, key recorded an hour before": (ShardGrowth.DOUBLE, WRITE_PATH, True, "on-demand"),
        "increment, write path 1 attempt": (ShardGrowth.INCREMENT, WRITE_PATH, False, "on-demand"),
        "double, SDK default retries": (ShardGrowth.DOUBLE, SDK_DEFAULT, False, "on-demand"),
    }
    if args.only_default:
        runs = dict(list(runs.items())[:3])
    engine = start_dynalite()
    results = []
    try:
        for label, (growth, config, existing, billing) in runs.items():
            results.append(offer(engine, label, seconds=args.seconds, rate=rate, limit=args.limit,
                                 processes=args.writers, threads=args.threads, growth=growth, write_config=config,
                                 existing=existing, billing=billing))
    finally:
        engine.stop()
    print(f"| settings | >= 90% of {rate:g}/s stored from (3-s windows; every second) | throttled requests after "
          "it | ... in the last 10 s | writes offered after it, throttled at least once | their requests throttled | "
          "shards at end | stored of offered, whole run | refused writes | "
          "write p50 / p99, issued after it |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    shares = ("throttled_after", "throttled_tail", "later_writes_throttled", "later_requests_throttled")
    for r in results:
        throttled = " | ".join(f"{r[k]:.2%}" if r[k] is not None else "-" for k in shares)
        latency = f"{r['p50'] * 1000:.0f} / {r['p99'] * 1000:.0f} ms" if r["p50"] is not None else "-"
        print(f"| {r['label']} | {seconds_text(r['converged'])}; {seconds_text(r['strict'])} | {throttled} | "
              f"{r['shards']} | "
              f"{r['written']:.1%} | {r['refused']} | {latency} |")
    for r in results:
        print(f"\n{r['label']}: stored per second " + " ".join(str(t["written"]) for t in r["timeline"]))
        print("shards at each second's end " + " ".join(str(t["shards"]) for t in r["timeline"]))
    if args.plot:
        plot(results, args.plot, args.limit, rate)
        print(f"\nplot: {args.plot}")
    if args.skip_fan_out:
        return
    print("\n| shards | sequential query (median s) | parallel, 16 workers (median s) | speed-up |")
    print("|---|---|---|---|")
    for count, sequential, parallel in fan_out([1, 2, 4, 8, 16, 32, 64], args.repeat):
        print(f"| {count} | {sequential:.4f} | {parallel:.4f} | {sequential / parallel:.1f}x |")


def run_burst(args: argparse.Namespace) -> None:
    from bench.sharding_burst import burst_report, print_report

    engine = start_dynalite()
    try:
        results = burst_report(engine, limit=args.limit, burst_seconds=args.burst_seconds,
                               cool_seconds=args.cool_seconds, tick=args.tick)
    finally:
        engine.stop()
    print_report(results, limit=args.limit, burst_seconds=args.burst_seconds, cool_seconds=args.cool_seconds)


if __name__ == "__main__":
    main()
