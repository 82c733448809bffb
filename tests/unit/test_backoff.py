"""Backoff: the one definition of the jittered waits the router, the sharded table and the Timestream writer use."""

import random

from cdk_ts_runtime._aws import Backoff


def test_wait_doubles_each_attempt_until_the_cap():
    # given a backoff whose jitter always draws the middle of its range
    slept = []
    backoff = Backoff(base=0.05, cap=1.0, sleep=slept.append, rng=lambda: 0.5)
    # when it waits before attempts 1..6
    waits = [backoff.wait(attempt) for attempt in range(1, 7)]
    # then the range doubles (0.1, 0.2, 0.4, 0.8) until the cap of 1.0 holds it, and what it slept is what it said
    assert waits == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]
    assert slept == waits


def test_wait_is_never_longer_than_the_cap():
    backoff = Backoff(base=0.1, cap=5.0, sleep=lambda _s: None, rng=random.Random(3).random)

    waits = [backoff.wait(attempt) for attempt in range(1, 40)]

    assert all(0 <= w < 5.0 for w in waits)
    assert max(waits) > 2.5  # late attempts draw from the whole capped range, not a shrinking one


def test_spread_waits_a_random_time_below_the_cap():
    slept = []
    backoff = Backoff(base=0.05, cap=2.0, sleep=slept.append, rng=iter([0.0, 0.25, 0.99]).__next__)

    assert [backoff.spread() for _ in range(3)] == [0.0, 0.5, 1.98]
    assert slept == [0.0, 0.5, 1.98]
