"""The fixed values of the test environment, for modules that need them outside a fixture."""

from __future__ import annotations

from datetime import UTC, datetime

#: The Region of the fake credentials every test runs with (``tests/conftest.py``).
REGION = "us-east-1"
#: The rules proxy's frozen clock starts here: a Tuesday, so "today" and "the last 24 h" mean the same in every run.
RULES_START_TIME = datetime(2026, 3, 10, tzinfo=UTC)
