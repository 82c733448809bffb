"""The botocore retry and timeout settings of every client the runtime creates, chosen per path, and our own.

botocore's default is retry mode ``standard`` with 3 attempts and jittered backoff of up to 20 s; a loop
of ours on top of that multiplies the waits. Each path below says why it retries as it does. A client a
user passes in is used as given. Attempts are written as ``total_max_attempts`` (the first request
included): botocore's ``max_attempts`` counts retries only, so ``max_attempts: 1`` means two requests.

Where a loop of ours does retry (the sharded writer and its point reads, the router's batches, the Timestream
writer, the next period's CreateTable, the wait for a Contributor Insights rule), it is one call of
:func:`call_with_retries` under a :class:`RetryPolicy`, kept beside the error codes it names.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._inputs import number, whole
from cdk_ts_runtime._throttling import ThrottleScope, throttle_scope

if TYPE_CHECKING:
    from botocore.config import Config

#: Control plane (CreateTable, UpdateTable, DeleteTable, Describe*, ListTables, exports, auto scaling,
#: event source mappings): the SDK's standard retries, 5 attempts. Throttles and ``LimitExceededException``
#: that outlast them leave the table for the next scheduled run; nothing of ours loops on top, except for the
#: next period's CreateTable, which the rotator tries again with longer waits while its run has time (the
#: table is needed at the boundary, see ``rotation.rotator.CREATE_ATTEMPTS``).
CONTROL_PLANE: Config

#: CloudWatch reads (right-sizing, the sharded writer's no-reasons fallback; metrics are written as EMF, never
#: sent): short timeouts and 2 attempts, so an
#: endpoint that cannot be reached (a VPC without a CloudWatch endpoint) costs seconds, not the run.
#: Right-sizing then keeps the configured tier and the next table is still created.
METRICS: Config

#: The sharded write path (``ShardedTable``'s PutItem on the main table): one attempt, no SDK retry. A
#: partition throttle must reach the writer on the first throttled request, so it can move the write to
#: another shard or grow the key at once, with its own full-jitter backoff bounded by its ``max_attempts``;
#: the SDK's standard retries would first wait out up to 3 attempts of backoff on the hot shard (measured
#: through a throttling proxy: 4.9 s for one write before the key could grow).
WRITE_PATH: Config

#: BatchWriteItem (``PeriodRouter.put_items`` / ``batch_writer``): the SDK's standard retries (3 attempts)
#: cover what it can see, a whole call refused (every item throttled, a 5xx, a dropped connection); the
#: items DynamoDB leaves in ``UnprocessedItems`` are invisible to it and are retried by the router's own
#: loop with full-jitter backoff, at most ``max_batch_attempts`` calls, then named in ``BatchWriteError``.
BATCH_PATH: Config

#: Reads and single writes with no other place to go (Query, GetItem, BatchGetItem, a PeriodRouter or
#: DeviceLogRepository PutItem, the shard-metadata table): the SDK's standard retries, 3 attempts, written
#: down so the choice is ours and not the installed botocore's. Loops of ours on top are bounded (pages,
#: ``UnprocessedKeys``) and raise naming the limit.
DATA_PATH: Config

#: Timestream WriteRecords: one SDK attempt, because ``TimestreamWriter`` retries throttles, internal
#: errors and dropped connections itself (``max_attempts``, full-jitter backoff), so ``max_attempts``
#: counts requests and rejected records are never resent.
TIMESTREAM_WRITE: Config


#: Each setting's ``Config`` keywords: built on first use, so a synth never imports botocore.config (0.16 s).
_CONFIG_KEYWORDS: dict[str, dict[str, Any]] = {
    "CONTROL_PLANE": dict(retries={"mode": "standard", "total_max_attempts": 5}),
    "METRICS": dict(connect_timeout=2, read_timeout=5, retries={"mode": "standard", "total_max_attempts": 2}),
    "WRITE_PATH": dict(retries={"mode": "standard", "total_max_attempts": 1}),
    "BATCH_PATH": dict(retries={"mode": "standard", "total_max_attempts": 3}),
    "DATA_PATH": dict(retries={"mode": "standard", "total_max_attempts": 3}),
    "TIMESTREAM_WRITE": dict(retries={"mode": "standard", "total_max_attempts": 1}),
}


def __getattr__(name: str) -> Config:
    """The client setting ``name`` as a botocore ``Config``."""
    keywords = _CONFIG_KEYWORDS.get(name)
    if keywords is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from botocore.config import Config

    config = globals()[name] = Config(**keywords)
    return config


# ---- our own retries: a policy as data, one helper that runs a call under it ----------------------------------


class Decision(StrEnum):
    """What a :class:`RetryPolicy` makes of a failed attempt: wait and retry, grow the key first, or stop."""

    RETRY = "retry"
    GROW = "grow"  # a throttle more shards cure
    STOP = "stop"


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """Attempts, backoff, and which answers mean retry, grow or stop (as botocore's ``retries/standard.py``).

    ``max_attempts`` counts the first call, as botocore's ``total_max_attempts`` and 1-based ``attempt_number``
    do. The wait after attempt ``n`` is full jitter below ``min(cap_seconds, base_seconds * 2**n)`` (botocore:
    ``2**(n-1)``; ours kept its loops' waits); ``jitter=False`` waits the ceiling itself. An error is ``RETRY``
    when it is one of ``retry_errors`` or its code is in ``retry_codes``, then ``GROW`` when its throttle scope
    is in ``grow_scopes``; anything else is ``STOP``.
    """

    max_attempts: int
    base_seconds: float
    cap_seconds: float
    jitter: bool = True
    retry_codes: frozenset[str] = frozenset()
    grow_scopes: frozenset[ThrottleScope] = frozenset()
    retry_errors: tuple[type[BaseException], ...] = ()

    def __post_init__(self) -> None:
        whole("max_attempts", self.max_attempts)
        number("base_seconds", self.base_seconds)
        number("cap_seconds", self.cap_seconds)

    def decide(self, error: BaseException) -> Decision:
        """``RETRY``, ``GROW`` or ``STOP`` for ``error``."""
        if isinstance(error, self.retry_errors):
            return Decision.RETRY
        if error_code(error) not in self.retry_codes:
            return Decision.STOP
        if self.grow_scopes and throttle_scope(error) in self.grow_scopes:
            return Decision.GROW
        return Decision.RETRY

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based), in ``[0, cap_seconds]``."""
        ceiling = min(self.cap_seconds, self.base_seconds * 2 ** min(attempt, 1000))  # 2**n stays a float
        return rng() * ceiling if self.jitter else ceiling


T = TypeVar("T")


@dataclass(frozen=True)
class Failure(Generic[T]):
    """An attempt (1-based) that failed: the policy's decision, and its error or the result not accepted."""

    attempt: int
    decision: Decision
    error: BaseException | None = None
    result: T | None = None


def _raise_or_return(failure: Failure[T]) -> T:
    if failure.error is not None:
        raise failure.error
    return failure.result  # type: ignore[return-value]  # a T that accept() refused


def call_with_retries(
    call: Callable[[int], T],
    policy: RetryPolicy,
    *,
    accept: Callable[[T], bool] = lambda _result: True,
    on_failure: Callable[[Failure[T]], None] = lambda _failure: None,
    may_retry: Callable[[], bool] = lambda: True,
    give_up: Callable[[Failure[T]], T] = _raise_or_return,
    sleep: Callable[[float], None] = time.sleep,
    rng: Callable[[], float] = random.random,
) -> T:
    """``call(attempt)`` under ``policy`` until ``accept`` takes its result; that result.

    A ``STOP`` error is raised at once. Any other failure (an error to retry or grow on, a result not accepted)
    goes to ``on_failure``; then, while ``attempt < policy.max_attempts`` and ``may_retry()``, the helper sleeps
    ``policy.delay(attempt, rng)`` and calls again, else returns ``give_up(failure)`` (by default: the last error
    raised, or the last result returned). ``sleep`` and ``rng`` are injectable so tests never wait.
    """
    attempt = 1
    while True:
        try:
            result = call(attempt)
        except Exception as error:  # noqa: BLE001 - the policy decides; STOP re-raises it untouched
            decision = policy.decide(error)
            if decision is Decision.STOP:
                raise
            failure: Failure[T] = Failure(attempt, decision, error=error)
        else:
            if accept(result):
                return result
            failure = Failure(attempt, Decision.RETRY, result=result)
        on_failure(failure)
        if attempt >= policy.max_attempts or not may_retry():
            return give_up(failure)
        sleep(policy.delay(attempt, rng))
        attempt += 1
