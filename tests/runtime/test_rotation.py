"""TableRotator against moto: creation, tiers, idempotence, decrease budget, expiry and archive."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.config import AutoScaling, CapacityTier, RotationConfig
from cdk_ts_runtime._rotation.report import RotationRunError
from cdk_ts_runtime._rotation.rotator import TableRotator
from tests.support.conformance import NO_RETRIES
from tests.support.emf import EmfLines
from tests.support.requests import RequestCounter
from tests.support.rotation import (
    PREFIX,
    capacity,
    create_period_table,
    make_rotator,
    report_export_time,
    table_names,
    wait_for_export,
)
from tests.support.times import utc
from tests.support.wire import refuse_on_table


def make_rotator_2016(dynamodb, layout=None, **config):
    """A rotator with the 2016 provisioned tiers (300/1000, 100/1, 1/1): the tests of provisioned tier moves."""
    config.setdefault("previous", CapacityTier.provisioned(100, 1))
    config.setdefault("older", CapacityTier.provisioned(1, 1))
    return make_rotator(dynamodb, layout, **config)


def force_describe(dynamodb, table, **overrides):
    """Make DescribeTable report other values for one table (state we cannot reach in an emulator)."""

    def patch(http_response, parsed, model, **_kwargs):
        if model.name == "DescribeTable" and parsed.get("Table", {}).get("TableName") == table:
            for key, value in overrides.items():
                if key in ("NumberOfDecreasesToday", "LastDecreaseDateTime"):
                    parsed["Table"]["ProvisionedThroughput"][key] = value
                else:
                    parsed["Table"][key] = value

    dynamodb.meta.events.register("after-call.dynamodb.DescribeTable", patch)


class TestCreateNew:
    def test_creates_the_next_days_table_at_current_tier_with_secure_settings(self, dynamodb):
        report = make_rotator(dynamodb).run("create_new", utc(2026, 3, 1, 23, 45))

        assert table_names(dynamodb) == ["telemetry_2026-03-02"]
        assert capacity(dynamodb, "telemetry_2026-03-02") == (300, 1000)
        assert [a["action"] for a in report["actions"]] == ["create", "enable_pitr"]
        backups = dynamodb.describe_continuous_backups(TableName="telemetry_2026-03-02")["ContinuousBackupsDescription"]
        assert backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
        arn = dynamodb.describe_table(TableName="telemetry_2026-03-02")["Table"]["TableArn"]
        tags = {t["Key"]: t["Value"] for t in dynamodb.list_tags_of_resource(ResourceArn=arn)["Tags"]}
        assert tags == {"cdk-ts:prefix": PREFIX, "cdk-ts:period": "daily"}

    def test_a_run_retried_after_midnight_still_creates_the_scheduled_periods_next_table(self, dynamodb):
        # The 23:45 run on 1 March is retried at 00:05 on 2 March; the event still carries 23:45.
        make_rotator(dynamodb).run("create_new", utc(2026, 3, 1, 23, 45))
        assert table_names(dynamodb) == ["telemetry_2026-03-02"]

    @pytest.mark.parametrize(
        ("layout", "when", "expected"),
        [
            (TableLayout(PREFIX, "weekly"), utc(2026, 12, 27, 23, 45), "telemetry_2026-W53"),
            (TableLayout(PREFIX, "weekly"), utc(2027, 1, 3, 23, 45), "telemetry_2027-W01"),
            (TableLayout(PREFIX, "monthly"), utc(2024, 2, 29, 23, 45), "telemetry_2024-03"),
            (TableLayout(PREFIX, "quarterly"), utc(2026, 12, 31, 23, 45), "telemetry_2027-Q1"),
            (TableLayout(PREFIX, "yearly"), utc(2026, 12, 31, 23, 45), "telemetry_2027"),
        ],
    )
    def test_next_table_for_every_period_kind(self, dynamodb, layout, when, expected):
        make_rotator(dynamodb, layout).run("create_new", when)
        assert table_names(dynamodb) == [expected]

    def test_second_run_leaves_the_existing_table_alone(self, dynamodb):
        rotator = make_rotator(dynamodb)
        rotator.run("create_new", utc(2026, 3, 1, 23, 45))
        dynamodb.put_item(TableName="telemetry_2026-03-02", Item={"pk": {"N": "1"}, "sk": {"N": "1"}})

        report = rotator.run("create_new", utc(2026, 3, 1, 23, 45))

        assert [a["action"] for a in report["actions"]] == ["exists"]
        assert dynamodb.scan(TableName="telemetry_2026-03-02")["Count"] == 1

    def test_key_schema_stream_and_kms_follow_the_configuration(self, dynamodb):
        layout = TableLayout(PREFIX, partition_key="device", partition_key_type="S", sort_key="ts")
        make_rotator(
            dynamodb, layout, stream_view_type="NEW_AND_OLD_IMAGES", kms_key_arn="arn:aws:kms:us-east-1:1:key/k"
        ).run("create_new", utc(2026, 3, 1, 23, 45))
        table = dynamodb.describe_table(TableName="telemetry_2026-03-02")["Table"]
        assert table["KeySchema"] == [
            {"AttributeName": "device", "KeyType": "HASH"},
            {"AttributeName": "ts", "KeyType": "RANGE"},
        ]
        assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        assert table["SSEDescription"]["SSEType"] == "KMS"

    def test_ttl_is_enabled_once_the_table_is_active(self, dynamodb):
        make_rotator(dynamodb, ttl_attribute="expires_at").run("create_new", utc(2026, 3, 1, 23, 45))
        ttl = dynamodb.describe_time_to_live(TableName="telemetry_2026-03-02")["TimeToLiveDescription"]
        assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}

    def test_unknown_operation_is_a_clear_error(self, dynamodb):
        with pytest.raises(ValueError, match="unknown Operation 'rotate'; use one of create_new, resize_old"):
            make_rotator(dynamodb).run("rotate", utc(2026, 3, 1))


class TestResizeOld:
    def test_previous_table_goes_to_previous_tier_and_older_to_older_tier(self, dynamodb):
        for day in (26, 27, 28):
            create_period_table(dynamodb, f"telemetry_2026-02-{day}")
        create_period_table(dynamodb, "telemetry_2026-03-01")
        create_period_table(dynamodb, "telemetry_2026-03-02")

        make_rotator_2016(dynamodb).run("resize_old", utc(2026, 3, 2, 0, 15))

        assert capacity(dynamodb, "telemetry_2026-03-02") == (300, 1000)
        assert capacity(dynamodb, "telemetry_2026-03-01") == (100, 1)
        for day in (26, 27, 28):
            assert capacity(dynamodb, f"telemetry_2026-02-{day}") == (1, 1)

    def test_without_a_previous_table_older_tables_still_get_the_older_tier(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-02-27")
        make_rotator_2016(dynamodb).run("resize_old", utc(2026, 3, 2, 0, 15))
        assert capacity(dynamodb, "telemetry_2026-02-27") == (1, 1)

    def test_month_boundary_for_a_monthly_rotation(self, dynamodb):
        for name in ("telemetry_2026-01", "telemetry_2026-02", "telemetry_2026-03"):
            create_period_table(dynamodb, name, layout=TableLayout(PREFIX, "monthly"))
        make_rotator_2016(dynamodb, TableLayout(PREFIX, "monthly")).run("resize_old", utc(2026, 3, 1, 0, 15))
        assert [capacity(dynamodb, n) for n in ("telemetry_2026-01", "telemetry_2026-02", "telemetry_2026-03")] == [
            (1, 1),
            (100, 1),
            (300, 1000),
        ]

    def test_tables_at_their_tier_get_no_update_request(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-02-28", 1, 1)
        create_period_table(dynamodb, "telemetry_2026-03-01", 100, 1)
        counter = RequestCounter(dynamodb)
        report = make_rotator_2016(dynamodb).run("resize_old", utc(2026, 3, 2, 0, 15))
        assert counter.calls["UpdateTable"] == 0
        assert report["actions"] == []

    @pytest.mark.parametrize("status", ["CREATING", "UPDATING"])
    def test_tables_that_are_not_active_are_deferred_to_the_next_run(self, dynamodb, status):
        create_period_table(dynamodb, "telemetry_2026-03-01")
        force_describe(dynamodb, "telemetry_2026-03-01", TableStatus=status)
        report = make_rotator(dynamodb).run("resize_old", utc(2026, 3, 2, 0, 15))
        assert capacity(dynamodb, "telemetry_2026-03-01") == (300, 1000)
        assert report["actions"] == [
            {"action": "defer", "table": "telemetry_2026-03-01", "tier": "on-demand IA",
             "reason": f"status {status}: the next change waits until the table is ACTIVE again"}
        ]

    def test_a_next_table_still_creating_gets_its_settings_on_a_later_run(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-03-02")
        force_describe(dynamodb, "telemetry_2026-03-02", TableStatus="CREATING")
        rotator = make_rotator(dynamodb, wait_for_new_tables_seconds=0)
        first = rotator.run("create_new", utc(2026, 3, 1, 23, 45))
        assert [a["action"] for a in first["actions"]] == ["exists", "defer"]

    def test_only_names_of_this_prefix_and_period_are_touched(self, dynamodb):
        for name in ("telemetry_x_2026-02-01", "telemetry2_2026-02-01", "telemetry_2026-W05", "other_2026-02-01"):
            create_period_table(dynamodb, name)
        counter = RequestCounter(dynamodb)
        make_rotator(dynamodb).run("resize_old", utc(2026, 3, 2, 0, 15))
        assert counter.calls["UpdateTable"] == 0
        assert counter.calls["DescribeTable"] == 0

    def test_list_tables_follows_every_page(self, dynamodb):
        start = utc(2025, 1, 1)
        names = [f"telemetry_{(start + timedelta(days=i)):%Y-%m-%d}" for i in range(130)]
        for name in names:
            create_period_table(dynamodb, name, 1, 1)
        counter = RequestCounter(dynamodb)
        found = make_rotator(dynamodb).list_tables()
        assert [t.name for t in found] == names
        assert counter.calls["ListTables"] >= 2


class TestDecreaseBudget:
    @pytest.mark.parametrize(
        ("decreases", "last_decrease_minutes_ago", "updated"),
        [
            (0, None, True),
            (3, 5, True),  # the four free decreases of the day
            (4, 30, False),  # after those: only when the last one is an hour old
            (5, 61, True),
            (27, 600, False),  # the whole day's budget is spent
        ],
    )
    def test_decreases_respect_dynamodbs_daily_budget(self, dynamodb, decreases, last_decrease_minutes_ago, updated):
        when = utc(2026, 3, 2, 12, 15)
        create_period_table(dynamodb, "telemetry_2026-03-01")
        overrides = {"NumberOfDecreasesToday": decreases}
        if last_decrease_minutes_ago is not None:
            overrides["LastDecreaseDateTime"] = when - timedelta(minutes=last_decrease_minutes_ago)
        force_describe(dynamodb, "telemetry_2026-03-01", **overrides)

        report = make_rotator_2016(dynamodb).run("resize_old", when)

        assert capacity(dynamodb, "telemetry_2026-03-01") == ((100, 1) if updated else (300, 1000))
        assert [a["action"] for a in report["actions"]] == (["update"] if updated else ["defer"])

    def test_increases_are_never_held_back_by_the_budget(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-03-02", 1, 1)
        force_describe(dynamodb, "telemetry_2026-03-02", NumberOfDecreasesToday=27)
        make_rotator(dynamodb).run("reconcile", utc(2026, 3, 2, 12))
        assert capacity(dynamodb, "telemetry_2026-03-02") == (300, 1000)

    def test_a_refused_update_fails_that_table_only_and_the_run_ends_in_error(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-02-27")
        create_period_table(dynamodb, "telemetry_2026-02-28")
        refuse_on_table(dynamodb, "UpdateTable", "telemetry_2026-02-27", "AccessDeniedException")
        with pytest.raises(RotationRunError, match="1 table\\(s\\) failed: telemetry_2026-02-27") as failed:
            make_rotator_2016(dynamodb).run("resize_old", utc(2026, 3, 2, 0, 15))
        assert {a["table"]: a["action"] for a in failed.value.report.actions} == {
            "telemetry_2026-02-27": "error",
            "telemetry_2026-02-28": "update",
        }
        assert capacity(dynamodb, "telemetry_2026-02-27") == (300, 1000)
        assert capacity(dynamodb, "telemetry_2026-02-28") == (1, 1)

    def test_changes_per_run_are_bounded(self, dynamodb):
        for day in range(1, 11):
            create_period_table(dynamodb, f"telemetry_2026-02-{day:02d}")
        report = make_rotator(dynamodb, max_changes_per_run=3).run("resize_old", utc(2026, 3, 2, 0, 15))
        assert sum(a["action"] == "update" for a in report["actions"]) == 3
        assert sum(a["action"] == "defer" for a in report["actions"]) == 7


class TestReconcile:
    def test_from_nothing_creates_the_current_table_only_outside_the_lead_window(self, dynamodb):
        make_rotator(dynamodb).run("reconcile", utc(2026, 3, 1, 12))
        assert table_names(dynamodb) == ["telemetry_2026-03-01"]

    def test_inside_the_lead_window_the_next_table_is_created_too(self, dynamodb):
        make_rotator(dynamodb).run("reconcile", utc(2026, 3, 1, 23, 50))
        assert table_names(dynamodb) == ["telemetry_2026-03-01", "telemetry_2026-03-02"]
        assert capacity(dynamodb, "telemetry_2026-03-02") == (300, 1000)

    def test_after_missed_runs_every_table_converges_to_its_tier(self, dynamodb):
        # create_new ran for three days, resize_old never did, and the 2 March table was never created.
        for name in ("telemetry_2026-02-27", "telemetry_2026-02-28", "telemetry_2026-03-01"):
            create_period_table(dynamodb, name)

        make_rotator_2016(dynamodb).run("reconcile", utc(2026, 3, 2, 9))

        assert capacity(dynamodb, "telemetry_2026-03-02") == (300, 1000)
        assert capacity(dynamodb, "telemetry_2026-03-01") == (100, 1)
        assert capacity(dynamodb, "telemetry_2026-02-28") == (1, 1)
        assert capacity(dynamodb, "telemetry_2026-02-27") == (1, 1)

    def test_running_twice_changes_nothing_the_second_time(self, dynamodb):
        for name in ("telemetry_2026-02-27", "telemetry_2026-03-01"):
            create_period_table(dynamodb, name)
        rotator = make_rotator_2016(dynamodb, retain_periods=3, ttl_attribute="ttl")
        rotator.run("reconcile", utc(2026, 3, 2, 23, 50))
        counter = RequestCounter(dynamodb)

        second = rotator.run("reconcile", utc(2026, 3, 2, 23, 50))

        assert second["actions"] == []
        mutations = {"CreateTable", "UpdateTable", "DeleteTable", "UpdateContinuousBackups", "UpdateTimeToLive"}
        assert not mutations & set(counter.calls)

    def test_on_demand_tiers_switch_billing_mode(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-02-01")
        make_rotator(dynamodb, older=CapacityTier.pay_per_request()).run("reconcile", utc(2026, 3, 2, 9))
        assert capacity(dynamodb, "telemetry_2026-02-01") == "on-demand"
        assert capacity(dynamodb, "telemetry_2026-03-02") == (300, 1000)

    def test_auto_scaled_current_tier_is_registered_then_removed_when_the_table_ages(self, dynamodb):
        autoscaling = boto3.client("application-autoscaling", region_name="us-east-1")
        tier = CapacityTier.provisioned(300, 1000, AutoScaling(target_utilization=70, max_write_capacity=4000))
        rotator = make_rotator_2016(dynamodb, current=tier)

        rotator.run("create_new", utc(2026, 3, 1, 23, 45))
        targets = autoscaling.describe_scalable_targets(ServiceNamespace="dynamodb")["ScalableTargets"]
        assert {(t["ScalableDimension"], t["MinCapacity"], t["MaxCapacity"]) for t in targets} == {
            ("dynamodb:table:ReadCapacityUnits", 300, 3000),
            ("dynamodb:table:WriteCapacityUnits", 1000, 4000),
        }

        rotator.run("resize_old", utc(2026, 3, 3, 0, 15))
        assert autoscaling.describe_scalable_targets(ServiceNamespace="dynamodb")["ScalableTargets"] == []
        assert capacity(dynamodb, "telemetry_2026-03-02") == (100, 1)

    def test_next_table_metric_reports_a_create_still_failing_past_the_deadline(self, dynamodb):
        lines = EmfLines()
        dynamodb = boto3.client("dynamodb", region_name="us-east-1", config=NO_RETRIES)  # a throttle to botocore
        answered = refuse_on_table(dynamodb, "CreateTable", "telemetry_2026-03-02", "LimitExceededException")
        rotator = TableRotator(  # 23:56: less than the default 5 minutes before the boundary
            TableLayout(PREFIX), RotationConfig(), dynamodb=dynamodb, metrics=lines.writer(), sleep=lambda _s: None,
            clock=lambda: utc(2026, 3, 1, 23, 56),
        )
        report = rotator.run("reconcile", utc(2026, 3, 1, 23, 56))  # "later" from DynamoDB: no error
        [deferred] = [a for a in report["actions"] if a["table"] == "telemetry_2026-03-02" and a["action"] == "defer"]
        assert deferred["attempts"] == 8  # no time limit here: every try the rotation allows itself
        assert answered == {"answered": 8}
        assert "telemetry_2026-03-01" in table_names(dynamodb)
        assert "telemetry_2026-03-02" not in table_names(dynamodb)
        # told at the first refusal past the deadline, and again as the run ended
        assert lines.values("NextPeriodTableMissing", TablePrefix=PREFIX) == [1, 1]


class TestExpiry:
    def test_without_an_archive_bucket_tables_past_retention_are_deleted(self, dynamodb):
        for day in range(25, 29):
            create_period_table(dynamodb, f"telemetry_2026-02-{day}")
        create_period_table(dynamodb, "telemetry_2026-03-01")
        create_period_table(dynamodb, "other_2026-02-01")

        make_rotator(dynamodb, retain_periods=3).run("resize_old", utc(2026, 3, 2, 0, 15))

        # retain 3 = 2 March (current), 1 March, 28 February
        assert table_names(dynamodb) == ["other_2026-02-01", "telemetry_2026-02-28", "telemetry_2026-03-01"]

    def test_deletion_protected_tables_are_still_expired(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-02-01")
        dynamodb.update_table(TableName="telemetry_2026-02-01", DeletionProtectionEnabled=True)
        make_rotator(dynamodb, retain_periods=2).run("reconcile", utc(2026, 3, 2, 9))
        assert "telemetry_2026-02-01" not in table_names(dynamodb)

    def test_with_an_archive_bucket_the_table_is_deleted_only_after_its_export_completed(self, dynamodb):
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="archive")
        create_period_table(dynamodb, "telemetry_2026-02-01")
        dynamodb.update_continuous_backups(
            TableName="telemetry_2026-02-01", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
        rotator = make_rotator(dynamodb, retain_periods=2, archive_bucket="archive", archive_prefix="exports/")
        report_export_time(dynamodb)

        first = rotator.run("resize_old", utc(2026, 3, 2, 0, 15))
        assert "telemetry_2026-02-01" in table_names(dynamodb)
        assert [a["action"] for a in first["actions"] if a["table"] == "telemetry_2026-02-01"] == ["export"]
        arn = dynamodb.describe_table(TableName="telemetry_2026-02-01")["Table"]["TableArn"]
        export = dynamodb.list_exports(TableArn=arn)["ExportSummaries"][0]
        description = dynamodb.describe_export(ExportArn=export["ExportArn"])["ExportDescription"]
        assert (description["S3Bucket"], description["S3Prefix"]) == ("archive", "exports/telemetry_2026-02-01/")

        # moto runs an export on a background thread, as DynamoDB runs it asynchronously; the next run
        # comes an hour later, by which time it has finished
        assert wait_for_export(dynamodb, export["ExportArn"]) == "COMPLETED"
        second = rotator.run("resize_old", utc(2026, 3, 2, 1, 15))
        assert "telemetry_2026-02-01" not in table_names(dynamodb)
        assert [a["action"] for a in second["actions"]] == ["delete"]

    def test_an_export_in_progress_keeps_the_table(self, dynamodb):
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="archive")
        create_period_table(dynamodb, "telemetry_2026-02-01")
        dynamodb.update_continuous_backups(
            TableName="telemetry_2026-02-01", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
        rotator = make_rotator(dynamodb, retain_periods=2, archive_bucket="archive")
        assert [a["action"] for a in rotator.run("resize_old", utc(2026, 3, 2, 0, 15))["actions"]] == ["export"]

        def in_progress(http_response, parsed, **_kwargs):
            parsed["ExportDescription"]["ExportStatus"] = "IN_PROGRESS"

        dynamodb.meta.events.register("after-call.dynamodb.DescribeExport", in_progress)
        report = rotator.run("resize_old", utc(2026, 3, 2, 1, 15))
        assert "telemetry_2026-02-01" in table_names(dynamodb)
        assert report["actions"][-1]["action"] == "wait_export"

    def test_a_failed_export_keeps_the_table_and_is_retried_next_run(self, dynamodb):
        create_period_table(dynamodb, "telemetry_2026-02-01")
        code = "PointInTimeRecoveryUnavailableException"
        answered = refuse_on_table(dynamodb, "ExportTableToPointInTime", "telemetry_2026-02-01", code)
        report = make_rotator(dynamodb, retain_periods=2, archive_bucket="archive").run(
            "resize_old", utc(2026, 3, 2, 0, 15)
        )
        assert "telemetry_2026-02-01" in table_names(dynamodb)
        assert report["actions"][-1]["action"] == "export_failed"
        assert answered == {"answered": 1}
