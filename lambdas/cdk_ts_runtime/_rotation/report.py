"""What one rotation run did (its report), how many changes it may still make, and table look-ups it shares."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import THROTTLE_CODES, error_code, error_message
from cdk_ts_runtime._errors import CdkTsError

logger = logging.getLogger("cdk_ts_runtime.rotation")


@dataclass
class RunReport:
    """What one run did and why: returned by the handler and logged as structured JSON.

    :param operation: ``create_new``, ``resize_old`` or ``reconcile``.
    :param reference_time: the run's reference time, ISO-8601.
    :param actions: what was done, one dict per action (see ``add``).
        Default: an empty list.
    :param dry_run: the run changed nothing; each action is what a real run would do, marked ``"dry_run"`` true.
        Default: False.
    """

    operation: str
    reference_time: str
    actions: list[dict[str, Any]] = field(default_factory=list)
    dry_run: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, action: str, table: str, **details: Any) -> None:
        """Record one action (``create``, ``update``, ``skip``, ``defer``, ``export``, ``delete``...)."""
        entry = {"action": action, "table": table, **details}
        if self.dry_run:
            entry["dry_run"] = True
        with self._lock:
            self.actions.append(entry)
        logger.info("%s %s", action, table, extra={"rotation": entry})

    def count(self, action: str) -> int:
        """How many actions of one kind were recorded."""
        return sum(1 for a in self.actions if a["action"] == action)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for the Lambda response."""
        answer = {"operation": self.operation, "time": self.reference_time, "actions": list(self.actions)}
        if self.dry_run:
            answer["dry_run"] = True
        return answer


class ChangeBudget:
    """How many more mutating calls (UpdateTable, DeleteTable) one run may make, and until when; thread-safe.

    :param limit: the calls the run may make.
    :param time_left: returns the seconds the run has left (the Lambda context's remaining time).
        Default: None — no time limit.
    :param margin: seconds kept in hand; no change starts with less time left, so the run still reports
        (and the custom resource still answers) before the function times out.
        Default: 30.
    """

    def __init__(self, limit: int, *, time_left: Callable[[], float] | None = None, margin: float = 30.0) -> None:
        self._limit = limit
        self._left = limit
        self._time_left = time_left
        self._margin = margin
        self._lock = threading.Lock()
        #: Why the last refused ``take()`` was refused.
        self.reason = ""

    def take(self) -> bool:
        """Use one change; False (and nothing used) when the budget or the run's time is spent (see ``reason``)."""
        with self._lock:
            if self._refused():
                return False
            self._left -= 1
            return True

    def spent(self) -> bool:
        """True when a ``take()`` now would be refused (see ``reason``); nothing is used."""
        with self._lock:
            return self._refused()

    def _refused(self) -> bool:
        """True, with ``reason`` set, when no change may start now; called with the lock held."""
        if self._left <= 0:
            self.reason = f"max_changes_per_run ({self._limit}) reached"
            return True
        if self.out_of_time():
            self.reason = f"less than {self._margin:.0f} s of the run's time left"
            return True
        return False

    def out_of_time(self) -> bool:
        """True when the run has no more than ``margin`` seconds left."""
        return self._time_left is not None and self._time_left() <= self._margin

    def has_time_for(self, seconds: float) -> bool:
        """True when a wait of ``seconds`` still ends before the run's last ``margin`` (always, without a limit)."""
        return self._time_left is None or self._time_left() - seconds > self._margin


class RotationRunError(CdkTsError, RuntimeError):
    """A run in which some tables failed; the others were done. ``report`` says which and why."""

    def __init__(self, report: RunReport) -> None:
        failed = [a for a in report.actions if a["action"] == "error"]
        names = ", ".join(f"{a['table']} ({a.get('reason', '')})" for a in failed[:10])
        super().__init__(f"{report.operation} at {report.reference_time}: {len(failed)} table(s) failed: {names}")
        self.report = report


#: Answers that mean "not now" rather than "no": the table is changing (``ResourceInUseException``), too many
#: tables are changing in the account (``LimitExceededException``), the control plane throttled the call
#: after the SDK's own retries, or a new table's backups are still being enabled
#: (``ContinuousBackupsUnavailableException``, which UpdateContinuousBackups answers right after a table turns
#: ACTIVE). The table is left for the next run, which is not an error.
RETRY_LATER_CODES = THROTTLE_CODES | {
    "ResourceInUseException", "LimitExceededException", "ContinuousBackupsUnavailableException",
}
#: ``ValidationException`` messages of UpdateTimeToLive that mean "not now": one change an hour per table
#: ("Any additional UpdateTimeToLive calls for the same table during this one hour duration result in a
#: ValidationException", API_UpdateTimeToLive), and a change already made that DescribeTimeToLive did not show
#: yet. Any other ValidationException is a real error.
RETRY_LATER_MESSAGES = (
    "Time to live has been modified multiple times within a fixed interval",
    "TimeToLive is already enabled",
)


def retry_later(error: BaseException) -> bool:
    """True when ``error`` is DynamoDB saying "not now" (:data:`RETRY_LATER_CODES`, :data:`RETRY_LATER_MESSAGES`)."""
    code = error_code(error)
    if code in RETRY_LATER_CODES:
        return True
    return code == "ValidationException" and error_message(error).startswith(RETRY_LATER_MESSAGES)


def record_failure(report: RunReport, table: str, step: str, error: BaseException, **details: Any) -> None:
    """Report one table's failed step (the run goes on with the other tables), with any ``details``.

    DynamoDB answers that mean "later" (:func:`retry_later`) are deferrals, retried by the next run; anything
    else is an ``error``, which makes the run end in :class:`RotationRunError`.
    """
    reason = f"{error_code(error) or type(error).__name__}: {error_message(error)}"
    if retry_later(error):
        report.add("defer", table, step=step, reason=f"{reason}; retried next run", **details)
    else:
        report.add("error", table, step=step, reason=reason, **details)


@dataclass(frozen=True)
class PeriodTable:
    """A table of this rotation found by ListTables, with the start of the period it holds.

    :param name: the table's name.
    :param start: the start of its period (UTC).
    """

    name: str
    start: datetime


def describe_table(dynamodb, name: str) -> dict[str, Any]:
    """DescribeTable's ``Table``, or ``{}`` when the table does not exist."""
    try:
        return dynamodb.describe_table(TableName=name)["Table"]
    except ClientError as error:
        if error_code(error) == "ResourceNotFoundException":
            return {}
        raise
