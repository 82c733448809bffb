"""The rotation lifecycle against real local servers (moto_server and dynalite), not only in-process moto."""

from __future__ import annotations

import time

import pytest

from cdk_ts_runtime.rotation import TableRotator
from cdk_ts_runtime.rotation_config import CapacityTier, RotationConfig
from cdk_ts_runtime.table_layout import TableLayout
from tests.support.requests import RequestCounter
from tests.support.times import utc
from tests.support.waiting import wait_until, wait_until_active


def wait_until_gone(client, prefix, name, timeout=10.0):
    """Deletion is asynchronous (DELETING first) in DynamoDB and in dynalite alike."""
    wait_until(lambda: True if name not in ours(client, prefix) else None, what=f"{name} gone", timeout=timeout)


def throughput(client, name):
    table = client.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    return table["ReadCapacityUnits"], table["WriteCapacityUnits"]


def billing_mode(client, name):
    table = client.describe_table(TableName=name)["Table"]
    return table.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")


def ours(client, prefix):
    names, kwargs = [], {}
    while True:
        page = client.list_tables(**kwargs)
        names += [n for n in page["TableNames"] if n.startswith(f"{prefix}_")]
        if not page.get("LastEvaluatedTableName"):
            return sorted(names)
        kwargs["ExclusiveStartTableName"] = page["LastEvaluatedTableName"]


@pytest.mark.slow  # real table-status waits on dynalite: 6-7 s
def test_three_days_of_schedule_converge_and_a_second_reconcile_changes_nothing(server_dynamodb, unique_name):
    three_days_then_nothing(server_dynamodb, unique_name)


@pytest.mark.slow  # one-second CREATING/UPDATING/DELETING windows on the real clock: 7-8 s
def test_the_same_three_days_through_dynamodbs_rules_on_the_real_clock(dynalite, unique_name):
    # UPDATING/CREATING/DELETING windows of a second, as DynamoDB reports them, and its UpdateTable rules
    from cdk_ts.testing import start_rules_proxy

    # Three days' runs seconds apart: tags show at once (on DynamoDB runs are half an hour apart, far longer than
    # tags lag; the lag is tests/faults/test_rotation_rules.py's).
    proxy = start_rules_proxy(dynalite, update_seconds=1, create_seconds=1, delete_seconds=1, tag_lag_seconds=0)
    try:
        three_days_then_nothing(proxy.client(), unique_name)
    finally:
        proxy.stop()


def three_days_then_nothing(server_dynamodb, unique_name):
    # dynalite has no PITR API, so this lifecycle runs without it (PITR is covered against moto).
    # Neither server reports TableClass back (so a Standard-IA tier would look unconverged every run, and
    # dynalite refuses an UpdateTable carrying only TableClass): closed periods go on-demand in Standard
    # here; the class is covered against moto with the requests asserted (test_rotation_capacity_tiers.py).
    rotator = TableRotator(
        TableLayout(unique_name),
        RotationConfig(
            retain_periods=2, point_in_time_recovery=False, metric_namespace=None,
            previous=CapacityTier.pay_per_request(), older=CapacityTier.pay_per_request(),
        ),
        dynamodb=server_dynamodb,
        sleep=time.sleep,
    )
    clock = rotator.run
    rotator.run = lambda operation, when: (setattr(rotator, "clock", lambda: when), clock(operation, when))[1]
    day = [f"{unique_name}_2026-03-0{d}" for d in range(1, 5)]

    rotator.run("reconcile", utc(2026, 3, 1, 23, 50))
    assert ours(server_dynamodb, unique_name) == day[0:2]

    rotator.run("create_new", utc(2026, 3, 2, 23, 45))
    wait_until_active(server_dynamodb, *day[0:3])
    report = rotator.run("resize_old", utc(2026, 3, 3, 0, 15))
    assert {"action": "delete", "table": day[0], "archived": False} in report["actions"]
    wait_until_active(server_dynamodb, *day[1:3])
    wait_until_gone(server_dynamodb, unique_name, day[0])

    # retain 2 on 3 March: 3 March (current) and 2 March (previous); 1 March expired
    assert ours(server_dynamodb, unique_name) == day[1:3]
    # the previous table is on-demand, the current one provisioned
    assert billing_mode(server_dynamodb, day[1]) == "PAY_PER_REQUEST"
    assert billing_mode(server_dynamodb, day[2]) == "PROVISIONED"
    assert throughput(server_dynamodb, day[2]) == (300, 1000)

    counter = RequestCounter(server_dynamodb)
    report = rotator.run("reconcile", utc(2026, 3, 3, 12))
    assert report["actions"] == []
    assert not {"CreateTable", "UpdateTable", "DeleteTable"} & set(counter.calls)
