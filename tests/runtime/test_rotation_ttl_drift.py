"""A period table whose TTL is on for another attribute than the configured one is reported, never ignored.

DynamoDB changes a table's TTL attribute only by disabling TTL and enabling it again (at most once an hour),
so the rotation cannot fix the drift: it must say so, in its report, its ``TtlDriftTables`` metric and the
console's ``status``.
"""

from __future__ import annotations

import boto3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts.console import dry_run_exit_code, status, status_exit_code
from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.metrics import RotationMetric
from cdk_ts_runtime._rotation.rotator import TableRotator
from tests.support.emf import EmfLines
from tests.support.examples import examples
from tests.support.rotation import PREFIX, OnTimeRotator, create_period_table
from tests.support.times import utc

#: DynamoDB attribute names (1-255 characters; short ones are enough to tell two apart).
_ATTRIBUTES = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8)
CURRENT = f"{PREFIX}_2026-03-02"
WHEN = utc(2026, 3, 2, 0, 20)


def rotator(dynamodb, lines: EmfLines, ttl_attribute: str) -> OnTimeRotator:
    return OnTimeRotator(
        TableLayout(PREFIX), RotationConfig(ttl_attribute=ttl_attribute), dynamodb=dynamodb,
        autoscaling=boto3.client("application-autoscaling", region_name="us-east-1"), sleep=lambda _s: None,
        metrics=lines.writer(),
    )


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(configured=_ATTRIBUTES, on_table=_ATTRIBUTES)
def test_a_current_table_with_another_ttl_attribute_is_reported_by_run_metric_and_status(
    dynamodb, configured, on_table
):
    create_period_table(dynamodb, CURRENT)
    try:
        dynamodb.update_time_to_live(
            TableName=CURRENT, TimeToLiveSpecification={"Enabled": True, "AttributeName": on_table}
        )
        lines = EmfLines()
        tables = rotator(dynamodb, lines, configured)

        report = tables.run("reconcile", WHEN)
        state = status(tables, WHEN)

        drifted = configured != on_table
        drift = [a for a in report["actions"] if a["action"] == "ttl_drift"]
        assert [(a["table"], a["attribute"], a["wanted"]) for a in drift] == (
            [(CURRENT, on_table, configured)] if drifted else []
        )
        assert lines.values(RotationMetric.TTL_DRIFT_TABLES) == [1 if drifted else 0]
        (current,) = [t for t in state["tables"] if t["name"] == CURRENT]
        assert ("ttl_drift" in current) is drifted
        assert [text for text in state["attention"] if "TTL" in text] == (
            [f"{CURRENT}: {current['ttl_drift']}"] if drifted else []
        )
        if drifted:
            assert status_exit_code(state) == 1
        # the table's TTL is never turned off or changed behind the operator's back
        ttl = dynamodb.describe_time_to_live(TableName=CURRENT)["TimeToLiveDescription"]
        assert ttl["AttributeName"] == on_table
    finally:
        dynamodb.delete_table(TableName=CURRENT)


def test_a_dry_run_that_finds_ttl_drift_exits_with_attention(dynamodb):
    create_period_table(dynamodb, CURRENT)
    dynamodb.update_time_to_live(TableName=CURRENT, TimeToLiveSpecification={"Enabled": True, "AttributeName": "old"})
    tables = rotator(dynamodb, EmfLines(), "expires_at")

    tables.clock = lambda: WHEN
    answer = TableRotator.run(tables, "reconcile", WHEN, dry_run=True)

    assert "ttl_drift" in [a["action"] for a in answer["actions"] if a["table"] == CURRENT]
    assert dry_run_exit_code(answer) == 1
