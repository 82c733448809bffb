"""A dry run (``TableRotator.run(..., dry_run=True)``) makes no mutating call and reports what a real run then does."""

from __future__ import annotations

import boto3
import pytest

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.config import CapacityTier, RotationConfig
from cdk_ts_runtime._rotation.rotator import TableRotator
from tests.support.emf import EmfLines
from tests.support.requests import RequestCounter
from tests.support.rotation import PREFIX, OnTimeRotator, capacity, create_period_table, table_names
from tests.support.times import utc

READS = ("List", "Describe", "Get")


class UntouchableLock:
    """A lock a dry run must never take (nor release)."""

    def acquire(self, *_args):
        raise AssertionError("a dry run took the rotation lock")

    def release(self):
        raise AssertionError("a dry run released the rotation lock")


class DryRunnable(OnTimeRotator):
    def run(self, operation, when, *, dry_run=False):
        self.clock = lambda: when
        return super(OnTimeRotator, self).run(operation, when, dry_run=dry_run)


@pytest.fixture
def estate(dynamodb):
    """Yesterday's and an older table at hot capacity, an expired one, an expired look-alike; today missing."""
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="archive")
    for day in ("2026-03-01", "2026-02-28", "2026-02-01"):
        create_period_table(dynamodb, f"{PREFIX}_{day}")
    create_period_table(dynamodb, f"{PREFIX}_2026-02-27", owned=False)
    dynamodb.update_continuous_backups(
        TableName=f"{PREFIX}_2026-02-01", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
    )
    return dynamodb


def rotator(dynamodb, lock=None, metrics=None):
    config = RotationConfig(
        previous=CapacityTier.provisioned(100, 1), older=CapacityTier.provisioned(1, 1),
        retain_periods=3, archive_bucket="archive", ttl_attribute="expires",
    )
    return DryRunnable(
        TableLayout(PREFIX), config, dynamodb=dynamodb,
        autoscaling=boto3.client("application-autoscaling", region_name="us-east-1"),
        cloudwatch=boto3.client("cloudwatch", region_name="us-east-1"), sleep=lambda _s: None, lock=lock,
        metrics=metrics,
    )


def counted(rotation):
    return [RequestCounter(c) for c in (rotation.dynamodb, rotation.autoscaling, rotation.cloudwatch)]


def calls(counters):
    return {name for counter in counters for name in counter.calls}


def actions(report):
    return sorted((a["action"], a["table"]) for a in report["actions"])


def test_a_dry_reconcile_changes_nothing_and_lists_what_the_real_run_then_does(estate):
    dry_lines = EmfLines()
    dry_rotator = rotator(estate, lock=UntouchableLock(), metrics=dry_lines.writer())
    counters = counted(dry_rotator)
    before = {name: capacity(estate, name) for name in table_names(estate)}

    dry = dry_rotator.run("reconcile", utc(2026, 3, 2, 23, 50), dry_run=True)

    assert {name for name in calls(counters) if not name.startswith(READS)} == set()
    assert dry_lines.lines == []  # no metric either
    assert {name: capacity(estate, name) for name in table_names(estate)} == before
    assert dry["dry_run"] is True and all(a["dry_run"] is True for a in dry["actions"])
    assert ("create", f"{PREFIX}_2026-03-02") in actions(dry) and ("create", f"{PREFIX}_2026-03-03") in actions(dry)
    updates = {a["table"]: a for a in dry["actions"] if a["action"] == "update"}
    assert sorted(updates) == [f"{PREFIX}_2026-02-28", f"{PREFIX}_2026-03-01"]
    assert updates[f"{PREFIX}_2026-03-01"]["changes"] == ["ProvisionedThroughput"]
    assert ("export", f"{PREFIX}_2026-02-01") in actions(dry)
    assert ("not_owned", f"{PREFIX}_2026-02-27") in actions(dry)

    real_lines = EmfLines()
    real_rotator = rotator(estate, metrics=real_lines.writer())
    real_counters = counted(real_rotator)
    real = real_rotator.run("reconcile", utc(2026, 3, 2, 23, 50))

    assert actions(real) == actions(dry)
    assert {"CreateTable", "UpdateTable", "UpdateTimeToLive", "ExportTableToPointInTime"} <= calls(real_counters)
    assert "PutMetricData" not in calls(real_counters)  # metrics are EMF lines, not CloudWatch calls
    assert real_lines.values("ForeignLookalikeTables", TablePrefix=PREFIX) == [1]
    assert capacity(estate, f"{PREFIX}_2026-03-01") == (100, 1)


def test_a_dry_run_reports_a_delete_and_deletes_nothing(estate):
    config = RotationConfig(retain_periods=3, metric_namespace=None)
    dry_rotator = DryRunnable(TableLayout(PREFIX), config, dynamodb=estate, sleep=lambda _s: None)
    counters = [RequestCounter(estate)]

    dry = dry_rotator.run("resize_old", utc(2026, 3, 2, 0, 15), dry_run=True)

    assert {name for name in calls(counters) if not name.startswith(READS)} == set()
    assert f"{PREFIX}_2026-02-01" in table_names(estate)
    assert ("delete", f"{PREFIX}_2026-02-01") in actions(dry)
    real = DryRunnable(TableLayout(PREFIX), config, dynamodb=estate, sleep=lambda _s: None).run(
        "resize_old", utc(2026, 3, 2, 0, 15)
    )
    assert actions(real) == actions(dry)
    assert f"{PREFIX}_2026-02-01" not in table_names(estate)


def test_a_dry_run_defers_an_updating_table_as_a_real_run_does(estate):
    def updating(http_response, parsed, model, **_kwargs):
        if parsed.get("Table", {}).get("TableName") == f"{PREFIX}_2026-03-01":
            parsed["Table"]["TableStatus"] = "UPDATING"

    estate.meta.events.register("after-call.dynamodb.DescribeTable", updating)
    dry = rotator(estate).run("resize_old", utc(2026, 3, 2, 0, 15), dry_run=True)
    assert [a["action"] for a in dry["actions"] if a["table"] == f"{PREFIX}_2026-03-01"] == ["defer"]


def test_a_dry_run_inside_a_real_run_of_the_same_rotator_changes_neither_the_rotator_nor_that_run(estate):
    """Run state lives in the run: a dry run started while a real one acts leaves the real one real."""
    when = utc(2026, 3, 2, 23, 50)
    shared = TableRotator(
        TableLayout(PREFIX), RotationConfig(previous=CapacityTier.provisioned(100, 1), retain_periods=3,
                                            archive_bucket="archive"),
        dynamodb=estate, sleep=lambda _s: None, clock=lambda: when,
    )
    before = dict(vars(shared))
    dry_reports = []

    def dry_run_now(**_kwargs):
        if not dry_reports:
            dry_reports.append(shared.run("reconcile", when, dry_run=True))

    estate.meta.events.register("after-call.dynamodb.CreateTable", dry_run_now)  # the real run has begun
    real = shared.run("reconcile", when)

    assert vars(shared) == before
    assert "dry_run" not in real and not any(a.get("dry_run") for a in real["actions"])
    [dry] = dry_reports
    assert dry["dry_run"] is True
    # the real run went on making its changes after the dry run: resize, export, the second table
    assert capacity(estate, f"{PREFIX}_2026-03-01") == (100, 1)
    assert {f"{PREFIX}_2026-03-02", f"{PREFIX}_2026-03-03"} <= set(table_names(estate))
    assert ("export", f"{PREFIX}_2026-02-01") in actions(real)


def test_a_dry_run_names_the_export_a_table_without_pitr_would_fail(estate):
    estate.update_continuous_backups(
        TableName=f"{PREFIX}_2026-02-01", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": False}
    )
    counters = [RequestCounter(estate)]

    dry = rotator(estate).run("resize_old", utc(2026, 3, 2, 0, 15), dry_run=True)

    assert {name for name in calls(counters) if not name.startswith(READS)} == set()
    [failed] = [a for a in dry["actions"] if a["table"] == f"{PREFIX}_2026-02-01"]
    assert failed["action"] == "export_failed"
    assert failed["reason"].startswith("PointInTimeRecoveryUnavailableException: ")
    real = rotator(estate).run("resize_old", utc(2026, 3, 2, 0, 15))
    [real_failed] = [a for a in real["actions"] if a["table"] == f"{PREFIX}_2026-02-01"]
    assert (real_failed["action"], real_failed["reason"].split(":")[0]) == (
        "export_failed", "PointInTimeRecoveryUnavailableException"
    )
    assert actions(real) == actions(dry)
    assert f"{PREFIX}_2026-02-01" in table_names(estate)  # kept: never deleted unexported
