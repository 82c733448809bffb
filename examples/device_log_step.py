"""The scenario's device log step: the use case's sample data written, then its seven access patterns queried."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from examples.progress import say

if TYPE_CHECKING:
    from examples.scenario import Scenario

#: The use case's sample items (a data file in the repository; nothing is imported from the test suite).
SAMPLE_DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "device_state_log.json"


def device_log(scenario: Scenario) -> None:
    """The sample data and the seven access patterns."""
    from cdk_ts_runtime import DeviceLogRepository

    say("\n4. Device log: the use case's sample data and the seven access patterns")
    if not SAMPLE_DATA.exists():
        scenario.check("sample data present", False, f"{SAMPLE_DATA} missing")
        return
    logs = DeviceLogRepository(scenario.outputs["DeviceLogTableName"])
    for item in json.loads(SAMPLE_DATA.read_text())["items"]:
        logs.create_log_entry_for_specific_device(
            item["DeviceID"],
            item["State"],
            item["Date"],
            operator=item.get("Operator"),
            escalated_to=item.get("EscalatedTo"),
        )
    patterns: list[tuple[str, Callable[[], list], int]] = [
        ("2 d#12345 WARNING1", lambda: logs.get_logs_for_specific_device("d#12345", "WARNING1"), 3),
        ("3 d#54321 warnings", lambda: logs.get_warning_logs_for_specific_device("d#54321"), 3),
        (
            "4 Liz 2020-04-11..24",
            lambda: logs.get_logs_for_operator_between_two_dates("Liz", "2020-04-11", "2020-04-24"),
            6,
        ),
        ("5 Sara escalations", lambda: logs.get_escalated_logs_for_supervisor("Sara"), 1),
        (
            "6 Sara WARNING4",
            lambda: logs.get_escalated_logs_with_specific_status_for_supervisor("Sara", "WARNING4"),
            1,
        ),
        (
            "7 Sara WARNING4 2020-04-27",
            lambda: logs.get_escalated_logs_with_specific_status_for_supervisor_for_date(
                "Sara", "WARNING4", "2020-04-27"
            ),
            1,
        ),
    ]
    for label, query, expected in patterns:
        found = len(query())
        scenario.check(f"pattern {label}", found == expected, f"{found} items (expected {expected})")
