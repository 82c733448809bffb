"""Polling for the asynchronous parts of DynamoDB (table status, deletion, exports) on local servers."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T | None], *, what: str, timeout: float = 10.0) -> T:
    """Call ``check`` every 50 ms until it returns something other than ``None``, and return that.

    Fails the test with ``what`` in the message when ``timeout`` seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(0.05)


def wait_until_active(client, *names: str, timeout: float = 10.0) -> None:
    """Wait for every table in ``names`` to be ACTIVE.

    CreateTable answers while the table is still CREATING, and "you can perform read and write operations
    only on an ACTIVE table" (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html);
    dynalite follows DynamoDB here, moto is ACTIVE at once.
    """

    def all_active() -> bool | None:
        statuses = {client.describe_table(TableName=name)["Table"]["TableStatus"] for name in names}
        return True if statuses == {"ACTIVE"} else None

    wait_until(all_active, what=f"tables {list(names)} ACTIVE", timeout=timeout)
