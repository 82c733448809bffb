"""The scenario's rotation steps: the deploy-time reconcile, three days of schedule, and the stream mappings.

The emulator cannot run Lambda code, so the rotation function's own handler runs on this host with the
deployed environment, its clock set to each event's scheduled time.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from examples.progress import function_output, say

if TYPE_CHECKING:
    from examples.scenario import Scenario


def rotation(scenario: Scenario) -> None:
    """Deploy-time reconcile, then three days of create_new/resize_old."""
    from cdk_ts_runtime.handlers import rotation

    prefix = scenario.outputs["TelemetryTablePrefix"]

    def on_time(event: dict) -> dict:
        # Three simulated days pass in seconds: the clock reads each event's scheduled time, as it
        # would when EventBridge delivers on time (the rotation refuses times far from its clock).
        rotation.now = lambda: datetime.fromisoformat(event["time"])
        with function_output("rotation"):  # its EMF metric lines
            return rotation.handler(event, None)

    say("\n1. Rotation: reconcile (what the deploy-time custom resource runs)")
    with scenario.deployed_environment("RotationFunctionName"):
        on_time({"Operation": "reconcile", "time": scenario.day(0).replace(hour=12).isoformat()})
        current = f"{prefix}_{scenario.day(0):%Y-%m-%d}"
        scenario.check("reconcile creates the current period's table", current in scenario.period_tables(), current)

        say("\n2. Rotation: three days of schedule (create_new at 23:45, its retry at 23:55, resize_old at 00:15)")
        for offset in range(3):
            for minute in (45, 55):  # the 23:55 run finds the table there: it only checks its settings
                on_time({"Operation": "create_new",
                         "time": scenario.day(offset).replace(hour=23, minute=minute).isoformat()})
            on_time({"Operation": "resize_old", "time": scenario.day(offset + 1).replace(minute=15).isoformat()})
        tiers = {name: scenario.capacity(name) for name in scenario.period_tables()}
        for name, tier in tiers.items():
            say(f"     {name}  {tier}")
        # closed periods: on-demand Standard-IA (the emulator does not report the table class)
        expected = {
            f"{prefix}_{scenario.day(0):%Y-%m-%d}": "on-demand",
            f"{prefix}_{scenario.day(1):%Y-%m-%d}": "on-demand",
            f"{prefix}_{scenario.day(2):%Y-%m-%d}": "on-demand",
            f"{prefix}_{scenario.day(3):%Y-%m-%d}": "300/1000",
        }
        scenario.check(
            "tables sit in their tiers (closed periods on-demand Standard-IA, current 300/1000 RCU/WCU)",
            tiers == expected,
            f"{len(tiers)} tables",
        )


def mappings(scenario: Scenario) -> None:
    """Every stream has its mapping: CloudFormation made the device log's, the rotation the period tables'."""
    say("\n2b. Stream mappings: one per stream (the device log's from CloudFormation, the rest from the rotation)")
    lambda_client = scenario.boto3.client("lambda")
    dynamodb = scenario.boto3.client("dynamodb")
    found = []
    for page in lambda_client.get_paginator("list_event_source_mappings").paginate():
        found += page["EventSourceMappings"]
    period_streams = {
        dynamodb.describe_table(TableName=t)["Table"].get("LatestStreamArn") for t in scenario.period_tables()
    }
    mapped = {m["EventSourceArn"] for m in found}
    scenario.check(
        "every period table's stream is mapped to the telemetry archiver",
        bool(period_streams) and period_streams <= mapped,
        f"{len(period_streams & mapped)} of {len(period_streams)} period tables",
    )
    log_stream = dynamodb.describe_table(TableName=scenario.outputs["DeviceLogTableName"])["Table"]["LatestStreamArn"]
    scenario.check("the device log's stream is mapped to its archiver", log_stream in mapped, "1 mapping")
