"""Proof that a period table belongs to this rotation: its name parses AND it carries the rotation's tags.

A look-alike (a table someone named ``readings_2026-01-01`` by hand, or another tool's) has the
name but not the tags, and is never resized or deleted.
"""

from __future__ import annotations

from typing import Any

from cdk_ts_runtime._table_layout import TableLayout

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


class RunOwnership:
    """Ownership as one run sees it: the tables it created itself are its own without asking for their tags.

    Tags are eventually consistent: "If you issue a ListTagsOfResource request immediately after a TagResource
    request, DynamoDB might return your previous tag set, if there was one, or an empty tag set"
    (API_TagResource), and CreateTable's ``Tags`` are no different. A table this run just created would
    otherwise look like a foreign look-alike until its tags show. Every other table must still carry the
    rotation's tags (:func:`is_owned`): a look-alike is never resized or deleted.

    :param dynamodb: the boto3 DynamoDB client.
    :param layout: the rotation's prefix and period.
    """

    def __init__(self, dynamodb, layout: TableLayout) -> None:
        self._dynamodb = dynamodb
        self._layout = layout
        self._created: dict[str, str | None] = {}  # ARN -> TableId, as CreateTable answered

    def created(self, description: dict[str, Any]) -> None:
        """Remember the table CreateTable answered with (its ``TableDescription``) as this run's own."""
        self._created[description["TableArn"]] = description.get("TableId")

    def __call__(self, description: dict[str, Any]) -> bool:
        """True when the described table is one this run created, or carries the rotation's tags."""
        arn = description.get("TableArn")
        if arn in self._created:
            created_id, table_id = self._created[arn], description.get("TableId")
            # Same name, same ARN: the TableId tells a table someone made after this run's was deleted.
            if created_id is None or table_id is None or created_id == table_id:
                return True
        return is_owned(self._dynamodb, description, self._layout)
