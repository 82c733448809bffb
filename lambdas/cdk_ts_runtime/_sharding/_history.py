"""A key's shard history as a function of time: the count in force at a time, over a window, and compaction.

The history is ``(epoch seconds, count)`` pairs, oldest first: from each entry's time on, until the next
entry, items with sort-key times in that span are written to (and read from) shards ``1..count``. Times
before the first entry take the first entry's count. Every function here keeps one promise: a change to the
history only ever makes a window's shard set larger or leaves it alone for items already written, so a
reader never loses a shard an item may be on (see the sharding docs page, "Time model").
"""

from __future__ import annotations

import math
from collections.abc import Iterable

History = tuple[tuple[int, int], ...]

#: Writers' clocks and their items' sort-key times are assumed within this many seconds of true time (Lambda
#: hosts are synchronised by the Amazon Time Sync Service; the docs page states the assumption).
MAX_CLOCK_SKEW_SECONDS = 5
#: A shrink takes effect this long after it is recorded, so writers holding a cached history from before it
#: (cached at most ``cache_ttl_seconds``, which writers check against this notice) never write an item of the
#: smaller span to a shard readers of that span skip.
SHRINK_NOTICE_SECONDS = 60
#: The most entries a history keeps. A DynamoDB item holds 400 KB; an entry is about 20 bytes. Past this the
#: two oldest entries are merged into one with the larger count, which only widens old windows' shard sets.
MAX_HISTORY_ENTRIES = 64


def count_at(history: History, epoch: float, default: int) -> int:
    """The count in force at ``epoch``: the latest entry at or before it, else the first (``default`` if none)."""
    if not history:
        return default
    count = history[0][1]
    for since, value in history:
        if since > epoch:
            break
        count = value
    return count


def largest_over(history: History, low: float, high: float, default: int) -> int:
    """The largest count in force at any time from ``low`` to ``high`` (both included)."""
    largest = count_at(history, low, default)
    for since, value in history:
        if low < since <= high:
            largest = max(largest, value)
    return largest


def compacted(entries: Iterable[tuple[int, int]], limit: int = MAX_HISTORY_ENTRIES) -> History:
    """``entries`` by time (within a second, the larger count last: the one in force), the oldest merged down to
    ``limit``.

    Two entries merge into the older one's time with the larger count, so the merged span's set is a superset
    of both: items written under either are still read, and new ones spread over the larger set.
    """
    history = sorted(set(entries))
    while len(history) > limit:
        (first, one), (_second, two) = history[0], history[1]
        history[:2] = [(first, max(one, two))]
    return tuple(history)


def with_growth(history: History, epoch: int, target: int) -> History:
    """The history after a growth to ``target`` from ``epoch`` on.

    Entries after ``epoch`` (a shrink not yet in force) are replaced: the new count is at least each of theirs
    (:func:`largest_from`), so their items stay covered. An entry of the same second stays, before it.
    """
    kept = [(since, count) for since, count in history if since <= epoch]
    return compacted([*kept, (epoch, target)])


def largest_from(history: History, epoch: float, default: int) -> int:
    """The largest count in force at ``epoch`` or any time after it."""
    return largest_over(history, epoch, math.inf, default)
