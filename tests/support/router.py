"""PeriodRouter's test tables and items."""

from __future__ import annotations

from datetime import timedelta

from tests.support.times import ms, utc
from tests.support.waiting import wait_until_active


def create_tables(client, layout, names):
    """On-demand period tables ``names`` with ``layout``'s keys, ACTIVE when this returns."""
    key_schema, definitions = layout.key_schema()
    for name in names:
        client.create_table(
            TableName=name, KeySchema=key_schema, AttributeDefinitions=definitions, BillingMode="PAY_PER_REQUEST"
        )
    wait_until_active(client, *names)


def hot_items(count):
    """``count`` items of one partition key (7), a second apart on 2026-03-02: one hot key's day."""
    return [{"pk": 7, "sk": ms(utc(2026, 3, 2) + timedelta(seconds=i)), "i": i} for i in range(count)]
