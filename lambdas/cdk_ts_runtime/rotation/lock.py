"""Single-flight rotation runs: a lock item taken with a conditional write, with an expiry, released by its owner.

The deploy-time run, the scheduled runs and a manual one can be invoked at the same moment, and the
rotation function has no concurrency limit by default (reserving concurrency fails to deploy in new
accounts). Each run takes the lock of its table prefix before it acts; a run that finds the lock held by
another, unexpired, ends without error and says so. The expiry covers a run that died holding it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import error_code

#: The environment variable holding the lock table's name (set by ``RotatingTimeSeriesTables``).
LOCK_TABLE_ENV = "CDK_TS_ROTATION_LOCK_TABLE"
#: The lock table's partition key (a String: the rotation's table prefix).
LOCK_KEY = "lock_id"
#: The lock table's TTL attribute (a Number, epoch seconds): DynamoDB removes expired locks eventually;
#: the conditional write never relies on that.
LOCK_EXPIRY_ATTRIBUTE = "expires_at"


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock, as the lock item says.

    :param owner: the holding run's random ID.
    :param operation: the operation the holding run is doing.
    :param expires_at: when the lock lapses, whether or not the holder releases it.
    """

    owner: str
    operation: str
    expires_at: datetime

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> LockHolder:
        """Read a lock item (DynamoDB attribute-value form)."""
        return cls(
            owner=item.get("owner", {}).get("S", "?"),
            operation=item.get("operation", {}).get("S", "?"),
            expires_at=datetime.fromtimestamp(int(item.get(LOCK_EXPIRY_ATTRIBUTE, {}).get("N", "0")), UTC),
        )


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
    """

    dynamodb: Any
    table_name: str
    lock_id: str
    clock: Callable[[], datetime]
    owner: str = field(default_factory=lambda: uuid.uuid4().hex)

    def acquire(self, operation: str, hold: timedelta) -> LockHolder | None:
        """Take the lock for ``hold``; None when taken, else the other run that holds it (nothing written).

        The write succeeds only when no lock item exists or the one there has expired, so two runs
        racing for it cannot both win. Errors other than losing the race propagate: a run that cannot
        tell whether it holds the lock does not act.
        """
        now = self.clock()
        expires = int((now + hold).timestamp())
        try:
            self.dynamodb.put_item(
                TableName=self.table_name,
                Item={
                    LOCK_KEY: {"S": self.lock_id},
                    "owner": {"S": self.owner},
                    "operation": {"S": operation},
                    "acquired_at": {"S": now.isoformat()},
                    LOCK_EXPIRY_ATTRIBUTE: {"N": str(expires)},
                },
                ConditionExpression="attribute_not_exists(#key) OR #expires < :now",
                ExpressionAttributeNames={"#key": LOCK_KEY, "#expires": LOCK_EXPIRY_ATTRIBUTE},
                ExpressionAttributeValues={":now": {"N": str(int(now.timestamp()))}},
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return self._holder() or LockHolder(owner="?", operation="?", expires_at=now)
        return None

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

    def _holder(self) -> LockHolder | None:
        item = self.dynamodb.get_item(
            TableName=self.table_name, Key={LOCK_KEY: {"S": self.lock_id}}, ConsistentRead=True
        ).get("Item")
        return LockHolder.from_item(item) if item else None
