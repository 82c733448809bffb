"""``cdk_ts.console.status`` on moto in-process: export proof and why an expired table is not deleted yet."""

from __future__ import annotations

import boto3
import pytest

from cdk_ts.console import format_status, status, status_exit_code
from tests.support.rotation import PREFIX, create_period_table, make_rotator, report_export_time, wait_for_export
from tests.support.times import utc


@pytest.mark.slow  # ~6.5 s measured on a shared 2-core machine
def test_an_expired_table_shows_its_export_proof_and_why_it_is_still_there(dynamodb):
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="archive")
    for day in ("2026-03-02", "2026-03-01", "2026-02-01"):
        create_period_table(dynamodb, f"{PREFIX}_{day}")
    dynamodb.update_continuous_backups(
        TableName=f"{PREFIX}_2026-02-01", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
    )
    rotator = make_rotator(dynamodb, retain_periods=2, archive_bucket="archive", archive_prefix="exports/")
    report_export_time(dynamodb)

    before = status(rotator, utc(2026, 3, 2, 0, 20))
    (due,) = before["due_for_deletion"]
    assert due["table"] == f"{PREFIX}_2026-02-01"
    assert due["why_not_yet"].startswith("no completed export at or after the period's end")

    rotator.run("resize_old", utc(2026, 3, 2, 0, 15))  # starts the export
    arn = dynamodb.describe_table(TableName=f"{PREFIX}_2026-02-01")["Table"]["TableArn"]
    (export,) = dynamodb.list_exports(TableArn=arn)["ExportSummaries"]
    assert wait_for_export(dynamodb, export["ExportArn"]) == "COMPLETED"

    after = status(rotator, utc(2026, 3, 2, 0, 20))
    (expired,) = [t for t in after["tables"] if t["expired"]]
    assert expired["export"]["proven"] is True
    assert expired["export"]["proving_export"]["arn"] == export["ExportArn"]
    assert after["due_for_deletion"] == [{
        "table": f"{PREFIX}_2026-02-01",
        "why_not_yet": "export proven: the next resize_old or reconcile run deletes it",
    }]
    assert status_exit_code(after) == 0
    text = format_status(after)
    assert "archive: s3://archive/exports/" in text
    assert f"{PREFIX}_2026-02-01: export proven: the next resize_old or reconcile run deletes it" in text
