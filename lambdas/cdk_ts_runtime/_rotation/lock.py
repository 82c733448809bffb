"""Single-flight rotation runs: a lock item taken with a conditional write, with an expiry, released by its owner.

The deploy-time run, the scheduled runs and a manual one can be invoked at the same moment, and the
rotation function has no concurrency limit by default (reserving concurrency fails to deploy in new
accounts). Each run takes the lock of its table prefix before it acts; a run that finds the lock held by
another, unexpired, ends without error and says so. The expiry covers a run that died holding it.

A lock item no run of ours could have written (no expiry, an expiry that is not a whole number of seconds,
or one further ahead than the longest hold) would otherwise block every run until someone deletes it: it
counts as lapsed and is taken over with a write conditioned on the item being unchanged.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime import _environment
from cdk_ts_runtime._aws import error_code
from cdk_ts_runtime._errors import CdkTsError

#: The environment variable holding the lock table's name (set by ``RotatingTimeSeriesTables``).
LOCK_TABLE_ENV = _environment.ROTATION_LOCK_TABLE
#: The environment variable holding the rotation function's timeout in seconds (set by ``RotatingTimeSeriesTables``).
RUN_TIMEOUT_ENV = _environment.ROTATION_TIMEOUT_SECONDS
#: What a run adds to its time limit when it takes the lock (so the lock outlives the run).
LOCK_MARGIN_SECONDS = 60
#: Lambda's longest function timeout (15 minutes): the most a run can hold the lock without knowing its own limit.
LONGEST_RUN_SECONDS = 900
#: The lock table's partition key (a String: the rotation's table prefix).
LOCK_KEY = "lock_id"
#: The lock table's TTL attribute (a Number, epoch seconds): DynamoDB removes expired locks eventually;
#: the conditional write never relies on that.
LOCK_EXPIRY_ATTRIBUTE = "expires_at"


class LockTableMissingError(CdkTsError, RuntimeError):
    """The lock table named in the environment does not exist: no run can act until it does."""


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock, as the lock item says.

    :param owner: the holding run's random ID.
    :param operation: the operation the holding run is doing.
    :param expires_at: when the lock lapses, whether or not the holder releases it (None when unreadable).
    :param problem: why no run of ours could have written this item (then it counts as lapsed).
        Default: None — a well-formed lock.
    :param item: the item as read, so a takeover can be conditioned on it being unchanged.
        Default: an empty dict.
    """

    owner: str
    operation: str
    expires_at: datetime | None
    problem: str | None = None
    item: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_item(cls, item: dict[str, Any], *, now: datetime, longest_hold: timedelta) -> LockHolder:
        """Read a lock item (DynamoDB attribute-value form), naming what is malformed about it, if anything."""
        expires_at, problem = _expiry(item.get(LOCK_EXPIRY_ATTRIBUTE), now, longest_hold)
        return cls(
            owner=str(item.get("owner", {}).get("S", "?")),
            operation=str(item.get("operation", {}).get("S", "?")),
            expires_at=expires_at,
            problem=problem,
            item=item,
        )


def _expiry(value: Any, now: datetime, longest_hold: timedelta) -> tuple[datetime | None, str | None]:
    """The expiry of a lock item and, when no run of ours could have written it, why."""
    if value is None:
        return None, f"it has no {LOCK_EXPIRY_ATTRIBUTE}"
    raw = value.get("N") if isinstance(value, dict) else None
    if not isinstance(raw, str):
        return None, f"its {LOCK_EXPIRY_ATTRIBUTE} {value!r} is not a number"
    try:
        seconds = int(raw)
    except ValueError:
        return None, f"its {LOCK_EXPIRY_ATTRIBUTE} {raw} is not a whole number of epoch seconds"
    try:
        expires_at = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None, f"its {LOCK_EXPIRY_ATTRIBUTE} {raw} is not a time"
    if expires_at > now + longest_hold:
        return expires_at, (
            f"its {LOCK_EXPIRY_ATTRIBUTE} {expires_at.isoformat()} is further ahead than any run holds the lock "
            f"({int(longest_hold.total_seconds())} s: the function's timeout plus {LOCK_MARGIN_SECONDS} s)"
        )
    return expires_at, None


@dataclass(eq=False, kw_only=True)
class RunLock:
    """The lock of one rotation (one table prefix) in the lock table.

    :param dynamodb: the boto3 DynamoDB client.
    :param table_name: the lock table.
    :param lock_id: what is locked, the rotation's table prefix.
    :param clock: returns "now" as an aware datetime; the wall clock, not the event time, since the lock
        is about runs that overlap in real time.
    :param owner: this run's ID.
        Default: a random UUID.
    :param longest_hold: the longest any run holds the lock (the function's timeout plus
        ``LOCK_MARGIN_SECONDS``); an item expiring further ahead is malformed.
        Default: Lambda's longest timeout plus the margin — 960 s.
    """

    dynamodb: Any
    table_name: str
    lock_id: str
    clock: Callable[[], datetime]
    owner: str = field(default_factory=lambda: uuid.uuid4().hex)
    longest_hold: timedelta = timedelta(seconds=LONGEST_RUN_SECONDS + LOCK_MARGIN_SECONDS)

    def acquire(self, operation: str, hold: timedelta) -> LockHolder | None:
        """Take the lock for ``hold``; None when taken, else the other run that holds it (nothing written).

        The write succeeds only when no lock item exists or the one there has expired, so two runs
        racing for it cannot both win. A holder whose ``problem`` is set is a malformed item: pass it to
        :meth:`take_over`. Errors other than losing the race propagate: a run that cannot tell whether it
        holds the lock does not act.

        :raises LockTableMissingError: when the lock table does not exist, naming it and the way out.
        """
        now = self.clock()
        try:
            self._put(operation, now, hold, condition="attribute_not_exists(#key) OR #expires < :now", names={
                "#key": LOCK_KEY, "#expires": LOCK_EXPIRY_ATTRIBUTE,
            }, values={":now": {"N": str(int(now.timestamp()))}})
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return self._holder(now) or LockHolder(owner="?", operation="?", expires_at=now)
        return None

    def take_over(self, holder: LockHolder, operation: str, hold: timedelta) -> bool:
        """Take a malformed lock item over, only if it is still exactly as ``holder`` read it; True when taken.

        False when the item changed meanwhile (another run took it, or it was released): the caller
        tries :meth:`acquire` again.
        """
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        clauses = []
        for index, (name, value) in enumerate(sorted(holder.item.items())):
            names[f"#a{index}"] = name
            values[f":v{index}"] = value
            clauses.append(f"#a{index} = :v{index}")
        if LOCK_EXPIRY_ATTRIBUTE not in holder.item:
            names["#expires"] = LOCK_EXPIRY_ATTRIBUTE
            clauses.append("attribute_not_exists(#expires)")
        try:
            self._put(operation, self.clock(), hold, condition=" AND ".join(clauses), names=names, values=values)
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def _put(
        self, operation: str, now: datetime, hold: timedelta, *,
        condition: str, names: dict[str, str], values: dict[str, Any],
    ) -> None:
        try:
            self.dynamodb.put_item(
                TableName=self.table_name,
                Item={
                    LOCK_KEY: {"S": self.lock_id},
                    "owner": {"S": self.owner},
                    "operation": {"S": operation},
                    "acquired_at": {"S": now.isoformat()},
                    LOCK_EXPIRY_ATTRIBUTE: {"N": str(int((now + hold).timestamp()))},
                },
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                **({"ExpressionAttributeValues": values} if values else {}),
            )
        except ClientError as error:
            if error_code(error) == "ResourceNotFoundException":
                raise LockTableMissingError(
                    f"the rotation lock table {self.table_name!r} ({LOCK_TABLE_ENV}) does not exist, so no run can "
                    "take the lock: deploy the stack again (RotatingTimeSeriesTables creates the table), or unset "
                    f"{LOCK_TABLE_ENV} to run without the lock"
                ) from error
            raise

    def release(self) -> bool:
        """Delete the lock item if this run still owns it; False when it had lapsed and another run took it."""
        try:
            self.dynamodb.delete_item(
                TableName=self.table_name,
                Key={LOCK_KEY: {"S": self.lock_id}},
                ConditionExpression="#owner = :me",
                ExpressionAttributeNames={"#owner": "owner"},
                ExpressionAttributeValues={":me": {"S": self.owner}},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def _holder(self, now: datetime) -> LockHolder | None:
        item = self.dynamodb.get_item(
            TableName=self.table_name, Key={LOCK_KEY: {"S": self.lock_id}}, ConsistentRead=True
        ).get("Item")
        return LockHolder.from_item(item, now=now, longest_hold=self.longest_hold) if item else None
