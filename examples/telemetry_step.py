"""The scenario's telemetry step: the sample's ingest code writes readings through the period router, read back."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import TYPE_CHECKING

from examples.progress import say

if TYPE_CHECKING:
    from examples.scenario import Scenario


def telemetry(scenario: Scenario) -> None:
    """Batched multi-measure ingest and a range read across period tables."""
    from cdk_ts_runtime import PeriodRouter
    from examples.ingest.ingest import ingest

    say("\n3. Telemetry: batched multi-measure ingest through the router, a range read across tables")
    with scenario.deployed_environment("IngestFunctionName"):
        router = PeriodRouter.from_env(os.environ)
        readings = [
            {
                "device_id": device,
                "time": (scenario.day(0) + timedelta(hours=2 * step)).isoformat(),
                "measures": {"temperature_c": f"{20 + step % 7}.{device}", "humidity_pct": "41.5"},
            }
            for device in (1, 2, 3)
            for step in range(48)
        ]
        result = ingest(router, readings)
        scenario.check(
            "ingest writes every reading",
            result["written"] == len(readings) and not result["unwritten"],
            f"{result['written']} readings into {len(router.tables_between(scenario.day(0), scenario.day(3)))} tables",
        )
        items = router.query(2, scenario.day(0), scenario.day(3) + timedelta(hours=23))
        ordered = [i["sk"] for i in items] == sorted(i["sk"] for i in items)
        scenario.check(
            "range read returns device 2's readings in time order",
            len(items) == 48 and ordered,
            f"{len(items)} items from {len({router.table_for(i['sk']) for i in items})} period tables",
        )
