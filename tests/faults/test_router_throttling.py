"""PeriodRouter's batches under DynamoDB's per-partition write limit, through the rules proxy.

The proxy's clock is frozen, so a partition's units refill only when time is moved: by the router's own
backoff (its ``sleep`` advances the proxy clock by the time it would have slept) or not at all.
"""

from __future__ import annotations

import pytest

from cdk_ts_runtime import BatchWriteError
from cdk_ts_runtime._retries import BATCH_PATH
from tests.support.router import hot_items
from tests.support.throttling import router_through
from tests.support.times import utc


def stored(router):
    return [i["i"] for i in router.query(7, utc(2026, 3, 2), utc(2026, 3, 2, 23))]


@pytest.mark.slow  # retries with backoff through the rules proxy: ~8 s
def test_throttled_batch_items_are_retried_with_backoff_until_all_are_written(router_proxy, unique_name):
    # given one partition key taking 10 writes a second, and 60 items for it (3 batches)
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        router_proxy.advance(seconds)  # the wait is what refills the partition

    router = router_through(
        router_proxy, unique_name, BATCH_PATH, sleep=sleep, max_batch_attempts=50, backoff_cap_seconds=1.0
    )
    # when they are written in batches
    assert router.put_items(hot_items(60)) == 60
    # then DynamoDB left items unprocessed, the router waited and retried, and every item is stored once
    assert router_proxy.stats()["refusals"].get("BatchWriteItem:UnprocessedItems", 0) >= 2
    assert waits and max(waits) <= 1.0
    assert sorted(stored(router)) == list(range(60))


@pytest.mark.slow  # retries with backoff through the rules proxy: ~10 s
def test_items_a_partition_never_takes_are_named_and_the_rest_are_stored(router_proxy, unique_name):
    # given a partition that takes 10 items and then nothing (the clock does not move)
    router = router_through(router_proxy, unique_name, BATCH_PATH, sleep=lambda _s: None, max_batch_attempts=3)
    # when 40 items are written to it
    with pytest.raises(BatchWriteError) as raised:
        router.put_items(hot_items(40))
    # then the error names exactly the items not stored, and why
    written = set(stored(router))
    unwritten = {i["i"] for i in raised.value.items}
    assert len(written) == 10
    assert written | unwritten == set(range(40)) and not written & unwritten
    (reason,) = set(raised.value.reasons)  # one reason for all: the partition's throttle, named as DynamoDB named it
    assert reason.startswith("unprocessed after 3 attempts (throttled: ")
    assert "(partition: TableWriteKeyRangeThroughputExceeded)" in reason
    assert raised.value.attempts == 3
    # a whole call refused (ThrottlingException: the router's tables are on-demand) counted as one of its attempts
    assert router_proxy.stats()["refusals"].get("BatchWriteItem:ThrottlingException", 0) >= 1
