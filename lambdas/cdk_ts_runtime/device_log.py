"""DeviceLogRepository: the seven access patterns of the device-status log, each served by a Query.

Table model (the "monitoring device status updates" use case of the DynamoDB developer guide):
base table ``DeviceID`` + ``State#Date``; ``GSI1`` on ``Operator`` + ``Date``; sparse ``GSI2`` on
``EscalatedTo`` + ``State#Date`` (only escalated entries carry ``EscalatedTo``). Dates are stored as
``YYYY-MM-DDTHH:MM:SS`` in UTC without a zone suffix, so string order is time order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from botocore.exceptions import ClientError

from cdk_ts_runtime._aws import LazyClient, client_property, error_code
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime._retries import DATA_PATH
from cdk_ts_runtime.errors import ValidationError
from cdk_ts_runtime.items import from_attribute_values, query_all, to_attribute_values

ENV_TABLE_NAME = "DEVICE_LOG_TABLE_NAME"
GSI_BY_OPERATOR = "GSI1"
GSI_BY_SUPERVISOR = "GSI2"
KEY_ATTRIBUTES = ("DeviceID", "State#Date", "State", "Date", "Operator", "EscalatedTo")
WARNING_PREFIX = "WARNING"
#: Warning states: ``WARNING`` and ``WARNING<n>``; ``WARNINGS_CLEARED`` and the like are not warnings.
WARNING_STATE = re.compile(r"WARNING[0-9]*")
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


def normalise_date(value: str | datetime | date, *, end_of_day: bool = False) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` in UTC for any ISO-8601 input; a date-only value means its first (or last) second.

    :param value: ISO-8601 text, a ``date`` or a ``datetime`` (an aware one is converted to UTC; a
        naive one is taken as UTC).
    :param end_of_day: a date-only value means the day's last second.
        Default: False — the day's first second.
    :raises ValueError: when ``value`` is not ISO-8601 or out of range (``2026-02-30``, a year-1 time
        with an offset).
    """
    try:
        return _normalise_date(value, end_of_day)
    except OverflowError:
        raise ValidationError(f"date {value!r} is out of range once converted to UTC") from None


def _normalise_date(value: str | datetime | date, end_of_day: bool) -> str:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        return f"{value.isoformat()}T{'23:59:59' if end_of_day else '00:00:00'}"
    elif isinstance(value, str) and _DATE_ONLY.fullmatch(value.strip()):
        try:
            day = date.fromisoformat(value.strip())
        except ValueError as error:
            raise ValidationError(f"date {value!r} is not a calendar date: {error}") from None
        return _normalise_date(day, end_of_day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValidationError(f"date {value!r} is not ISO-8601 (e.g. 2020-04-24T14:40:00 or 2020-04-24)") from None
    else:
        raise ValidationError(f"date {value!r} is not ISO-8601 text, a date or a datetime")
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.replace(microsecond=0).isoformat()


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
        self._client = LazyClient("dynamodb", dynamodb_client, config=DATA_PATH)

    @classmethod
    def from_env(cls, env: Mapping[str, str], **kwargs: Any) -> DeviceLogRepository:
        """The repository for the table ``DeviceLogTable.bind`` named in the environment.

        :param env: the environment, usually ``os.environ``.
        :param kwargs: further constructor arguments (``dynamodb_client``, ``page_size``).
        :raises KeyError: when ``DEVICE_LOG_TABLE_NAME`` is not set.
        """
        name = env.get(ENV_TABLE_NAME)
        if not name:
            raise KeyError(
                f"environment variable {ENV_TABLE_NAME} is not set; bind the function with DeviceLogTable.bind"
            )
        return cls(name, **kwargs)

    dynamodb = client_property("_client", "The DynamoDB client (created on first use).")

    # 1
    def create_log_entry_for_specific_device(
        self,
        device_id: str,
        state: str,
        date: str | datetime,
        operator: str | None = None,
        escalated_to: str | None = None,
        **attributes: Any,
    ) -> dict[str, Any]:
        """Write one log entry; ``Operator``/``EscalatedTo`` only when given, so GSI2 stays sparse.

        :param device_id: the device.
        :param state: the state (``WARNING1``, ``NORMAL``, ...); may not contain ``#``.
        :param date: when, as ISO-8601 text or a datetime; stored in UTC without a zone suffix.
        :param operator: the operator on duty; puts the entry in GSI1.
            Default: None — no ``Operator`` attribute.
        :param escalated_to: the supervisor the entry is escalated to; puts it in GSI2.
            Default: None — not escalated (see :meth:`escalate`).
        :param attributes: further attributes stored with the entry (not the key attributes).
        :return: the item as written.
        """
        _require_text("device_id", device_id)
        _require_state(state)
        clash = sorted(set(attributes) & set(KEY_ATTRIBUTES))
        if clash:
            raise ValidationError(f"attributes {clash} are set by the repository; pass operator=/escalated_to= instead")
        when = normalise_date(date)
        item: dict[str, Any] = {"DeviceID": device_id, "State#Date": f"{state}#{when}", "State": state, "Date": when}
        if operator is not None:
            item["Operator"] = _require_text("operator", operator)
        if escalated_to is not None:
            item["EscalatedTo"] = _require_text("escalated_to", escalated_to)
        item.update(attributes)
        self.dynamodb.put_item(TableName=self.table_name, Item=to_attribute_values(item))
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
        """GSI1: one operator's entries with ``start <= Date <= end``, newest first; a date-only end covers its day."""
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
        """GSI2: entries in ``state`` escalated to ``supervisor`` on ``date``, the whole UTC day.

        ``date`` is a ``date``, ``YYYY-MM-DD`` text, any prefix of a stored timestamp as text
        (``2020-04-24T14`` for one hour), or an aware ``datetime``, which means its UTC day (an entry at
        23:30 on the 24th in UTC+02:00 was stored on the 24th in UTC at 21:30). A naive ``datetime`` is
        refused (``ValueError``): whether it means local time or UTC decides which day is read, and
        guessing wrong answers with another day's entries.
        """
        day = _day_prefix(date)
        return self._query(
            index=GSI_BY_SUPERVISOR,
            key="EscalatedTo = :supervisor AND begins_with(#sd, :prefix)",
            values={
                ":supervisor": _require_text("supervisor", supervisor),
                ":prefix": f"{_require_state(state)}#{day}",
            },
        )

    def escalate(self, device_id: str, state: str, date: str | datetime, supervisor: str) -> dict[str, Any]:
        """Set ``EscalatedTo`` on an existing entry (it then appears in GSI2); a missing entry is a LookupError."""
        key = {
            "DeviceID": _require_text("device_id", device_id),
            "State#Date": f"{_require_state(state)}#{normalise_date(date)}",
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
                raise LookupError(f"no log entry {key} to escalate") from None
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


def _day_prefix(value: str | datetime | date) -> str:
    """A whole day stays ``YYYY-MM-DD`` (a prefix of every timestamp that day); a datetime is its UTC day."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidationError(
                f"datetime {value!r} has no time zone, so its day is ambiguous: pass an aware datetime "
                "(e.g. datetime(..., tzinfo=UTC)), a date or 'YYYY-MM-DD'"
            )
        try:
            return value.astimezone(UTC).date().isoformat()
        except OverflowError:
            raise ValidationError(f"date {value!r} is out of range once converted to UTC") from None
    if isinstance(value, str) and _DATE_ONLY.fullmatch(value.strip()):
        return value.strip()
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    return normalise_date(value)


def _newest_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: (item["Date"], item["State#Date"]), reverse=True)
