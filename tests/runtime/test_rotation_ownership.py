"""RunOwnership: a run's own new tables need no tags yet; every other table still needs them."""

from __future__ import annotations

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.ownership import RunOwnership
from tests.support.rotation import PREFIX, create_period_table


def test_a_table_this_run_created_is_owned_without_tags_and_a_look_alike_is_not(dynamodb):
    layout = TableLayout(PREFIX)
    ownership = RunOwnership(dynamodb, layout)
    create_period_table(dynamodb, f"{PREFIX}_2026-03-10", owned=False)  # no rotation tags
    create_period_table(dynamodb, f"{PREFIX}_2026-03-11", owned=False)
    created = dynamodb.describe_table(TableName=f"{PREFIX}_2026-03-10")["Table"]
    look_alike = dynamodb.describe_table(TableName=f"{PREFIX}_2026-03-11")["Table"]

    ownership.created(created)

    assert ownership(created) is True
    assert ownership(look_alike) is False
    # DynamoDB reports a TableId (moto does not): the same name made again by someone else after this run's
    # table was deleted has another one, and then needs the tags like any other table
    ownership.created({**created, "TableId": "11111111-1111-1111-1111-111111111111"})
    assert ownership({**created, "TableId": "11111111-1111-1111-1111-111111111111"}) is True
    assert ownership({**created, "TableId": "22222222-2222-2222-2222-222222222222"}) is False
    assert RunOwnership(dynamodb, layout)(created) is False  # another run did not create it
