"""Growth sizing and the observed throttled share: pure functions and a window, no AWS."""

from __future__ import annotations

import pytest

from cdk_ts_runtime._sharding import SHARD_CEILING, ShardGrowth, ThrottleWindow, shards_needed
from tests.support.sharding import Clock


@pytest.mark.parametrize(
    ("count", "share", "growth", "want"),
    [
        (1, 0.9, ShardGrowth.DOUBLE, 16),  # 10x one partition: 12.5 shards with headroom -> the next doubling
        (1, 0.9, ShardGrowth.INCREMENT, 13),  # ... or exactly, in steps of one
        (4, 0.5, ShardGrowth.DOUBLE, 16),  # half throttled at 4: 8 needed, 10 with headroom
        (4, 0.06, ShardGrowth.DOUBLE, 8),  # barely throttled: the smallest step
        (4, 0.06, ShardGrowth.INCREMENT, 6),
        (16, 0.0, ShardGrowth.DOUBLE, 16),  # everything offered was taken: a throttle then is a backlog draining
        (16, 0.03, ShardGrowth.DOUBLE, 16),  # bursts on shards that are not full: no growth
        (16, 0.049, ShardGrowth.INCREMENT, 16),
        (16, 0.06, ShardGrowth.DOUBLE, 32),
        (1, None, ShardGrowth.DOUBLE, 2),  # too few writes seen to measure: one step of the policy
        (3, None, ShardGrowth.INCREMENT, 4),
        (1, 1.0, ShardGrowth.DOUBLE, 16),  # nothing accepted says "much more", not how much: at most 16x
        (1, 0.93, ShardGrowth.DOUBLE, 16),  # 17.9 with headroom, but one step multiplies by 16 at most
        (2, 0.99, ShardGrowth.INCREMENT, 32),
    ],
)
def test_growth_goes_in_one_step_to_what_the_throttled_share_implies(count, share, growth, want):
    assert shards_needed(count, share, growth=growth, cap=SHARD_CEILING) == want


def test_growth_stops_at_the_writers_cap_and_never_shrinks():
    assert shards_needed(1, 0.9, growth=ShardGrowth.DOUBLE, cap=8) == 8
    assert shards_needed(16, 0.9, growth=ShardGrowth.DOUBLE, cap=8) == 16


def test_the_share_counts_writes_in_the_window_at_the_count_asked_about():
    clock = Clock()
    window = ThrottleWindow(10, clock)
    for i in range(40):
        window.record("/k", 1, first=True, accepted=i % 4 == 3)  # 75 % not taken at 1 shard
    assert window.share("/k", 1) == 0.75
    assert window.share("/k", 2) is None  # nothing measured at 2 shards yet
    clock.now += 11
    assert window.share("/k", 1) is None  # older than the window


def offer(window, outcomes, clock=None, every=0.0):
    """Record one write's first attempt at key /k, 1 shard, per outcome (True: taken), ``every`` s apart."""
    for accepted in outcomes:
        window.record("/k", 1, first=True, accepted=accepted)
        if clock is not None:
            clock.now += every


def test_what_the_shards_took_before_their_first_throttle_is_not_counted():
    # 30 writes taken while the key's partition spent its burst, then 40 offered over 2 s of which 4 were
    # taken: the load is 10x what the shard takes, not the 2.3x that counting the burst would say
    clock = Clock()
    window = ThrottleWindow(10, clock)
    offer(window, [True] * 30)
    offer(window, [i % 10 == 9 for i in range(40)], clock, every=0.05)
    assert window.saturated_share("/k", 1) == window.share("/k", 1) == 0.9


def test_throttling_under_a_second_old_is_settling_and_the_whole_window_counts():
    # 100 writes taken, then 3 throttled in the same tenth of a second
    clock = Clock()
    window = ThrottleWindow(10, clock)
    offer(window, [True] * 100 + [False] * 3)
    assert window.settling("/k", 1)
    assert window.saturated_share("/k", 1) is None
    assert window.share("/k", 1) == pytest.approx(3 / 103)  # under MIN_THROTTLED_SHARE: no growth
    clock.now += ThrottleWindow.SATURATION_SECONDS
    assert not window.settling("/k", 1)
    assert window.saturated_share("/k", 1) is None  # 3 writes since the first throttle tell nothing yet


def test_a_short_window_judges_after_half_of_it():
    clock = Clock()
    window = ThrottleWindow(1, clock)
    offer(window, [False])
    clock.now += 0.4
    assert window.settling("/k", 1)
    clock.now += 0.1
    assert not window.settling("/k", 1)


def test_a_cautious_share_counts_one_standard_deviation_fewer_accepted_writes():
    # 50 writes offered, 9 taken: 82 % not taken, which sizes a 10x load at 8 shards; counted cautiously
    # (9 - 3 taken) it is 88 %, and 16
    window = ThrottleWindow(10, Clock())
    offer(window, [True] * 9 + [False] * 41)
    assert window.share("/k", 1) == pytest.approx(0.82)
    assert window.share("/k", 1, cautious=True) == pytest.approx(0.88)
    assert shards_needed(1, window.share("/k", 1), growth=ShardGrowth.DOUBLE, cap=64) == 8
    assert shards_needed(1, window.share("/k", 1, cautious=True), growth=ShardGrowth.DOUBLE, cap=64) == 16


def test_too_few_writes_tell_nothing():
    window = ThrottleWindow(10, Clock())
    for _ in range(ThrottleWindow.MIN_SAMPLES - 1):
        window.record("/k", 1, first=True, accepted=False)
    assert window.share("/k", 1) is None


def test_memory_is_bounded_per_key_and_in_keys():
    window = ThrottleWindow(10, Clock(), max_samples=50, max_keys=3)
    for key in ("/a", "/b", "/c", "/d"):
        for _ in range(100):
            window.record(key, 1, first=True, accepted=False)
    assert window.share("/a", 1) is None  # the least recently written key was forgotten
    assert len(window._keys) == 3 and all(len(v) == 50 for v in window._keys.values())


def test_retries_spend_the_partitions_units_but_are_not_more_load():
    # 40 writes offered; 10 stored at the first attempt, 10 more on a retry, 20 never: half the load was taken
    window = ThrottleWindow(10, Clock())
    for i in range(40):
        window.record("/k", 2, first=True, accepted=i % 4 == 3)
    for i in range(30):
        window.record("/k", 2, first=False, accepted=i < 10)
    assert window.share("/k", 2) == 0.5
