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
from typing import Any, Generic, TypeVar

from botocore.config import Config

from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._inputs import number, whole
from cdk_ts_runtime._throttling import ThrottleScope, throttle_scope

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


# ---- our own retries: one policy as data, one helper that runs a call under it ----------------------------------


class Decision(StrEnum):
    """What a :class:`RetryPolicy` makes of one failed attempt."""

    #: Wait, then send again.
    RETRY = "retry"
    #: A throttle more shards cure (one partition of the base table): grow the key, wait, send again.
    GROW = "grow"
    #: Raise at once: another attempt would get the same answer.
    STOP = "stop"


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How one of our loops retries, as data: attempts, backoff, and which answers mean retry, grow or stop.

    In the spirit of botocore's ``retries/standard.py``: attempts count the first request, as its
    ``total_max_attempts`` and ``RetryContext.attempt_number`` do (1-based; a retry is made while
    ``attempt < max_attempts``), and the wait is truncated binary exponential backoff with full jitter. One
    difference, kept from our loops before this policy: the wait after attempt ``n`` is drawn below
    ``base_seconds * 2**n`` (botocore: ``2**(n - 1)``), so the first wait is up to twice the base.

    :param max_attempts: calls in all, the first included (at least 1).
    :param base_seconds: the backoff's unit: the wait after attempt ``n`` is below ``base_seconds * 2**n``.
    :param cap_seconds: the longest wait.
    :param jitter: draw each wait uniformly below its ceiling (full jitter); False waits the ceiling itself, a
        fixed pause when ``base_seconds`` is ``cap_seconds``. Default: True.
    :param retry_codes: the AWS error codes (``ClientError``) that are retried; every other error stops.
        Default: none — only unaccepted results and ``retry_errors`` are retried.
    :param grow_scopes: the throttle scopes more shards cure: a retried throttle in one of them is ``GROW``.
        Default: none — nothing grows.
    :param retry_errors: exception classes retried whatever their code (dropped connections, timeouts).
        Default: none.
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
        """``RETRY``, ``GROW`` or ``STOP`` for ``error``, from its class, its code and its throttle reasons."""
        if isinstance(error, self.retry_errors):
            return Decision.RETRY
        if error_code(error) not in self.retry_codes:
            return Decision.STOP
        if self.grow_scopes and throttle_scope(error) in self.grow_scopes:
            return Decision.GROW
        return Decision.RETRY

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based), in ``[0, cap_seconds]``."""
        ceiling = min(self.cap_seconds, self.base_seconds * 2 ** min(attempt, _LARGEST_DOUBLING))
        return rng() * ceiling if self.jitter else ceiling


#: Past this many doublings every ceiling is the cap; the bound keeps ``2**n`` a float for any attempt number.
_LARGEST_DOUBLING = 1000
T = TypeVar("T")


@dataclass(frozen=True)
class Failure(Generic[T]):
    """One attempt that did not succeed: its number (1-based), the policy's decision, and its error or result."""

    attempt: int
    decision: Decision
    error: BaseException | None = None
    result: T | None = None


def _accept_any(_result: object) -> bool:
    return True


def _ignore(_failure: Failure[Any]) -> None:
    return None


def _always() -> bool:
    return True


def _raise_or_return(failure: Failure[T]) -> T:
    """Out of attempts: raise the last error, as botocore does, or return the last result as it is."""
    if failure.error is not None:
        raise failure.error
    return failure.result  # type: ignore[return-value]  # the caller's accept() refused it; it is still a T


def call_with_retries(
    call: Callable[[int], T],
    policy: RetryPolicy,
    *,
    accept: Callable[[T], bool] = _accept_any,
    on_failure: Callable[[Failure[T]], None] = _ignore,
    may_retry: Callable[[], bool] = _always,
    give_up: Callable[[Failure[T]], T] = _raise_or_return,
    sleep: Callable[[float], None] = time.sleep,
    rng: Callable[[], float] = random.random,
) -> T:
    """``call(attempt)`` until it returns a result ``accept`` takes, under ``policy``; that result.

    An error the policy says ``STOP`` to is raised at once (``on_failure`` does not see it). Any other failure,
    an error to retry or grow on or a result ``accept`` refused, goes to ``on_failure`` (which may act on it:
    grow a key, count a throttle, or raise); then, while ``attempt < policy.max_attempts`` and ``may_retry()``
    (the caller's time, say), the helper sleeps ``policy.delay(attempt)`` and calls again. Otherwise it returns
    ``give_up(failure)``, which by default raises the last error or returns the last result.

    :param call: one attempt; it gets the attempt number (1-based) and may keep state between attempts.
    :param policy: attempts, backoff and decisions.
    :param accept: whether a result is final. Default: every result is.
    :param on_failure: called with every failure that is not ``STOP``, before the wait. Default: nothing.
    :param may_retry: asked before each wait; False gives up now. Default: always True.
    :param give_up: what the last failure becomes. Default: its error raised, or its result returned.
    :param sleep: how to wait (tests pass a fake). Default: ``time.sleep``.
    :param rng: floats in [0, 1) for the jitter (tests pass a fixed one). Default: ``random.random``.
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
