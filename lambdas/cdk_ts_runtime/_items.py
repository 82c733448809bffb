"""Plain Python values to and from DynamoDB AttributeValues, and a Query that follows every page."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from cdk_ts_runtime._errors import CdkTsError, ValidationError
from cdk_ts_runtime._inputs import whole


@functools.cache
def _codecs() -> tuple[Any, Any]:
    # On first use: importing boto3 (0.4 s) would slow every synth, which imports this module
    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

    return TypeSerializer(), TypeDeserializer()


def to_attribute_values(item: Mapping[str, Any]) -> dict[str, dict]:
    """Plain Python values to AttributeValues; floats become exact Decimals of their shortest repr."""
    serializer = _codecs()[0]
    return {name: serializer.serialize(_exact(value)) for name, value in item.items()}


def from_attribute_values(item: Mapping[str, dict]) -> dict[str, Any]:
    """AttributeValues to plain Python values (numbers as Decimal)."""
    deserializer = _codecs()[1]
    return {name: deserializer.deserialize(value) for name, value in item.items()}


def _exact(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"{value!r} cannot be stored: DynamoDB numbers are finite")
        return Decimal(repr(value))
    if isinstance(value, Mapping):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exact(v) for v in value]
    return value


#: Most pages one ``query_all`` follows: 10,000 pages of up to 1 MB is 10 GB from one key condition, more
#: than any caller here reads into memory; a longer run is a runaway loop, not data.
MAX_PAGES = 10_000


class PageLimitError(CdkTsError, RuntimeError):
    """A Query ran past its page limit or was handed the same ``LastEvaluatedKey`` twice; names table and limit."""


def query_all(dynamodb, request: dict[str, Any], *, max_pages: int = MAX_PAGES) -> list[dict[str, Any]]:
    """Run one Query request page by page until the last page; items as plain values, in order.

    :param dynamodb: the DynamoDB client.
    :param request: the Query parameters.
    :param max_pages: the most pages followed.
        Default: :data:`MAX_PAGES`.
    :raises PageLimitError: after ``max_pages`` pages, or when a page repeats the previous page's
        ``LastEvaluatedKey`` (the loop would never end).
    """
    whole("max_pages", max_pages)
    request = dict(request)
    items: list[dict[str, Any]] = []
    for _page in range(max_pages):
        page = dynamodb.query(**request)
        items.extend(from_attribute_values(i) for i in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        if page["LastEvaluatedKey"] == request.get("ExclusiveStartKey"):
            raise PageLimitError(
                f"Query on {request.get('TableName')} returned the same LastEvaluatedKey twice "
                f"({page['LastEvaluatedKey']}); stopped after {len(items)} items"
            )
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    raise PageLimitError(
        f"Query on {request.get('TableName')} still had pages after max_pages={max_pages} ({len(items)} items); "
        "narrow the key condition or raise max_pages"
    )
