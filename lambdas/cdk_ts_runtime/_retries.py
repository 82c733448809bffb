"""The botocore retry and timeout settings of every client the runtime creates, chosen per path.

botocore's default is retry mode ``standard`` with 3 attempts and jittered backoff of up to 20 s; a loop
of ours on top of that multiplies the waits. Each path below says why it retries as it does. A client a
user passes in is used as given. Attempts are written as ``total_max_attempts`` (the first request
included): botocore's ``max_attempts`` counts retries only, so ``max_attempts: 1`` means two requests.
"""

from __future__ import annotations

from botocore.config import Config

#: Control plane (CreateTable, UpdateTable, DeleteTable, Describe*, ListTables, exports, auto scaling,
#: event source mappings): the SDK's standard retries, 5 attempts. Throttles and ``LimitExceededException``
#: that outlast them leave the table for the next scheduled run; nothing of ours loops on top, except for the
#: next period's CreateTable, which the rotator tries again with longer waits while its run has time (the
#: table is needed at the boundary, see ``rotation.rotator.CREATE_ATTEMPTS``).
CONTROL_PLANE = Config(retries={"mode": "standard", "total_max_attempts": 5})

#: CloudWatch reads (right-sizing, the sharded writer's no-reasons fallback; metrics are written as EMF, never
#: sent): short timeouts and 2 attempts, so an
#: endpoint that cannot be reached (a VPC without a CloudWatch endpoint) costs seconds, not the run.
#: Right-sizing then keeps the configured tier and the next table is still created.
METRICS = Config(connect_timeout=2, read_timeout=5, retries={"mode": "standard", "total_max_attempts": 2})

#: The sharded write path (``ShardedTable``'s PutItem on the main table): one attempt, no SDK retry. A
#: partition throttle must reach the writer on the first throttled request, so it can move the write to
#: another shard or grow the key at once, with its own full-jitter backoff bounded by its ``max_attempts``;
#: the SDK's standard retries would first wait out up to 3 attempts of backoff on the hot shard (measured
#: through a throttling proxy: 4.9 s for one write before the key could grow).
WRITE_PATH = Config(retries={"mode": "standard", "total_max_attempts": 1})

#: BatchWriteItem (``PeriodRouter.put_items`` / ``batch_writer``): the SDK's standard retries (3 attempts)
#: cover what it can see, a whole call refused (every item throttled, a 5xx, a dropped connection); the
#: items DynamoDB leaves in ``UnprocessedItems`` are invisible to it and are retried by the router's own
#: loop with full-jitter backoff, at most ``max_batch_attempts`` calls, then named in ``BatchWriteError``.
BATCH_PATH = Config(retries={"mode": "standard", "total_max_attempts": 3})

#: Reads and single writes with no other place to go (Query, GetItem, BatchGetItem, a PeriodRouter or
#: DeviceLogRepository PutItem, the shard-metadata table): the SDK's standard retries, 3 attempts, written
#: down so the choice is ours and not the installed botocore's. Loops of ours on top are bounded (pages,
#: ``UnprocessedKeys``) and raise naming the limit.
DATA_PATH = Config(retries={"mode": "standard", "total_max_attempts": 3})

#: Timestream WriteRecords: one SDK attempt, because ``TimestreamWriter`` retries throttles, internal
#: errors and dropped connections itself (``max_attempts``, full-jitter backoff), so ``max_attempts``
#: counts requests and rejected records are never resent.
TIMESTREAM_WRITE = Config(retries={"mode": "standard", "total_max_attempts": 1})
