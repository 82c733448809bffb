"""Proof that a period table belongs to this rotation: its name parses AND it carries the rotation's tags.

A look-alike (a table someone named ``readings_2026-01-01`` by hand, or another tool's) has the
name but not the tags, and is never resized or deleted.
"""

from __future__ import annotations

from typing import Any

from cdk_ts_runtime.table_layout import TableLayout

TAG_PREFIX = "cdk-ts:prefix"
TAG_PERIOD = "cdk-ts:period"


def ownership_tags(layout: TableLayout) -> dict[str, str]:
    """The tags the rotation puts on every table it creates."""
    return {TAG_PREFIX: layout.table_prefix, TAG_PERIOD: layout.period.value}


def table_tags(dynamodb, table_arn: str) -> dict[str, str]:
    """Every tag of a table (all pages of ListTagsOfResource)."""
    tags: dict[str, str] = {}
    kwargs: dict[str, Any] = {"ResourceArn": table_arn}
    while True:
        page = dynamodb.list_tags_of_resource(**kwargs)
        tags.update({t["Key"]: t["Value"] for t in page.get("Tags", [])})
        if not page.get("NextToken"):
            return tags
        kwargs["NextToken"] = page["NextToken"]


def is_owned(dynamodb, description: dict[str, Any], layout: TableLayout) -> bool:
    """True when the described table carries this rotation's prefix and period tags."""
    arn = description.get("TableArn")
    if not arn:
        return False
    tags = table_tags(dynamodb, arn)
    return all(tags.get(key) == value for key, value in ownership_tags(layout).items())
