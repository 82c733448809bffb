"""One line of the archive: a DynamoDB stream record as a JSON object, and records grouped into objects.

Every field of a line is a JSON string (or null): ``keys``, ``newImage``, ``oldImage`` and
``userIdentity`` hold DynamoDB JSON *as text*, so any JSON reader takes any item (attribute names
that differ only in case, lists of mixed types, 38-digit numbers, which DynamoDB JSON keeps as text).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cdk_ts_runtime._errors import CdkTsError, ValidationError

_TABLE_IN_ARN = re.compile(r":table/([^/]+)/stream/([^/]+)$")
#: A DynamoDB number as it may stand in JSON unquoted: JSON's number grammar (DynamoDB's own text is a subset).
_JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_MAX_DIGITS = 38  # DynamoDB numbers carry up to 38 significant digits
#: DynamoDB's limit on nested attributes ("Nested attribute depth: 32 levels", Service quotas in the
#: DynamoDB Developer Guide): a deeper value is not something a stream sends, and refusing it here keeps
#: the conversion far from Python's recursion limit.
MAX_NESTING = 32
_READ_ERRORS = (KeyError, ValueError, TypeError, OverflowError, OSError, AttributeError)


class UnreadableRecordError(CdkTsError, ValueError):
    """A stream record that cannot be archived and cannot be reported by sequence number: the whole batch fails."""


def dynamodb_number(text: Any) -> str:
    """``text`` after checking it is a number DynamoDB stores (at most 38 significant digits) in JSON's grammar."""
    if not isinstance(text, str) or not _JSON_NUMBER.fullmatch(text):
        raise ValidationError(f"{text!r} is not a DynamoDB number")
    if len(text) <= _MAX_DIGITS:
        return text
    digits = text.lstrip("-").split("e")[0].split("E")[0].replace(".", "").lstrip("0")
    if len(digits.rstrip("0")) > _MAX_DIGITS:
        raise ValidationError(f"{text!r} has more than {_MAX_DIGITS} significant digits")
    return text


def typed_value(attribute: Mapping[str, Any], *, depth: int = 1) -> dict[str, Any]:
    """One AttributeValue as DynamoDB JSON: numbers checked and kept as text, binary as base64 text.

    Refuses (``ValueError``) what DynamoDB Streams never sends: a ``BOOL`` that is not a JSON boolean,
    a ``NULL`` that is not ``true``, an attribute that is not one ``{type: value}`` pair, nesting
    deeper than :data:`MAX_NESTING` levels, ``B``/``BS`` text that is not base64 (:func:`binary_text`)
    and ``S``/``SS`` text or attribute names that are not Unicode (:func:`unicode_text`).

    :param attribute: the AttributeValue, e.g. ``{"N": "1"}``.
    :param depth: how deep ``attribute`` lies (a top-level attribute is at depth 1).
        Default: 1.
    """
    if depth > MAX_NESTING:
        raise ValidationError(f"attribute nested deeper than DynamoDB's {MAX_NESTING} levels")
    if not isinstance(attribute, Mapping) or len(attribute) != 1:
        raise ValidationError(f"{_short(attribute)} is not an AttributeValue (one {{type: value}} pair)")
    (kind, value), = attribute.items()
    if kind == "S":
        if not isinstance(value, str):
            raise ValidationError(f"S value {_short(value)} is not a string")
        return {"S": unicode_text(value, "S value")}
    if kind == "BOOL":
        if not isinstance(value, bool):
            raise ValidationError(f"BOOL value {_short(value)} is not a JSON boolean")
        return {"BOOL": value}
    if kind == "NULL":
        if value is not True:
            raise ValidationError(f"NULL value {_short(value)} is not true")
        return {"NULL": True}
    if kind == "N":
        return {"N": dynamodb_number(value)}
    if kind == "B":
        return {"B": binary_text(value)}
    if kind in ("SS", "NS", "BS", "L") and not isinstance(value, list):
        raise ValidationError(f"{kind} value {_short(value)} is not a list")
    if kind == "SS":
        if not all(isinstance(v, str) for v in value):
            raise ValidationError(f"SS value {_short(value)} holds something other than strings")
        return {"SS": [unicode_text(v, "SS value") for v in value]}
    if kind == "NS":
        return {"NS": [dynamodb_number(n) for n in value]}
    if kind == "BS":
        return {"BS": [binary_text(b) for b in value]}
    if kind == "M":
        return {"M": typed_image(value, depth=depth + 1)}
    if kind == "L":
        return {"L": [typed_value(v, depth=depth + 1) for v in value]}
    raise ValidationError(f"unknown AttributeValue type {kind!r}")


def typed_image(image: Mapping[str, Any], *, depth: int = 1) -> dict[str, Any]:
    """An item (or key) as DynamoDB JSON, checked attribute by attribute (see :func:`typed_value`).

    :param image: the item, attribute name to AttributeValue.
    :param depth: the depth of the item's attributes (an item's own attributes are at depth 1).
        Default: 1.
    """
    if not isinstance(image, Mapping):
        raise ValidationError(f"{_short(image)} is not an item (a map of attribute names to AttributeValues)")
    typed = {}
    for name, value in image.items():
        if not isinstance(name, str):
            raise ValidationError(f"attribute name {_short(name)} is not a string")
        typed[unicode_text(name, "attribute name")] = typed_value(value, depth=depth)
    return typed


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def dynamodb_json_text(image: Mapping[str, Any] | None) -> str | None:
    """An item as compact DynamoDB JSON text (None stays None): what a line holds in ``keys``/``newImage``/``oldImage``.

    Get an attribute out exactly: Athena ``json_extract_scalar(newimage, '$["Url"].S')``, DuckDB
    ``json_extract_string(newImage, '$.Url.S')``; numbers come back as their exact text (``.N``).
    """
    if image is None:
        return None
    return json.dumps(typed_image(image), separators=(",", ":"), ensure_ascii=False)


def binary_text(value: bytes | str) -> str:
    """A binary value as the base64 text a line holds: bytes are encoded, text must be base64 already.

    Lambda hands binary over base64-encoded (standard alphabet, padded: RFC 4648 section 4, what
    DynamoDB JSON uses); boto3's GetRecords hands bytes. Text that does not decode, or does not encode
    back to itself (missing padding, stray characters, line breaks, non-zero spare bits), is not
    something Streams sends, and archiving it as given would store a value no reader can decode.

    :param value: the ``B`` value, or one member of a ``BS``.
    :raises ValueError: naming the value and why it is not base64.
    """
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if not isinstance(value, str):
        raise ValidationError(f"binary value {_short(value)} is neither base64 text nor bytes")
    try:
        canonical = base64.b64encode(base64.b64decode(value, validate=True)).decode()
    except (binascii.Error, ValueError) as error:
        raise ValidationError(f"binary value {_short(value)} is not base64 ({error})") from None
    if canonical != value:
        raise ValidationError(f"binary value {_short(value)} is not base64 as DynamoDB writes it ({canonical!r})")
    return value


def unicode_text(value: str, what: str) -> str:
    """``value`` after checking it is Unicode text: no lone surrogates, which UTF-8 cannot encode.

    DynamoDB strings are UTF-8, so a stream record never holds one; a JSON ``"\\ud800"`` escape parses
    into one in Python, and would reach the archive as an escape no UTF-8 reader accepts.

    :param value: the text.
    :param what: what it is, for the message (``"S value"``, ``"attribute name"``).
    :raises ValueError: naming the first code point that is not Unicode text.
    """
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = ord(value[error.start])
        raise ValidationError(
            f"{what} {_short(value)} holds U+{bad:04X} at {error.start}, a lone surrogate: not Unicode text, "
            "which DynamoDB Streams never sends"
        ) from None
    return value


def _created_at(record: Mapping[str, Any]) -> datetime:
    raw = record["dynamodb"]["ApproximateCreationDateTime"]
    if isinstance(raw, datetime):
        return raw.astimezone(UTC)
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ValidationError(f"ApproximateCreationDateTime {raw!r} is not a time")
    return datetime.fromtimestamp(float(raw), UTC)


def sequence_number(record: Mapping[str, Any]) -> str | None:
    """The record's sequence number, or None when it has none that Lambda could retry from."""
    change = record.get("dynamodb") if isinstance(record, Mapping) else None
    value = change.get("SequenceNumber") if isinstance(change, Mapping) else None
    return value if isinstance(value, str) and value.strip() else None


def table_and_stream(record: Mapping[str, Any]) -> tuple[str, str]:
    """The table name and stream label from the record's ``eventSourceARN``."""
    arn = record.get("eventSourceARN", "")
    match = _TABLE_IN_ARN.search(arn)
    if not match:
        raise ValidationError(f"record {record.get('eventID')!r} has no DynamoDB stream ARN (eventSourceARN {arn!r})")
    return match.group(1), re.sub(r"[^0-9A-Za-z]", "", match.group(2))


def _record_text(value: Any, what: str) -> Any:
    return unicode_text(value, what) if isinstance(value, str) else value


def archive_line(record: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object written for one stream record."""
    change = record["dynamodb"]
    table, _stream = table_and_stream(record)
    identity = record.get("userIdentity")
    if identity:
        unicode_text(json.dumps(identity, ensure_ascii=False), "userIdentity")
    return {
        "eventID": _record_text(record["eventID"], "eventID"),
        "eventName": _record_text(record["eventName"], "eventName"),
        "sequenceNumber": change["SequenceNumber"],
        "approximateCreationDateTime": _created_at(record).isoformat(),
        "table": table,
        "keys": dynamodb_json_text(change.get("Keys", {})),
        "newImage": dynamodb_json_text(change.get("NewImage")),
        "oldImage": dynamodb_json_text(change.get("OldImage")),
        # TTL deletions: {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
        "userIdentity": json.dumps(identity, separators=(",", ":"), sort_keys=True) if identity else None,
    }


@dataclass
class Group:
    """Consecutive records of one table and hour: one S3 object.

    :param table: the source table's name.
    :param stream: the stream label (from the stream ARN, alphanumerics only).
    :param hour: the start of the UTC hour the records were created in.
    :param records: the stream records, in stream order.
        Default: an empty list.
    :param lines: each record's JSON line, converted when the record was added.
        Default: an empty list.
    """

    table: str
    stream: str
    hour: datetime
    records: list[Mapping[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def first_sequence(self) -> str:
        """Sequence number of the group's first record (what a failure reports)."""
        return self.records[0]["dynamodb"]["SequenceNumber"]

    def key(self, prefix: str) -> str:
        """The object key; the same records always give the same key."""
        last = self.records[-1]["dynamodb"]["SequenceNumber"]
        return (
            f"{prefix}table={self.table}/dt={self.hour:%Y-%m-%d}/hour={self.hour:%H}/"
            f"{self.stream}-{self.first_sequence}-{last}.jsonl.gz"
        )

    def body(self) -> bytes:
        """Gzip JSON Lines; mtime 0 keeps the bytes identical when a batch is retried.

        Level 6 (zlib's default) compresses telemetry five times faster than level 9 for objects about 8% larger.
        """
        text = "".join(line + "\n" for line in self.lines)
        return gzip.compress(text.encode(), compresslevel=6, mtime=0)


def group_records(records: Iterable[Mapping[str, Any]]) -> list[Group]:
    """Split a batch into runs of consecutive records with the same table and hour, in stream order.

    Raises ``ValueError`` (or ``KeyError``...) at the first record that cannot be archived.
    """
    groups: list[Group] = []
    for record in records:
        _add(groups, record)
    return groups


def readable_groups(records: list[Mapping[str, Any]]) -> tuple[list[Group], tuple[int, Exception] | None]:
    """The groups of every record before the first unreadable one, and (its index, the error) if there is one."""
    groups: list[Group] = []
    for index, record in enumerate(records):
        try:
            _add(groups, record)
        except _READ_ERRORS as error:
            return groups, (index, error)
    return groups, None


def _add(groups: list[Group], record: Mapping[str, Any]) -> None:
    if not isinstance(record, Mapping):
        raise ValidationError(f"batch entry {_short(record)} is not a stream record (a JSON object)")
    if sequence_number(record) is None:
        raise ValidationError(f"record {record.get('eventID')!r} has no sequence number")
    try:
        table, stream = table_and_stream(record)
        hour = _created_at(record).replace(minute=0, second=0, microsecond=0)
        line = json.dumps(archive_line(record), separators=(",", ":"))
    except _READ_ERRORS as error:
        # Name the record, so the log line that reports it leads to it.
        raise ValidationError(
            f"record {record.get('eventID')!r} (sequence number {sequence_number(record)}): "
            f"{type(error).__name__}: {error}"
        ) from error
    current = groups[-1] if groups else None
    if current is None or (current.table, current.stream, current.hour) != (table, stream, hour):
        current = Group(table, stream, hour)
        groups.append(current)
    current.records.append(record)
    current.lines.append(line)
