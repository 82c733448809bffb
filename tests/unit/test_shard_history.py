"""The shard history as a function of time, and sort-key conditions as time windows: pure functions."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from cdk_ts_runtime import ShardInfo
from cdk_ts_runtime._sharding import _history
from cdk_ts_runtime._sharding._time import item_time, time_of, window

ENTRIES = st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 1024)), min_size=1, max_size=200)
TIMES = st.integers(-100, 10_100)


def history_of(entries):
    return tuple(sorted(dict(entries).items()))


@given(ENTRIES, st.integers(1, 64), TIMES)
def test_compaction_keeps_at_most_its_limit_and_never_narrows_any_time(entries, limit, at):
    history = history_of(entries)
    kept = _history.compacted(history, limit)
    assert len(kept) <= limit
    assert _history.count_at(kept, at, 1) >= _history.count_at(history, at, 1)


@given(ENTRIES, st.integers(0, 10_000), st.integers(1, 1024), TIMES)
def test_a_growth_leaves_earlier_times_alone_and_never_narrows_later_ones(entries, epoch, target, at):
    history = history_of(entries)
    assume(epoch >= history[0][0])  # a growth is stamped after the key's first entry (ShardMetadataStore.grow)
    target = max(target, _history.largest_from(history, epoch, 1))  # as ShardMetadataStore.grow sizes it
    grown = _history.with_growth(history, epoch, target)
    before, after = _history.count_at(history, at, 1), _history.count_at(grown, at, 1)
    assert after >= before
    if at < epoch and len(history) < _history.MAX_HISTORY_ENTRIES:
        assert after == before
    if at >= epoch:
        assert after == target


@given(ENTRIES, TIMES, TIMES)
def test_the_count_over_a_window_is_the_largest_in_force_at_any_time_in_it(entries, a, b):
    history = history_of(entries)
    low, high = min(a, b), max(a, b)
    by_scan = max(_history.count_at(history, at, 1) for at in range(low, high + 1))
    assert _history.largest_over(history, low, high, 1) == by_scan


def test_a_key_written_before_the_time_model_reads_every_earlier_count_for_windows_before_it():
    info = ShardInfo(2, 300, ((100, 1), (200, 16), (300, 2)), version=3, time_sharded_since=250)
    assert info.shards_over(260, 270) == 16  # in force then
    assert info.shards_over(310, 320) == 2  # after the time model began: the window's own set
    assert info.shards_over(50, 60) == 16  # before it: items may be on any shard counted up to then
    legacy = ShardInfo(2, 300, ((100, 1), (200, 16), (300, 2)), version=3)
    assert legacy.shards_over(310, 320) == 16  # no writer placed items by time yet: every shard ever used


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"begins_with": "2026"}, ("2026-01-01T00:00:00", "2027-01-01T00:00:00")),
        ({"begins_with": "2026-12"}, ("2026-12-01T00:00:00", "2027-01-01T00:00:00")),
        ({"begins_with": "2026-03-02"}, ("2026-03-02T00:00:00", "2026-03-03T00:00:00")),
        ({"begins_with": "2026-03-02T10"}, ("2026-03-02T10:00:00", "2026-03-02T11:00:00")),
        ({"begins_with": "2026-03-02T10:15"}, ("2026-03-02T10:15:00", "2026-03-02T10:16:00")),
    ],
)
def test_begins_with_on_an_iso_date_bounds_the_span_it_names(condition, expected):
    low, high = window(condition, "iso")
    start, end = (datetime.fromisoformat(t).replace(tzinfo=UTC).timestamp() for t in expected)
    assert low == start and end - 0.001 < high < end


@pytest.mark.parametrize(
    "condition",
    [{"begins_with": "2026-0"}, {"begins_with": "device#"}, {"gte": "yesterday"}, {}],
)
def test_a_condition_whose_bound_is_not_a_time_bounds_nothing(condition):
    assert window(condition, "iso") == (-math.inf, math.inf)


def test_epoch_units_and_iso_text_are_times_and_anything_else_is_a_clear_error():
    assert time_of(1_767_225_600_500, "ms") == 1_767_225_600.5
    assert time_of("2026-01-01T00:00:00Z", "iso") == time_of("2026-01-01T00:00:00", "iso") == 1_767_225_600
    assert window({"between": (10, 20)}, "s") == (10, 20)
    assert window({"gt": 10}, "s") == (10, math.inf)
    assert window({"lt": 10}, "s") == (-math.inf, 10)
    with pytest.raises(ValueError, match=r"item timestamp='soon' is not an epoch number in s .*sort_key_time_unit"):
        item_time("soon", "s", "timestamp")
