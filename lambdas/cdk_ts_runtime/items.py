"""Plain Python values to and from DynamoDB AttributeValues, and a Query that follows every page."""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_attribute_values(item: Mapping[str, Any]) -> dict[str, dict]:
    """Plain Python values to AttributeValues; floats become exact Decimals of their shortest repr."""
    return {name: _serializer.serialize(_exact(value)) for name, value in item.items()}


def from_attribute_values(item: Mapping[str, dict]) -> dict[str, Any]:
    """AttributeValues to plain Python values (numbers as Decimal)."""
    return {name: _deserializer.deserialize(value) for name, value in item.items()}


def _exact(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be stored: DynamoDB numbers are finite")
        return Decimal(repr(value))
    if isinstance(value, Mapping):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exact(v) for v in value]
    return value


def query_all(dynamodb, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Run one Query request page by page until the last page; items as plain values, in order."""
    request = dict(request)
    items: list[dict[str, Any]] = []
    while True:
        page = dynamodb.query(**request)
        items.extend(from_attribute_values(i) for i in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
