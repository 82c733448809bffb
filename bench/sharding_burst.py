"""The burst scenario of ``bench.sharding``: one key 10x a partition's limit, then 0.2x; does it give shards back?

Run: .venv/bin/python -m bench.sharding --burst [--limit 10] [--burst-seconds 60] [--cool-seconds 600]

One logical key is offered ``10 * limit`` writes a second for ``burst_seconds``, then ``0.2 * limit`` for
``cool_seconds``, by 4 ``ShardedTable`` writers (a fleet's processes) through the rules proxy of
``cdk_ts.testing`` over dynalite, with ``limit`` write units a second per partition key. The proxy's clock is
frozen and moved by the benchmark (``advance``), in ticks of ``tick`` seconds: each tick's writes are offered at
once, then the clock moves on, so ten minutes of load take as long as the requests do, not ten minutes. The
writers' sleeps are not waited (their backoff moves no clock): a throttled write is retried at once, on another
shard, up to ``max_attempts`` (10). Two fleets run the same load: today's settings (no ``sort_key_time_unit``:
writes by the clock, reads of every shard ever used, no shrink) and the time model with
``ShardShrink(partition_write_units=limit)`` (every other setting its default). Each item's sort key is its due
time in epoch milliseconds.
"""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from cdk_ts.testing import start_rules_proxy
from cdk_ts_runtime import ShardedTable, ShardShrink
from cdk_ts_runtime._retries import DATA_PATH, WRITE_PATH

KEY = "/burst/device"
START = datetime(2026, 1, 1, tzinfo=UTC)
THROTTLE_CODES = ("ThrottlingException", "ProvisionedThroughputExceededException")


class FrozenClock:
    """The writers' clock and the proxy's, moved together (the proxy's frozen clock refills its buckets)."""

    def __init__(self, proxy) -> None:
        self.proxy = proxy
        self.now = START.timestamp()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.proxy.advance(seconds)


def create_tables(client, prefix: str) -> tuple[str, str]:
    main, metadata = f"{prefix}-main", f"{prefix}-meta"
    for name, keys in ((main, [("pk", "HASH", "S"), ("sk", "RANGE", "N")]), (metadata, [("pk", "HASH", "S")])):
        client.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": k, "KeyType": t} for k, t, _ in keys],
            AttributeDefinitions=[{"AttributeName": k, "AttributeType": a} for k, _, a in keys],
        )
    return main, metadata


def run_fleet(engine, label: str, *, limit: float, burst_seconds: float, cool_seconds: float, tick: float,
              time_model: bool) -> dict:
    """Offer the burst and the cool-down to one key; what was stored, the shards, and two windows' reads."""
    proxy = start_rules_proxy(engine, start_time=START, create_seconds=0, write_units_per_second=limit,
                              partition_per_key_value=True)
    try:
        clock = FrozenClock(proxy)
        main, metadata = create_tables(proxy.client(), label)
        options = {"sort_key_time_unit": "ms", "shrink": ShardShrink(partition_write_units=limit)} if time_model else {}
        writers = [
            ShardedTable(main, metadata, partition_key="pk", sort_key="sk", clock=clock, sleep=lambda _s: None,
                         rng=random.Random(i), dynamodb_client=proxy.client(config=WRITE_PATH),
                         dynamodb_read_client=proxy.client(config=DATA_PATH), **options)
            for i in range(4)
        ]
        phases = [(burst_seconds, 10 * limit, tick), (cool_seconds, 0.2 * limit, 1.0)]
        outcome = offer(writers, clock, proxy, phases, metadata)
        reader = ShardedTable(main, metadata, partition_key="pk", sort_key="sk", clock=clock,
                              dynamodb_client=proxy.client(config=DATA_PATH), **options)
        begin_ms = int(START.timestamp() * 1000)
        end_ms = int(clock() * 1000)
        burst_window = (begin_ms, begin_ms + int(burst_seconds * 1000) - 1)
        late_window = (end_ms - 60_000, end_ms)  # the last minute, after the cool-down
        return {
            "label": label,
            **outcome,
            "shards_end": writers[0].shard_info(KEY, fresh=True).count_at(clock()),
            "burst_read": window_read(reader, burst_window, outcome["stored_keys"]),
            "late_read": window_read(reader, late_window, outcome["stored_keys"]),
        }
    finally:
        proxy.stop()


def offer(writers, clock: FrozenClock, proxy, phases, metadata: str) -> dict:
    """Each tick's writes at once, then the clock moves; the burst's throttled share and the peak count.

    ``phases``: ``(seconds, writes a second, tick seconds)`` each. The first phase is the burst.
    """
    schedule = []  # every write's due time, seconds from the start
    ticks = []  # (end of the tick, seconds from the start), the burst's ticks first
    start = 0.0
    for seconds, rate, tick in phases:
        schedule += [start + n / rate for n in range(round(seconds * rate))]
        ticks += [start + (i + 1) * tick for i in range(round(seconds / tick))]
        start += seconds
    burst_end = phases[0][0]
    begin_ms = int(clock() * 1000)
    stored: list[int] = []
    refused = 0
    lock = threading.Lock()

    def write(serial: int) -> None:
        nonlocal refused
        sort_ms = begin_ms + int(schedule[serial] * 1000)
        try:
            writers[serial % len(writers)].put_item({"pk": KEY, "sk": sort_ms})
        except Exception:  # noqa: BLE001 - a write refused after every attempt is what is counted
            with lock:
                refused += 1
        else:
            with lock:
                stored.append(sort_ms)

    peak, burst_stats, serial, elapsed, sampled = 1, None, 0, 0.0, 0
    with ThreadPoolExecutor(max_workers=64) as pool:
        for tick_end in ticks:
            due = []
            while serial < len(schedule) and schedule[serial] < tick_end - 1e-9:
                due.append(serial)
                serial += 1
            list(pool.map(write, due))
            clock.advance(tick_end - elapsed)
            elapsed = tick_end
            if int(elapsed) > sampled:  # once a simulated second
                sampled = int(elapsed)
                peak = max(peak, current_count(proxy, metadata))
            if burst_stats is None and elapsed >= burst_end - 1e-9:
                burst_stats = proxy.stats()
    requests = burst_stats["requests"].get("PutItem", 0)
    throttled = sum(burst_stats["refusals"].get(f"PutItem:{code}", 0) for code in THROTTLE_CODES)
    return {"stored_keys": stored, "refused": refused, "peak": peak,
            "burst_throttled_share": throttled / requests if requests else None, "burst_requests": requests}


def current_count(proxy, metadata: str) -> int:
    item = proxy.client().get_item(TableName=metadata, Key={"pk": {"S": KEY}}, ConsistentRead=True).get("Item")
    return int(item["number_of_shards"]["N"]) if item else 1


def window_read(reader: ShardedTable, window: tuple[int, int], stored: list[int]) -> dict:
    """Query requests one window's read issued, and the stored items of the window it missed."""
    requests = []
    reader.read_dynamodb.meta.events.register(
        "provide-client-params.dynamodb.Query", lambda params, **_: requests.append(params)
    )
    found = {int(item["sk"]) for item in reader.query(KEY, between=window)}
    expected = {sk for sk in stored if window[0] <= sk <= window[1]}
    return {"queries": len(requests), "found": len(found), "missed": len(expected - found),
            "extra": len(found - expected)}


def burst_report(engine, *, limit: float, burst_seconds: float, cool_seconds: float, tick: float) -> list[dict]:
    """Both fleets' results: today's settings, then the time model with shrinking on."""
    results = []
    for label, time_model in (("today", False), ("time-model", True)):
        results.append(run_fleet(engine, f"burst-{label}", limit=limit, burst_seconds=burst_seconds,
                                 cool_seconds=cool_seconds, tick=tick, time_model=time_model))
    return results


def print_report(results: list[dict], *, limit: float, burst_seconds: float, cool_seconds: float) -> None:
    print(f"\nBurst: {10 * limit:g} writes/s for {burst_seconds:g} s, then {0.2 * limit:g}/s for {cool_seconds:g} s "
          f"({limit:g} write units/s per partition key)")
    print("| fleet | shards at peak | shards at end | Query requests, last minute (items, missed) | "
          "Query requests, burst window (items, missed) | throttled requests in the burst | refused writes |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        late, burst = r["late_read"], r["burst_read"]
        share = "-" if r["burst_throttled_share"] is None else f"{r['burst_throttled_share']:.1%}"
        print(f"| {r['label']} | {r['peak']} | {r['shards_end']} | {late['queries']} ({late['found']}, "
              f"{late['missed']}) | {burst['queries']} ({burst['found']}, {burst['missed']}) | {share} of "
              f"{r['burst_requests']} | {r['refused']} |")
