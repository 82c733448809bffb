"""DeviceLogRepository: the seven access patterns of the device-status log, each served by a Query.

Table model (the "monitoring device status updates" use case of the DynamoDB developer guide):
base table ``DeviceID`` + ``State#Date``; ``GSI1`` on ``Operator`` + ``Date``; sparse ``GSI2`` on
``EscalatedTo`` + ``State#Date`` (only escalated entries carry ``EscalatedTo``). Dates are stored as
``YYYY-MM-DDTHH:MM:SS`` in UTC without a zone suffix, followed by the fraction of the second when the
caller gave one (``.25``); string order is time order across both forms, so entries written by earlier
versions (whole seconds) are read by every pattern (see :mod:`cdk_ts_runtime._time_spans`).

A write never replaces an entry silently: PutItem carries ``attribute_not_exists(DeviceID)`` unless the
caller passes ``overwrite=True``, and a conflict is a :class:`LogEntryExistsError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime import _environment, _retries
from cdk_ts_runtime._aws import LazyClient, client_property, error_code
from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime._items import from_attribute_values, query_all, to_attribute_values
from cdk_ts_runtime._throttling import throttled_after_retries
from cdk_ts_runtime._time_spans import time_span

ENV_TABLE_NAME = _environment.DEVICE_LOG_TABLE_NAME
GSI_BY_OPERATOR = "GSI1"
GSI_BY_SUPERVISOR = "GSI2"
KEY_ATTRIBUTES = ("DeviceID", "State#Date", "State", "Date", "Operator", "EscalatedTo")
WARNING_PREFIX = "WARNING"
#: Warning states: ``WARNING`` and ``WARNING<n>``; ``WARNINGS_CLEARED`` and the like are not warnings.
WARNING_STATE = re.compile(r"WARNING[0-9]*")


class LogEntryExistsError(CdkTsError):
    """A log entry with the same device, state and time is stored already; nothing was written.

    :param key: the entry's key (``DeviceID`` and ``State#Date``).
    """

    def __init__(self, key: dict[str, str]) -> None:
        """Name the key that is taken."""
        super().__init__(
            f"log entry {key} exists already and was left as it is: give the time with its fraction of a "
            "second (e.g. 2020-04-24T14:40:00.250) to keep both entries, or pass overwrite=True to replace it"
        )
        self.key = key


class LogEntryMissingError(CdkTsError, LookupError):
    """No log entry has the key the call names (a ``LookupError`` too); nothing was changed.

    :param key: the entry's key (``DeviceID`` and ``State#Date``).
    """

    def __init__(self, message: str, key: dict[str, str]) -> None:
        """Name the key that is missing."""
        super().__init__(message)
        self.key = key


def normalise_date(value: str | datetime | date, *, end_of_day: bool = False) -> str:
    """The stored text of the first moment ``value`` covers (or, with ``end_of_day``, a bound on its last).

    ``value`` covers the span ISO 8601 gives it (:func:`cdk_ts_runtime._time_spans.time_span`): a date
    its day, ``2020-04-24T14`` its hour, ``2020-W17`` its week, ``14:40:00.25`` a hundredth of a second.
    The text is ``YYYY-MM-DDTHH:MM:SS`` in UTC, with the fraction of the second when there is one.

    :param value: ISO-8601 text, a ``date`` or a ``datetime`` (an aware one is converted to UTC; a
        naive one is taken as UTC).
    :param end_of_day: return the span's upper bound instead, text every stored time inside the span
        sorts at or below (the last nanosecond, ``2020-04-24T23:59:59.999999999`` for a day).
        Default: False — the span's first moment.
    :raises ValueError: when ``value`` is not ISO-8601 or out of range (``2026-02-30``, a year-1 time
        with an offset).
    """
    span = time_span(value)
    return span.last_text if end_of_day else span.first_text


def entry_time(value: str | datetime | date) -> str:
    """The stored text of a log entry's time: ``value`` must name a moment (to the second or finer).

    A time given to the day, hour or minute (``2026-03-10T12``, ``2026-W11-2``) is a span, and storing
    it as one second would say something ISO 8601 does not: it is refused. Fractions of a second are kept
    (up to nanoseconds), so two entries in one second stay two entries.

    :param value: ISO-8601 text, or a ``datetime`` (a naive one is taken as UTC).
    :raises ValueError: for a span longer than a second, or what
        :func:`normalise_date` refuses.
    """
    span = time_span(value)
    if not span.is_moment:
        raise ValidationError(
            f"date {value!r} gives a whole {span.unit} ({span.first_text} up to {span.last_text}), not the moment of "
            "a log entry: give the time to the second at least (e.g. 2020-04-24T14:40:00)"
        )
    return span.first_text


def _require_text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} {value!r} must be a non-empty string")
    return value


def _require_state(state: Any) -> str:
    _require_text("state", state)
    if "#" in state:
        raise ValidationError(f"state {state!r} may not contain '#': it separates state and date in the sort key")
    return state


class DeviceLogRepository:
    """Reads and writes device status log entries; every read is Query with a key condition, pages followed.

    ``page_size`` sets the Query ``Limit`` (None: DynamoDB's 1 MB pages); results are plain dicts.
    """

    def __init__(self, table_name: str, *, dynamodb_client=None, page_size: int | None = None) -> None:
        """Name the table; no AWS call is made until the first read or write.

        :param table_name: the device log table's name.
        :param dynamodb_client: the boto3 DynamoDB client to use, as given (the library expects botocore's
            ``standard`` retry mode; reads and writes here have no retry loop of their own).
            Default: None — one is created on first use with ``standard`` retries, 3 attempts.
        :param page_size: the Query ``Limit`` per page (every page is followed either way).
            Default: None — DynamoDB's 1 MB pages.
        :raises ValueError: for an empty table name or ``page_size`` below 1.
        """
        self.table_name = _require_text("table_name", table_name)
        whole("page_size", page_size, optional=True)
        self.page_size = page_size
        self._client = LazyClient("dynamodb", dynamodb_client, config=_retries.DATA_PATH)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> DeviceLogRepository:
        """The repository for the table ``DeviceLogTable.bind`` named in the environment.

        :param env: the environment, usually ``os.environ``. The name before 0.3, ``DEVICE_LOG_TABLE_NAME``, set
            alone is refused, naming the new one.
        :param kwargs: further constructor arguments (``dynamodb_client``, ``page_size``).
        :raises EnvironmentVariableMissingError: (a ``KeyError``) when ``CDK_TS_DEVICE_LOG_TABLE_NAME`` is not set.
        """
        env = _environment.required(env, (ENV_TABLE_NAME,), "bind the function with DeviceLogTable.bind")
        return cls(env[ENV_TABLE_NAME], **kwargs)

    dynamodb = client_property("_client", "The DynamoDB client (created on first use).")

    # 1
    def create_log_entry_for_specific_device(
        self,
        device_id: str,
        state: str,
        date: str | datetime,
        operator: str | None = None,
        escalated_to: str | None = None,
        *,
        overwrite: bool = False,
        **attributes: Any,
    ) -> dict[str, Any]:
        """Write one log entry; ``Operator``/``EscalatedTo`` only when given, so GSI2 stays sparse.

        :param device_id: the device.
        :param state: the state (``WARNING1``, ``NORMAL``, ...); may not contain ``#``.
        :param date: when, as ISO-8601 text or a datetime, to the second at least; stored in UTC without a
            zone suffix, with the fraction of the second as given (up to nanoseconds). A time to the day,
            hour or minute is a span, not an entry's moment, and is refused (:func:`entry_time`).
        :param operator: the operator on duty; puts the entry in GSI1.
            Default: None — no ``Operator`` attribute.
        :param escalated_to: the supervisor the entry is escalated to; puts it in GSI2.
            Default: None — not escalated (see :meth:`escalate`).
        :param overwrite: replace an entry with the same device, state and time.
            Default: False — such an entry is kept and :class:`LogEntryExistsError` raised.
        :param attributes: further attributes stored with the entry (not the key attributes).
        :return: the item as written.
        :raises LogEntryExistsError: when the entry exists and ``overwrite`` is False.
        :raises cdk_ts_runtime.ThrottledError: still throttled after the client's retries (a
            ``ClientError``; its ``throttle`` says whether the table's partition, an index or a limit was hit).
        """
        _require_text("device_id", device_id)
        _require_state(state)
        clash = sorted(set(attributes) & set(KEY_ATTRIBUTES))
        if clash:
            raise ValidationError(f"attributes {clash} are set by the repository; pass operator=/escalated_to= instead")
        when = entry_time(date)
        item: dict[str, Any] = {"DeviceID": device_id, "State#Date": f"{state}#{when}", "State": state, "Date": when}
        if operator is not None:
            item["Operator"] = _require_text("operator", operator)
        if escalated_to is not None:
            item["EscalatedTo"] = _require_text("escalated_to", escalated_to)
        item.update(attributes)
        request: dict[str, Any] = {"TableName": self.table_name, "Item": to_attribute_values(item)}
        if not overwrite:
            request["ConditionExpression"] = "attribute_not_exists(DeviceID)"
        try:
            self.dynamodb.put_item(**request)
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise LogEntryExistsError({"DeviceID": device_id, "State#Date": item["State#Date"]}) from None
            if (throttled := throttled_after_retries(error)) is not None:
                raise throttled from error  # the base table's partition, or a GSI's: the reasons say which
            raise
        return item

    # 2
    def get_logs_for_specific_device(self, device_id: str, state: str) -> list[dict[str, Any]]:
        """One device's entries in one state, newest first (``WARNING1`` never matches ``WARNING10``)."""
        return self._query(
            key="DeviceID = :device AND begins_with(#sd, :prefix)",
            values={":device": _require_text("device_id", device_id), ":prefix": f"{_require_state(state)}#"},
        )

    # 3
    def get_warning_logs_for_specific_device(self, device_id: str) -> list[dict[str, Any]]:
        """Every warning level (``WARNING``, ``WARNING1``, ...) of one device, newest first; not ``WARNINGS_CLEARED``.

        Two key-condition queries: ``WARNING#…`` (plain warnings) and the numbered levels between
        ``WARNING0`` and ``WARNING9…``, so other states that merely begin with "WARNING" are never read.
        The sort key orders by level before date, so the pages are merged by date here.
        """
        device = _require_text("device_id", device_id)
        plain = self._query(
            key="DeviceID = :device AND begins_with(#sd, :prefix)",
            values={":device": device, ":prefix": f"{WARNING_PREFIX}#"},
        )
        numbered = self._query(
            key="DeviceID = :device AND #sd BETWEEN :low AND :high",
            values={":device": device, ":low": f"{WARNING_PREFIX}0", ":high": f"{WARNING_PREFIX}9\U0010ffff"},
        )
        warnings = [i for i in plain + numbered if WARNING_STATE.fullmatch(i["State#Date"].split("#", 1)[0])]
        return _newest_first(warnings)

    # 4
    def get_logs_for_operator_between_two_dates(
        self, operator: str, start: str | datetime | date, end: str | datetime | date
    ) -> list[dict[str, Any]]:
        """GSI1: one operator's entries from ``start`` to ``end`` inclusive, newest first.

        Each bound covers the span ISO 8601 gives it: ``end="2020-04-24"`` reads to the end of that day,
        ``start="2020-04-24T14"`` from the start of that hour, ``end="2020-W17"`` to the end of that week.
        """
        low, high = normalise_date(start), normalise_date(end, end_of_day=True)
        if low > high:
            raise ValidationError(f"start {start!r} is after end {end!r}")
        return self._query(
            index=GSI_BY_OPERATOR,
            key="#operator = :operator AND #date BETWEEN :low AND :high",
            values={":operator": _require_text("operator", operator), ":low": low, ":high": high},
            names={"#operator": "Operator", "#date": "Date"},
        )

    # 5
    def get_escalated_logs_for_supervisor(self, supervisor: str) -> list[dict[str, Any]]:
        """GSI2: every entry escalated to ``supervisor``, newest first."""
        items = self._query(
            index=GSI_BY_SUPERVISOR,
            key="EscalatedTo = :supervisor",
            values={":supervisor": _require_text("supervisor", supervisor)},
        )
        return _newest_first(items)

    # 6
    def get_escalated_logs_with_specific_status_for_supervisor(
        self, supervisor: str, state: str
    ) -> list[dict[str, Any]]:
        """GSI2: entries in ``state`` escalated to ``supervisor``, newest first."""
        return self._query(
            index=GSI_BY_SUPERVISOR,
            key="EscalatedTo = :supervisor AND begins_with(#sd, :prefix)",
            values={":supervisor": _require_text("supervisor", supervisor), ":prefix": f"{_require_state(state)}#"},
        )

    # 7
    def get_escalated_logs_with_specific_status_for_supervisor_for_date(
        self, supervisor: str, state: str, date: str | datetime | date
    ) -> list[dict[str, Any]]:
        """GSI2: entries in ``state`` escalated to ``supervisor`` within ``date``, the whole span it gives.

        ``date`` is a ``date`` or ISO-8601 text, covering the span ISO 8601 gives it (``2020-04-24`` its
        UTC day, ``2020-04-24T14`` one hour, ``2020-W17`` a week), or an aware ``datetime``, which means
        its UTC day (an entry at 23:30 on the 24th in UTC+02:00 was stored on the 24th in UTC at 21:30).
        A naive ``datetime`` is refused (``ValueError``): whether it means local time or UTC decides which
        day is read, and guessing wrong answers with another day's entries.
        """
        span = time_span(_utc_day(date) if isinstance(date, datetime) else date)
        state = _require_state(state)
        return self._query(
            index=GSI_BY_SUPERVISOR,
            key="EscalatedTo = :supervisor AND #sd BETWEEN :low AND :high",
            values={
                ":supervisor": _require_text("supervisor", supervisor),
                ":low": f"{state}#{span.first_text}",
                ":high": f"{state}#{span.last_text}",
            },
        )

    def escalate(self, device_id: str, state: str, date: str | datetime, supervisor: str) -> dict[str, Any]:
        """Set ``EscalatedTo`` on an existing entry (it then appears in GSI2); a missing entry is a LookupError.

        ``date`` names the entry's moment as it was written (to the second, with its fraction if it had one).

        :raises LogEntryMissingError: (a ``LookupError``) when no entry has that key.
        """
        key = {
            "DeviceID": _require_text("device_id", device_id),
            "State#Date": f"{_require_state(state)}#{entry_time(date)}",
        }
        try:
            response = self.dynamodb.update_item(
                TableName=self.table_name,
                Key=to_attribute_values(key),
                UpdateExpression="SET EscalatedTo = :supervisor",
                ConditionExpression="attribute_exists(DeviceID)",
                ExpressionAttributeValues=to_attribute_values({":supervisor": _require_text("supervisor", supervisor)}),
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise LogEntryMissingError(f"no log entry {key} to escalate", key) from None
            if (throttled := throttled_after_retries(error)) is not None:
                raise throttled from error
            raise
        return from_attribute_values(response["Attributes"])

    def _query(
        self, *, key: str, values: dict[str, Any], index: str | None = None, names: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": key,
            "ExpressionAttributeValues": to_attribute_values(values),
            "ScanIndexForward": False,
        }
        attribute_names = dict(names or {})
        if "#sd" in key:
            attribute_names["#sd"] = "State#Date"
        if attribute_names:
            request["ExpressionAttributeNames"] = attribute_names
        if index:
            request["IndexName"] = index
        if self.page_size:
            request["Limit"] = self.page_size
        return query_all(self.dynamodb, request)


def _utc_day(value: datetime) -> date:
    """An aware datetime's UTC day; a naive one is refused, since its day depends on a zone it does not name."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(
            f"datetime {value!r} has no time zone, so its day is ambiguous: pass an aware datetime "
            "(e.g. datetime(..., tzinfo=UTC)), a date or 'YYYY-MM-DD'"
        )
    try:
        return value.astimezone(UTC).date()
    except OverflowError:
        raise ValidationError(f"date {value!r} is out of range once converted to UTC") from None


def _newest_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: (item["Date"], item["State#Date"]), reverse=True)
