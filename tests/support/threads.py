"""Running test code on several threads at once."""

from __future__ import annotations

import threading
from collections.abc import Iterable


def start_and_join(threads: Iterable[threading.Thread]) -> None:
    """Start every thread, then wait for every one: they run at the same time, and all have ended on return."""
    threads = list(threads)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
