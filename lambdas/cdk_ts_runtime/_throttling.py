"""What a DynamoDB throttle exhausted, read from the answer DynamoDB sends: one classification for every writer.

DynamoDB answers a throttled request in one of three shapes (botocore's service model, 2012-08-10):

- an on-demand table: ``ThrottlingException``, its reasons in ``throttlingReasons`` (lower-case t);
- a provisioned table: ``ProvisionedThroughputExceededException``, reasons in ``ThrottlingReasons``;
- the account's throughput quota: ``RequestLimitExceeded``, reasons in ``ThrottlingReasons``.

boto3 puts the modeled member at ``error.response[member name]``. A reason is ``ResourceType + OperationType +
LimitType`` (API_ThrottlingReason): ``Table|Index`` + ``Read|Write`` + ``KeyRangeThroughputExceeded`` (one
partition of the key space), ``ProvisionedThroughputExceeded`` (the provisioned units),
``AccountLimitExceeded`` (the per-table account quota of an on-demand table) or
``MaxOnDemandThroughputExceeded`` (the table's configured on-demand maximum): 16 reasons. Only the base
table's key-range reasons are cured by spreading a key over more shards.

botocore parses the reasons from 1.40.10 on (the first model with them); with an older botocore, or an
engine that sends none, a throttle's scope is ``UNKNOWN``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code, is_throttle
from cdk_ts_runtime._errors import CdkTsError

#: The members that carry the reasons: ``ThrottlingException``'s, then the other two exceptions'.
REASON_MEMBERS = ("throttlingReasons", "ThrottlingReasons")


class ThrottleScope(StrEnum):
    """What a throttle exhausted; equal to its plain value (``"partition"``, ...)."""

    #: One partition (key range) of the base table: more shards help.
    PARTITION = "partition"
    #: An index: its key range or its capacity. More shards of the base table's key do not help.
    INDEX = "index"
    #: The table or the account: provisioned units, the on-demand maximum, the per-table quota. Back off.
    TABLE = "table"
    #: A throttle without reasons (an older botocore, an emulator, a control-plane rate limit).
    UNKNOWN = "unknown"


class ThrottleLimit(StrEnum):
    """The limit a reason names (the ``LimitType`` part of API_ThrottlingReason)."""

    KEY_RANGE = "KeyRangeThroughputExceeded"
    PROVISIONED = "ProvisionedThroughputExceeded"
    ACCOUNT = "AccountLimitExceeded"
    MAX_ON_DEMAND = "MaxOnDemandThroughputExceeded"


_REASON = re.compile(r"(Table|Index)(Read|Write)(" + "|".join(limit.value for limit in ThrottleLimit) + r")")


@dataclass(frozen=True)
class ThrottleReason:
    """One entry of a throttle's reasons: what was throttled, for which operation, by which limit.

    :param reason: the reason as DynamoDB sent it (``TableWriteKeyRangeThroughputExceeded``).
    :param resource: the ARN of the table or index throttled.
        Default: ``""`` (DynamoDB sent none).
    """

    reason: str
    resource: str = ""

    @property
    def _parts(self) -> tuple[str, str, str] | None:
        match = _REASON.fullmatch(self.reason)
        return None if match is None else (match[1], match[2], match[3])

    @property
    def known(self) -> bool:
        """Whether the reason is one of the 16 API_ThrottlingReason lists."""
        return self._parts is not None

    @property
    def index(self) -> bool:
        """True for an index's reason (``Index...``)."""
        return self._parts is not None and self._parts[0] == "Index"

    @property
    def write(self) -> bool:
        """True for a write's reason (``...Write...``)."""
        return self._parts is not None and self._parts[1] == "Write"

    @property
    def limit(self) -> ThrottleLimit | None:
        """The limit exhausted; None for a reason this version does not know."""
        return None if self._parts is None else ThrottleLimit(self._parts[2])

    @property
    def scope(self) -> ThrottleScope:
        """``INDEX`` for any index's reason, ``PARTITION`` for the base table's key range, else ``TABLE``.

        ``docs/constructs/sharding.md`` documents this table; ``tests/unit/test_throttling.py`` ties the two.
        """
        if self._parts is None:
            return ThrottleScope.UNKNOWN
        if self.index:  # an index's key range or its capacity: more base shards help neither
            return ThrottleScope.INDEX
        return ThrottleScope.PARTITION if self.limit is ThrottleLimit.KEY_RANGE else ThrottleScope.TABLE


#: When reasons disagree, the one that more shards cure least decides: a table or account limit (back off)
#: outranks an index (more base shards do not help), which outranks the base table's partition.
_PRECEDENCE = (ThrottleScope.TABLE, ThrottleScope.INDEX, ThrottleScope.PARTITION)


@dataclass(frozen=True)
class Throttle:
    """A throttled request: its error code, its reasons, and what it exhausted.

    :param code: ``ThrottlingException``, ``ProvisionedThroughputExceededException``, ``RequestLimitExceeded``...
    :param reasons: the reasons DynamoDB gave, in its order.
        Default: none (DynamoDB gave none).
    """

    code: str
    reasons: tuple[ThrottleReason, ...] = ()

    @property
    def scope(self) -> ThrottleScope:
        """What was exhausted; ``TABLE`` for ``RequestLimitExceeded`` (the account's quota) even without reasons."""
        scopes = {reason.scope for reason in self.reasons}
        for scope in _PRECEDENCE:
            if scope in scopes:
                return scope
        return ThrottleScope.TABLE if self.code == "RequestLimitExceeded" else ThrottleScope.UNKNOWN

    @property
    def sharding_helps(self) -> bool:
        """True when spreading the key over more shards cures it: the base table's partition, and nothing else."""
        return self.scope is ThrottleScope.PARTITION

    def describe(self) -> str:
        """One line for logs and error messages: ``ThrottlingException (partition: TableWrite...)``."""
        names = ", ".join(reason.reason for reason in self.reasons) or "no reasons given"
        return f"{self.code} ({self.scope.value}: {names})"


def throttle_reasons(response: Mapping[str, Any]) -> tuple[ThrottleReason, ...]:
    """The reasons of a parsed error response, from either member name, at the top level or under ``Error``."""
    for place in (response, response.get("Error") or {}):
        for member in REASON_MEMBERS:
            reasons = place.get(member)
            if reasons:
                return tuple(_reason(entry) for entry in reasons)
    return ()


def _reason(entry: Any) -> ThrottleReason:
    if isinstance(entry, Mapping):
        return ThrottleReason(str(entry.get("reason") or ""), str(entry.get("resource") or ""))
    return ThrottleReason(str(entry))


def classify_throttle(error: BaseException) -> Throttle | None:
    """The :class:`Throttle` ``error`` is, or None when it is not a throttle."""
    if not isinstance(error, ClientError) or not is_throttle(error):
        return None
    return Throttle(error_code(error), throttle_reasons(error.response))


def throttle_scope(error: BaseException) -> ThrottleScope | None:
    """``PARTITION``, ``INDEX``, ``TABLE``, ``UNKNOWN`` (a throttle without reasons) or None (not a throttle)."""
    throttle = classify_throttle(error)
    return None if throttle is None else throttle.scope


class ThrottledError(ClientError, CdkTsError):
    """A request DynamoDB still throttled after every attempt cdk-ts made; ``except ClientError`` still catches it.

    :param error: the last throttled answer.
    :param attempts: the attempts made.
    """

    def __init__(self, error: ClientError, attempts: int) -> None:
        super().__init__(error.response, error.operation_name)
        #: What was exhausted (see :class:`Throttle`).
        self.throttle = classify_throttle(error) or Throttle(error_code(error))
        self.attempts = attempts

    def __str__(self) -> str:
        return f"{self.operation_name} still throttled after {self.attempts} attempts: {self.throttle.describe()}"


def throttled_after_retries(error: BaseException) -> ThrottledError | None:
    """``error`` as a :class:`ThrottledError` when it is a throttle the SDK's retries gave up on, else None.

    The attempts are the SDK's, from the response's ``RetryAttempts``.
    """
    if classify_throttle(error) is None:
        return None
    assert isinstance(error, ClientError)
    retries = error.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)
    return ThrottledError(error, int(retries) + 1)
