"""Runs and API calls the default rotation needs to reach its tiers, through DynamoDB's rules.

Run: .venv/bin/python -m bench.rotation [--tables 200]

Through cdk_ts.testing's rules proxy in front of moto_server, on a frozen clock moved to each
scheduled time: a table is UPDATING for ``--update-seconds`` after each change and refuses another meanwhile,
a class change must be alone in its call, and at most ``--control-plane-limit`` tables change at once. Two
scenarios, both with the default tiers (current 300/1000 provisioned; closed periods on-demand Standard-IA)
and the default schedules (resize_old at 00:15, reconcile hourly, max 50 changes per run):

- a fresh day: yesterday's table hot, today's created before midnight;
- ``--tables`` daily tables all hot (a rotation adopted over existing tables, or 0.2's nights that failed).

For each: the runs until every table is in its tier, the API calls by operation, and a steady-state run.
The harness is test infrastructure; the benchmark imports it rather than keep a second copy.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from datetime import UTC, datetime, timedelta

from cdk_ts.testing import RequestCounter, start_moto_server, start_rules_proxy
from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._retries import CONTROL_PLANE
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.ownership import ownership_tags
from cdk_ts_runtime._rotation.rotator import TableRotator

DAY = datetime(2026, 11, 22, tzinfo=UTC)
IA = "STANDARD_INFREQUENT_ACCESS"


def schedule(start: datetime, hours: int) -> list[tuple[str, datetime]]:
    """The default schedules' events from ``start`` for ``hours``: resize_old at 00:15, reconcile at :30."""
    events = []
    for hour in range(hours):
        moment = start + timedelta(hours=hour)
        if moment.hour == 0:
            events.append(("resize_old", moment.replace(minute=15)))
        events.append(("reconcile", moment.replace(minute=30)))
        if moment.hour == 23:
            events.append(("create_new", moment.replace(minute=45)))
    return events


def in_tier(dynamodb, name: str, closed: bool) -> bool:
    table = dynamodb.describe_table(TableName=name)["Table"]
    mode = (table.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
    table_class = (table.get("TableClassSummary") or {}).get("TableClass", "STANDARD")
    if table["TableStatus"] != "ACTIVE":
        return False
    return (mode, table_class) == (("PAY_PER_REQUEST", IA) if closed else ("PROVISIONED", "STANDARD"))


def scenario(proxy, prefix: str, hot_days: int, update_seconds: int) -> dict:
    """Create ``hot_days`` hot tables before DAY, run the schedules from DAY until converged, then once more."""
    dynamodb = proxy.client("dynamodb", config=CONTROL_PLANE)
    layout = TableLayout(prefix)
    key_schema, definitions = layout.key_schema()
    proxy.set_time(DAY - timedelta(days=2))
    for age in range(0, hot_days + 1):
        dynamodb.create_table(
            TableName=f"{prefix}_{DAY - timedelta(days=age):%Y-%m-%d}", KeySchema=key_schema,
            AttributeDefinitions=definitions,
            ProvisionedThroughput={"ReadCapacityUnits": 300, "WriteCapacityUnits": 1000},
            Tags=[{"Key": k, "Value": v} for k, v in ownership_tags(layout).items()],
        )
        if age % 400 == 399:  # at most 500 tables may be CREATING at once: let these finish first
            proxy.advance(60)
    proxy.configure(update_seconds=update_seconds)
    proxy.set_time(DAY)
    config = RotationConfig(metric_namespace=None, point_in_time_recovery=False)
    closed = [f"{prefix}_{DAY - timedelta(days=age):%Y-%m-%d}" for age in range(1, hot_days + 1)]
    counter = RequestCounter(dynamodb)
    runs, outcomes = 0, Counter()
    for operation, when in schedule(DAY, 24 * 7):
        proxy.set_time(max(when, proxy.now()))
        report = TableRotator(layout, config, dynamodb=dynamodb, clock=lambda w=when: w, sleep=proxy.advance).run(
            operation, when
        )
        runs += 1
        outcomes.update(a["action"] for a in report["actions"])
        if all(in_tier(dynamodb, name, closed=True) for name in closed):
            converged = when
            break
    else:
        raise SystemExit(f"{prefix}: not converged within a week")
    calls = dict(sorted(counter.calls.items()))
    counter.reset()
    steady_when = converged + timedelta(hours=1)
    proxy.set_time(steady_when)
    steady = TableRotator(layout, config, dynamodb=dynamodb, clock=lambda: steady_when).run("reconcile", steady_when)
    return {
        "tables": hot_days + 1, "runs": runs, "converged_after": converged - DAY, "calls": calls,
        "outcomes": dict(sorted(outcomes.items())), "steady_calls": dict(sorted(counter.calls.items())),
        "steady_changes": [a["action"] for a in steady["actions"]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=200, help="hot tables in the second scenario")
    parser.add_argument("--update-seconds", type=int, default=600, help="how long a table is UPDATING")
    parser.add_argument("--control-plane-limit", type=int, default=500)
    args = parser.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    engine = start_moto_server()
    try:
        print("| scenario | tables | runs to the default tiers | reached after | API calls | run outcomes "
              "| steady-state run |\n|---|---|---|---|---|---|---|")
        for label, prefix, hot in (("fresh day", "fresh", 1), (f"{args.tables} hot tables", "hot", args.tables)):
            proxy = start_rules_proxy(engine, start_time=DAY, control_plane_limit=args.control_plane_limit)
            try:
                result = scenario(proxy, prefix, hot, args.update_seconds)
            finally:
                proxy.stop()
            print(
                f"| {label} | {result['tables']} | {result['runs']} | {result['converged_after']} "
                f"| {sum(result['calls'].values())} {result['calls']} | {result['outcomes']} "
                f"| {sum(result['steady_calls'].values())} calls {result['steady_calls']}, "
                f"changes: {result['steady_changes'] or 'none'} |"
            )
    finally:
        engine.stop()

if __name__ == "__main__":
    main()
