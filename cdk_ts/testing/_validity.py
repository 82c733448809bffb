"""A request's own validity, which DynamoDB judges before the table it names and before its throughput.

DynamoDB checks a request in this order: its own validity (shape, types, sizes), then the resource and its state,
then throughput. An oversized item is refused whatever the table's capacity, and a malformed request is never
answered with a throttle. The peer suite recorded against DynamoDB shows the order: dynalite's
``test/batchWriteItem.js`` and ``test/putItem.js`` expect "Item size has exceeded the maximum allowed size" for an
item one byte over 400 KB on a table that does not exist, and ``ResourceNotFoundException`` for one byte less.

The layer applies one rule of its own here, the item size, because the engines size items differently from
DynamoDB. Every other validity rule is the engine's: both engines answer malformed requests with DynamoDB's codes
(dynalite's messages are checked against DynamoDB by the suite above). For those, the layer only makes sure that
no rule of its own (a CREATING table, a throttle) answers first: :class:`EngineDecides` sends the request to the
engine untouched.
"""

from __future__ import annotations

import base64
import binascii
import re
from decimal import Decimal, InvalidOperation

from cdk_ts.testing._rules import item_size, validation_error
from cdk_ts_runtime._errors import CdkTsError

# "The maximum item size in DynamoDB is 400 KB, which includes both attribute name binary length (UTF-8 length) and
# attribute value lengths" (developer guide, ServiceQuotas.html, "Items"). One byte more is refused: dynalite's
# peer suite (MAX_SIZE = 409600, "item is too big" at 409,601 bytes, accepted at 409,600).
MAX_ITEM_BYTES = 400 * 1024
ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"
# "The maximum length of any partition key value is 2048 bytes"; sort key 1024 bytes (ServiceQuotas.html,
# "Attributes"). The engines refuse longer ones with DynamoDB's messages; the layer only steps aside.
MAX_HASH_KEY_BYTES = 2048
MAX_RANGE_KEY_BYTES = 1024
# "Up to 32 levels deep" for nested attributes (ServiceQuotas.html, "Nested attribute depth").
MAX_DEPTH = 32
# BatchWriteItem: up to 25 put or delete requests; BatchGetItem: up to 100 items (API_BatchWriteItem,
# API_BatchGetItem). Larger batches are the engine's to refuse.
MAX_BATCH_WRITES = 25
MAX_BATCH_READS = 100

_SCALARS = {"S": str, "N": str, "B": str, "BOOL": bool, "NULL": bool}
_SETS = {"SS": "S", "NS": "N", "BS": "B"}


# Table names: 3-255 characters of [a-zA-Z0-9_.-], or (on the item operations) the table's ARN, up to 1,024
# characters (API_PutItem, "TableName"). Anything else is the engine's ValidationException.
_TABLE_NAME = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_NAMED_TABLE = {"CreateTable", "UpdateTable", "DeleteTable", "DescribeTable", "UpdateTimeToLive", "DescribeTimeToLive",
                "UpdateContinuousBackups", "UpdateContributorInsights", "DescribeContributorInsights", "PutItem",
                "UpdateItem", "DeleteItem", "GetItem", "Query", "Scan"}
_NAMED_RESOURCE = {"TagResource", "UntagResource", "ListTagsOfResource"}


class EngineDecides(CdkTsError):
    """The request breaks a validity rule the layer leaves to the engine: forward it untouched, answer nothing."""


def _number_ok(text: str) -> bool:
    # DynamoDB numbers: up to 38 digits of precision, magnitudes 1E-130 to 9.9999999999999999999999999999999999999E+125
    # (developer guide, HowItWorks.NamingRulesDataTypes.html, "Number"); outside that the engine answers.
    try:
        number = Decimal(text)
    except (InvalidOperation, TypeError, ValueError):
        return False
    if not number.is_finite():
        return False
    if number.is_zero():
        return True
    digits = number.normalize().as_tuple().digits
    magnitude = number.copy_abs().adjusted()
    return len(digits) <= 38 and -130 <= magnitude <= 125


def _binary_ok(text: object) -> bool:
    if not isinstance(text, str):
        return False
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def attribute_value_ok(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is one well-formed AttributeValue (exactly one type, a value of that type)."""
    if not isinstance(value, dict) or len(value) != 1 or depth > MAX_DEPTH:
        return False
    ((kind, v),) = value.items()
    if kind in _SCALARS:
        if not isinstance(v, _SCALARS[kind]):
            return False
        if kind == "N":
            return _number_ok(str(v))
        if kind == "B":
            return _binary_ok(v)
        return kind != "NULL" or v is True
    if kind in _SETS:
        if not isinstance(v, list) or not v or len(set(map(str, v))) != len(v):
            return False
        return all(attribute_value_ok({_SETS[kind]: member}, depth) for member in v)
    if kind == "L":
        return isinstance(v, list) and all(attribute_value_ok(e, depth + 1) for e in v)
    if kind == "M":
        return attribute_map_ok(v, depth + 1)
    return False


def attribute_map_ok(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is a map of attribute names to well-formed AttributeValues."""
    return isinstance(value, dict) and all(
        isinstance(name, str) and attribute_value_ok(v, depth) for name, v in value.items())


def _string_map_ok(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


# The members the layer reads, by operation: (member, check). A member present with the wrong form is the engine's.
_COMMON = (
    ("TableName", lambda v: isinstance(v, str) and v != ""),
    ("ExpressionAttributeNames", _string_map_ok),
    ("ExpressionAttributeValues", lambda v: attribute_map_ok(v)),
    ("ConsistentRead", lambda v: isinstance(v, bool)),
    ("ConditionExpression", lambda v: isinstance(v, str)),
)
_MEMBERS = {
    "PutItem": (("Item", attribute_map_ok),),
    "UpdateItem": (("Key", attribute_map_ok), ("UpdateExpression", lambda v: isinstance(v, str)),
                   ("AttributeUpdates", lambda v: isinstance(v, dict) and all(
                       isinstance(u, dict) and ("Value" not in u or attribute_value_ok(u["Value"]))
                       for u in v.values()))),
    "DeleteItem": (("Key", attribute_map_ok),),
    "GetItem": (("Key", attribute_map_ok),),
    "Query": (("KeyConditionExpression", lambda v: isinstance(v, str)), ("IndexName", lambda v: isinstance(v, str)),
              ("KeyConditions", lambda v: isinstance(v, dict) and all(
                  isinstance(c, dict) and isinstance(c.get("AttributeValueList", []), list)
                  and all(attribute_value_ok(x) for x in c.get("AttributeValueList", [])) for c in v.values())),
              ("ExclusiveStartKey", attribute_map_ok)),
}
_REQUIRED = {"PutItem": ("TableName", "Item"), "UpdateItem": ("TableName", "Key"), "DeleteItem": ("TableName", "Key"),
             "GetItem": ("TableName", "Key"), "Query": ("TableName",)}


def _batch_writes(request: dict) -> list[dict]:
    """The entries of a BatchWriteItem, each with one PutRequest or DeleteRequest (else the engine's to refuse)."""
    tables = request.get("RequestItems")
    if not isinstance(tables, dict) or not tables:
        raise EngineDecides
    entries = []
    for name, writes in tables.items():
        if not isinstance(name, str) or not isinstance(writes, list) or not writes:
            raise EngineDecides
        for write in writes:
            if not isinstance(write, dict) or len(write) != 1:
                raise EngineDecides
            put, delete = write.get("PutRequest"), write.get("DeleteRequest")
            if put is not None and not (isinstance(put, dict) and attribute_map_ok(put.get("Item"))):
                raise EngineDecides
            if delete is not None and not (isinstance(delete, dict) and attribute_map_ok(delete.get("Key"))):
                raise EngineDecides
            if put is None and delete is None:
                raise EngineDecides
            entries.append(write)
    if len(entries) > MAX_BATCH_WRITES:
        raise EngineDecides
    return entries


def _batch_reads(request: dict) -> None:
    tables = request.get("RequestItems")
    if not isinstance(tables, dict) or not tables:
        raise EngineDecides
    count = 0
    for name, spec in tables.items():
        keys = spec.get("Keys") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not isinstance(keys, list) or not keys:
            raise EngineDecides
        if not all(attribute_map_ok(key) for key in keys) or not all(
                check(spec.get(member)) for member, check in _COMMON[1:4] if member in spec):
            raise EngineDecides
        count += len(keys)
    if count > MAX_BATCH_READS:
        raise EngineDecides


def table_name_ok(name: object) -> bool:
    """Whether ``name`` is a table name or a table ARN DynamoDB accepts in ``TableName``."""
    if not isinstance(name, str):
        return False
    return len(name) <= 1024 if name.startswith("arn:") else bool(_TABLE_NAME.fullmatch(name))


def check_names(operation: str, request: dict) -> None:
    """Step aside for a table name or resource ARN the engine must refuse (missing, of the wrong type or form).

    The layer keeps state by table name; a name it cannot read is never its to judge, so no rule of the layer (a
    table not found, a window, a throttle) answers before the engine's ValidationException or SerializationException.
    """
    if operation in _NAMED_TABLE and not table_name_ok(request.get("TableName")):
        raise EngineDecides
    if operation in _NAMED_RESOURCE and not isinstance(request.get("ResourceArn"), str):
        raise EngineDecides


def check_request(operation: str, request: object, *, item_size_rule: bool = True) -> None:
    """Judge a data-plane request's own validity before anything else looks at it.

    Raises ``RuleError`` (ValidationException) for an item over 400 KB (unless ``item_size_rule`` is off: rule
    ``item_size``), and :class:`EngineDecides` for any other malformed request the layer has a stake in (wrong member
    types, malformed AttributeValues, batches past their counts), so the engine answers it and no rule of the layer
    does. Operations the layer applies no data-plane rule to are left alone.
    """
    if not isinstance(request, dict):
        raise EngineDecides
    if operation == "BatchWriteItem":
        for write in _batch_writes(request):
            item = (write.get("PutRequest") or {}).get("Item")
            if item_size_rule and item is not None and item_size(item) > MAX_ITEM_BYTES:
                raise validation_error(ITEM_TOO_LARGE)
        return
    if operation == "BatchGetItem":
        _batch_reads(request)
        return
    members = _MEMBERS.get(operation)
    if members is None:
        return
    if any(member not in request for member in _REQUIRED[operation]):
        raise EngineDecides
    for member, ok in (*_COMMON, *members):
        if member in request and not ok(request[member]):
            raise EngineDecides
    if item_size_rule and operation == "PutItem" and item_size(request["Item"]) > MAX_ITEM_BYTES:
        raise validation_error(ITEM_TOO_LARGE)


def check_key(key: dict, hash_key: str, range_key: str | None, key_types: dict[str, str]) -> None:
    """Step aside (:class:`EngineDecides`) for a primary key the table's schema refuses.

    A key attribute missing, of another type than its definition, an empty string or binary, longer than DynamoDB
    allows, or an attribute that is not part of the key (GetItem/DeleteItem/UpdateItem keys): the engine answers each
    with its ValidationException, which DynamoDB gives before any throughput is considered.
    """
    names = [k for k in (hash_key, range_key) if k]
    for name in names:
        value = key.get(name)
        if not isinstance(value, dict) or len(value) != 1:
            raise EngineDecides
        ((kind, v),) = value.items()
        if key_types.get(name, kind) != kind or kind not in ("S", "N", "B") or v in ("", None):
            raise EngineDecides
        limit = MAX_HASH_KEY_BYTES if name == hash_key else MAX_RANGE_KEY_BYTES
        if item_size({"": value}) > limit:
            raise EngineDecides


def check_exact_key(key: dict, hash_key: str, range_key: str | None, key_types: dict[str, str]) -> None:
    """:func:`check_key` for a ``Key`` member, which must hold the key attributes and nothing else."""
    if set(key) != {k for k in (hash_key, range_key) if k}:
        raise EngineDecides
    check_key(key, hash_key, range_key, key_types)
