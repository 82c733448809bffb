"""PeriodRouter through the rules proxy, per-partition limits on: batched vs single writes, parallel range reads.

Run: .venv/bin/python -m bench.router [--tables 12] [--items-per-table 200] [--writes 1000] [--latency-ms 0]
                                      [--write-units 100] [--read-units 300]

The proxy (``cdk_ts.testing``, the one the tests use: see bench/README.md) sits in front
of moto_server and throttles each partition key past ``--write-units``/``--read-units`` per second (DynamoDB's
1,000/3,000 scaled down by 10, so the limits bind on a 2-core machine), on the real clock, as DynamoDB
does on these on-demand tables: PutItem/Query get ``ThrottlingException`` with ``throttlingReasons``,
BatchWriteItem returns the throttled items in ``UnprocessedItems``. The routers create their own clients
(``AWS_ENDPOINT_URL_DYNAMODB`` points them at the proxy), so their retry settings are the library's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, datetime, timedelta

# The rules proxy and the emulators are the test harness (tests/support), not a library: imported, not copied.
from cdk_ts.testing import start_moto_server, start_rules_proxy
from cdk_ts_runtime.router import PeriodRouter


def timed(action, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


class Refusals:
    """Requests and throttles the proxy saw between two points, by operation."""

    def __init__(self, proxy) -> None:
        self.proxy = proxy
        proxy.reset_stats()

    def share(self, operation: str) -> str:
        stats = self.proxy.stats()
        requests = stats["requests"].get(operation, 0)
        throttled = stats["refusals"].get(f"{operation}:ThrottlingException", 0)
        unprocessed = stats["refusals"].get(f"{operation}:UnprocessedItems", 0)
        text = f"{throttled}/{requests} throttled ({throttled / requests:.1%})" if requests else "no requests"
        return text + (f", {unprocessed} with UnprocessedItems" if unprocessed else "")


def main() -> None:
    """Start the emulator and the proxy, then print the read table and the write table of bench/README.md."""
    args = _parser().parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    engine = start_moto_server()
    proxy = start_rules_proxy(
        engine, create_seconds=0, write_units_per_second=args.write_units, read_units_per_second=args.read_units,
        partition_per_key_value=True,  # each key its own partition, as the results in bench/README.md were measured
    )
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = proxy.endpoint_url
    try:
        start = datetime(2026, 1, 1, tzinfo=UTC)
        parallel = PeriodRouter("bench", "monthly", max_workers=args.tables)
        sequential = PeriodRouter("bench", "monthly", max_workers=1)
        if args.latency_ms:
            for router in (parallel, sequential):
                for client in (router.dynamodb, router.batch_dynamodb):
                    client.meta.events.register(
                        "before-send.dynamodb.*", lambda **_kw: time.sleep(args.latency_ms / 1000)
                    )
        _bench_reads(args, proxy, parallel, sequential, start)
        _bench_writes(args, proxy, parallel, start)
    finally:
        proxy.stop()
        engine.stop()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--items-per-table", type=int, default=200)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--devices", type=int, default=50, help="partition keys the spread writes go to")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-units", type=float, default=100)
    parser.add_argument("--read-units", type=float, default=300)
    parser.add_argument(
        "--latency-ms", type=float, default=0.0,
        help="added to every request to model the network round trip a local server does not have",
    )
    return parser


def _bench_reads(args, proxy, parallel: PeriodRouter, sequential: PeriodRouter, start: datetime) -> None:
    """Fill ``--tables`` monthly tables, then time one range query over them, table after table and in parallel."""
    admin = proxy.client()
    key_schema, definitions = parallel.layout.key_schema()
    end = start.replace(year=start.year + args.tables // 12, month=1) - timedelta(seconds=1)
    tables = parallel.tables_between(start, end)
    for name in tables:
        admin.create_table(TableName=name, KeySchema=key_schema, AttributeDefinitions=definitions,
                           BillingMode="PAY_PER_REQUEST")
    step = (end - start) / (args.items_per_table * len(tables))
    parallel.put_items(
        {"pk": 1, "sk": parallel.layout.sort_value(start + step * i), "v": i}
        for i in range(args.items_per_table * len(tables))
    )
    expected = args.items_per_table * len(tables)
    assert len(parallel.query(1, start, end)) == expected
    refusals = Refusals(proxy)
    seq = timed(lambda: sequential.query(1, start, end), args.repeat)
    par = timed(lambda: parallel.query(1, start, end), args.repeat)
    heading = f"query over {len(tables)} monthly tables ({expected} items), +{args.latency_ms:g} ms/request"
    print(f"| {heading} | median s |")
    print("|---|---|")
    print(f"| one table after another (max_workers=1) | {seq:.3f} |")
    print(f"| in parallel (max_workers={args.tables}) | {par:.3f} |")
    print(f"| speed-up | {seq / par:.1f}x |")
    print(f"| Query requests | {refusals.share('Query')} |")


def _bench_writes(args, proxy, parallel: PeriodRouter, start: datetime) -> None:
    """Time ``--writes`` items written one by one and with put_items, spread over devices and on one device."""

    def items(pk_of, base):
        return [{"pk": pk_of(i), "sk": parallel.layout.sort_value(base + timedelta(seconds=i)), "t": i}
                for i in range(args.writes)]

    runs = {
        f"spread over {args.devices} devices": lambda i: 1000 + i % args.devices,
        "one device (one partition key)": lambda _i: 2,
    }
    print()
    print(f"| {args.writes} writes, +{args.latency_ms:g} ms/request, {args.write_units:g} write units/s "
          "per partition key | seconds | items/s | throttled |")
    print("|---|---|---|---|")
    for index, (label, pk_of) in enumerate(runs.items()):
        base = start + timedelta(days=2 * index)
        single_items, batch_items = items(pk_of, base), items(pk_of, base + timedelta(days=1))
        refusals = Refusals(proxy)
        single = timed(lambda: [parallel.put_item(item) for item in single_items], 1)  # noqa: B023
        single_throttles = refusals.share("PutItem")
        time.sleep(1.5)  # the partitions' buckets refill between the two runs
        refusals = Refusals(proxy)
        batched = timed(lambda: parallel.put_items(batch_items), 1)  # noqa: B023
        print(f"| {label}: PutItem one by one | {single:.2f} | {args.writes / single:.0f} | {single_throttles} |")
        print(f"| {label}: put_items (BatchWriteItem, 25 per call) | {batched:.2f} | "
              f"{args.writes / batched:.0f} | {refusals.share('BatchWriteItem')} |")
        print(f"| {label}: speed-up | {single / batched:.1f}x | | |")
        time.sleep(1.5)


if __name__ == "__main__":
    main()
