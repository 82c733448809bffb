"""How many API calls reconcile makes over 1,000 period tables (first run and steady state).

Run: .venv/bin/python -m bench.rotation [--tables 1000]
In-process moto: the call counts are what matters here, not the emulator's speed.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import UTC, datetime, timedelta

import boto3
from moto import mock_aws

from cdk_ts_runtime.rotation import TableRotator
from cdk_ts_runtime.rotation.ownership import ownership_tags
from cdk_ts_runtime.rotation_config import CapacityTier, RotationConfig
from cdk_ts_runtime.table_layout import TableLayout
from examples.local_aws import RequestCounter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=1000)
    args = parser.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    with mock_aws():
        dynamodb = boto3.client("dynamodb")
        layout = TableLayout("telemetry")
        key_schema, definitions = layout.key_schema()
        for age in range(args.tables):
            dynamodb.create_table(
                TableName=f"telemetry_{now - timedelta(days=age):%Y-%m-%d}",
                KeySchema=key_schema,
                AttributeDefinitions=definitions,
                ProvisionedThroughput={"ReadCapacityUnits": 300, "WriteCapacityUnits": 1000},
                Tags=[{"Key": k, "Value": v} for k, v in ownership_tags(layout).items()],
            )
        rotator = TableRotator(
            layout,
            # The 2016 provisioned tiers, as measured in bench/README.md: in-process moto does not report
            # TableClass back, so the Standard-IA default tiers would never look converged here.
            RotationConfig(
                max_changes_per_run=10_000, point_in_time_recovery=False, metric_namespace=None,
                previous=CapacityTier.provisioned(100, 1), older=CapacityTier.provisioned(1, 1),
            ),
            dynamodb=dynamodb,
            clock=lambda: now,
        )
        print("| run | tables | API calls | by operation | seconds |\n|---|---|---|---|---|")
        for label in ("first (all tables hot)", "second (steady state)"):
            counter = RequestCounter(dynamodb)
            started = time.perf_counter()
            report = rotator.run("reconcile", now)
            elapsed = time.perf_counter() - started
            calls = dict(sorted(counter.calls.items()))
            print(f"| {label} | {args.tables} | {sum(calls.values())} | {calls} | {elapsed:.1f} |")
            assert label.startswith("first") or not report["actions"], report["actions"][:3]
            counter.stop()


if __name__ == "__main__":
    main()
