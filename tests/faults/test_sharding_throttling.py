"""ShardedTable under DynamoDB's per-partition write limit, through the rules proxy: botocore's own retries run.

The proxy (cdk_ts.testing) answers a write over a partition key's units per second on these
on-demand tables with ``ThrottlingException`` and ``throttlingReasons`` ``TableWriteKeyRangeThroughputExceeded``,
as DynamoDB does. Its clock is frozen: time moves only when a test (or a writer's ``sleep``) moves it, so the
token buckets refill deterministically. Every test asserts what was written and what the metadata holds.
"""

from __future__ import annotations

import random
import threading

import pytest
from botocore.exceptions import ClientError

from tests.support.sharding import shard_history
from tests.support.threads import start_and_join
from tests.support.throttling import ProxyClock, writer


def main_table_puts(proxy) -> int:
    return proxy.stats()["requests"].get("PutItem", 0)


def test_a_partition_throttle_reaches_the_writer_on_the_first_request(limited):
    proxy, main, metadata = limited
    clock = ProxyClock(proxy)
    table = writer(proxy, main, metadata, clock, max_attempts=3)
    for i in range(10):  # one second's worth of units for the key's only shard
        table.put_item({"file_path": "/hot", "timestamp": i})
    proxy.reset_stats()
    with pytest.raises(ClientError) as raised:
        table.put_item({"file_path": "/hot", "timestamp": 10})
    # three attempts of ours, one request each: the SDK retried none of them on the hot shard
    assert main_table_puts(proxy) == 3
    assert raised.value.response["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
    assert [i["timestamp"] for i in table.query("/hot")] == list(range(10))


@pytest.mark.slow  # writer threads through the rules proxy: ~14 s
def test_a_burst_of_writers_grows_a_new_key_once_as_soon_as_its_load_is_measured_and_loses_nothing(limited):
    # given 4 writers (as 4 processes would be) offering 60 writes/s to one key: 5x one partition's 12 units/s
    proxy, main, metadata = limited
    proxy.configure(write_units_per_second=12)
    clock = ProxyClock(proxy)
    writers = [writer(proxy, main, metadata, clock, seed=i, max_attempts=2) for i in range(4)]
    writers[0].put_item({"file_path": "/viral", "timestamp": -1})  # the key's creation
    accepted: list[int] = []
    refused: list[int] = []
    per_step: list[int] = []
    lock = threading.Lock()

    def offer(w, stamps):
        for stamp in stamps:
            try:
                w.put_item({"file_path": "/viral", "timestamp": stamp})
            except ClientError as error:
                assert error.response["Error"]["Code"] == "ThrottlingException"  # the tables are on-demand
                with lock:
                    refused.append(stamp)
            else:
                with lock:
                    accepted.append(stamp)

    # when they write for 16 s of proxy time, each one write every 1/15 s, all four at once
    stamps = iter(range(10**6))
    order = random.Random(3)
    for _step in range(16 * 15):
        before = len(accepted)
        # started in a new order each time: the first thread started wins the partition's next unit, and a
        # fixed order would give one writer every unit (real writers race fairly, on average)
        start_and_join(threading.Thread(target=offer, args=(w, [next(stamps)])) for w in order.sample(writers, 4))
        per_step.append(len(accepted) - before)
        clock.advance(1 / 15)

    # then the key grew exactly once, as soon as a writer had seen 20 of its own writes (about 1.3 s in, not a
    # cooldown: a key never grown has no growth to space from), in one step to what the load needs: 4 of 5
    # writes not taken is 5x the load, 6.25 shards with headroom, doubled up to 8; the growing writer measured
    # only its own writes, whose share the threads' race scatters by a few points, and past 84 % that means 16
    item = proxy.client().get_item(TableName=metadata, Key={"file_path": {"S": "/viral"}}, ConsistentRead=True)["Item"]
    history = shard_history(item)
    (created, _one), (grown_at, grown_to) = history
    assert grown_to in (8, 16)
    assert grown_at - created <= 3
    assert (item["number_of_shards"], item["version"]) == ({"N": str(grown_to)}, {"N": "2"})
    # every accepted write is stored exactly once, every refused one is not stored
    stored = [i["timestamp"] for i in writers[3].query("/viral")]
    assert len(stored) == len(set(stored))
    assert set(stored) == {-1, *accepted}
    assert not set(stored) & set(refused)
    # and from a second after the growth the key takes the whole load
    assert per_step[-60:] == [4] * 60
