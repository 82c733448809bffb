"""PeriodRouter against a local moto_server: parallel vs sequential range queries, batched vs single writes.

Run: .venv/bin/python -m bench.router [--tables 12] [--items-per-table 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

from cdk_ts_runtime.router import PeriodRouter
from examples.local_aws import server_client_for, start_moto_server


def timed(action, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--items-per-table", type=int, default=200)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--latency-ms", type=float, default=0.0,
        help="added to every request to model the network round trip a local server does not have",
    )
    args = parser.parse_args()
    server = start_moto_server()
    try:
        client = server_client_for(server)
        if args.latency_ms:
            client.meta.events.register(
                "before-send.dynamodb.*", lambda **_kw: time.sleep(args.latency_ms / 1000)
            )
        start = datetime(2026, 1, 1, tzinfo=UTC)
        parallel = PeriodRouter("bench", "monthly", dynamodb_client=client, max_workers=args.tables)
        sequential = PeriodRouter("bench", "monthly", dynamodb_client=client, max_workers=1)
        key_schema, definitions = parallel.layout.key_schema()
        end = start.replace(year=start.year + args.tables // 12, month=1) - timedelta(seconds=1)
        tables = parallel.tables_between(start, end)
        for name in tables:
            client.create_table(TableName=name, KeySchema=key_schema, AttributeDefinitions=definitions,
                                BillingMode="PAY_PER_REQUEST")
        step = (end - start) / (args.items_per_table * len(tables))
        parallel.put_items(
            {"pk": 1, "sk": parallel.layout.sort_value(start + step * i), "v": i}
            for i in range(args.items_per_table * len(tables))
        )
        expected = args.items_per_table * len(tables)
        assert len(parallel.query(1, start, end)) == expected
        seq = timed(lambda: sequential.query(1, start, end), args.repeat)
        par = timed(lambda: parallel.query(1, start, end), args.repeat)
        heading = f"query over {len(tables)} monthly tables ({expected} items), +{args.latency_ms:g} ms/request"
        print(f"| {heading} | median s |")
        print("|---|---|")
        print(f"| one table after another (max_workers=1) | {seq:.3f} |")
        print(f"| in parallel (max_workers={args.tables}) | {par:.3f} |")
        print(f"| speed-up | {seq / par:.1f}x |")

        items = [{"pk": 2, "sk": parallel.layout.sort_value(start + timedelta(seconds=i)), "t": i}
                 for i in range(args.writes)]
        single = timed(lambda: [parallel.put_item(item) for item in items], 1)
        batched = timed(lambda: parallel.put_items(items), 1)
        print()
        print(f"| {args.writes} writes, +{args.latency_ms:g} ms/request | seconds | items/s |")
        print("|---|---|---|")
        print(f"| PutItem one by one | {single:.2f} | {args.writes / single:.0f} |")
        print(f"| put_items (BatchWriteItem, 25 per call) | {batched:.2f} | {args.writes / batched:.0f} |")
        print(f"| speed-up | {single / batched:.1f}x | |")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
