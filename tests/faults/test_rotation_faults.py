"""Rotation under bad event times, look-alike tables, unproven exports, per-table failures and bad config.

Every test asserts what is left afterwards (tables, capacities, tags), not only the error raised.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._periods import label
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG, CapacityTier, RotationConfig
from cdk_ts_runtime._rotation.report import RotationRunError
from cdk_ts_runtime._rotation.rotator import RotationWindowError, TableRotator
from cdk_ts_runtime.handlers import custom_resource, rotation
from tests.support.cloudformation import CloudFormationReplies
from tests.support.conformance import NO_RETRIES
from tests.support.emf import EmfLines
from tests.support.environment import REGION
from tests.support.rotation import create_period_table
from tests.support.waiting import wait_until
from tests.support.wire import refuse_on_table

PREFIX = "readings"
NOW = datetime(2026, 3, 10, 0, 15, tzinfo=UTC)


def day(offset: int) -> str:
    return f"{PREFIX}_{label('daily', NOW + timedelta(days=offset))}"


def make_table(dynamodb, name, read=300, write=1000, *, owned=True):
    """A daily period table of this rotation (tagged) or a look-alike, with PITR on (exports need it)."""
    create_period_table(dynamodb, name, read, write, owned=owned, layout=TableLayout(PREFIX))
    dynamodb.update_continuous_backups(
        TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
    )




def rotator(dynamodb, clock=NOW, **config):
    return TableRotator(
        TableLayout(PREFIX),
        RotationConfig(**{"metric_namespace": None, **config}),
        dynamodb=dynamodb,
        sleep=lambda _s: None,
        clock=lambda: clock,
    )


def state(dynamodb):
    """Every table with its capacity: what a failed or refused run must leave unchanged."""
    result = {}
    for name in dynamodb.list_tables()["TableNames"]:
        table = dynamodb.describe_table(TableName=name)["Table"]
        throughput = table["ProvisionedThroughput"]
        result[name] = (throughput["ReadCapacityUnits"], throughput["WriteCapacityUnits"])
    return result


@pytest.fixture
def fortnight(dynamodb):
    """Fifteen daily tables: today (hot), yesterday and thirteen older ones, all at their tiers."""
    make_table(dynamodb, day(0))
    make_table(dynamodb, day(-1), 100, 1)
    for offset in range(2, 15):
        make_table(dynamodb, day(-offset), 1, 1)
    return state(dynamodb)


class TestEventTimeWindow:
    @pytest.mark.parametrize("operation", ["resize_old", "reconcile", "create_new"])
    @pytest.mark.parametrize(
        "when",
        [
            # an event time this far ahead once deleted every table, today's included
            datetime(2099, 1, 1, 0, 15, tzinfo=UTC),
            # an event time this far behind once raised ten old tables to 1000 WCU
            datetime(1970, 1, 1, 0, 15, tzinfo=UTC),
            NOW + timedelta(minutes=15 + 16),  # just past create_lead (15 min) + margin (15 min)
            NOW - timedelta(days=1, minutes=16),  # just past one period + margin behind
        ],
    )
    def test_a_time_outside_the_window_is_refused_and_nothing_changes(self, dynamodb, fortnight, operation, when):
        with pytest.raises(RotationWindowError, match="outside the window") as refused:
            rotator(dynamodb, retain_periods=14).run(operation, when)
        assert when.isoformat() in str(refused.value) and NOW.isoformat() in str(refused.value)
        assert state(dynamodb) == fortnight

    @pytest.mark.parametrize(
        "when",
        [NOW + timedelta(minutes=29), NOW - timedelta(days=1, minutes=14), NOW - timedelta(hours=2)],
    )
    def test_late_retries_and_early_runs_inside_the_window_still_run(self, dynamodb, fortnight, when):
        report = rotator(dynamodb, retain_periods=14).run("reconcile", when)
        assert report["time"] == when.isoformat()

    @pytest.mark.parametrize("raw", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"])
    def test_dates_at_the_ends_of_the_calendar_are_a_window_error_not_an_overflow(self, dynamodb, fortnight, raw):
        when = rotation.scheduled_time({"time": raw})
        with pytest.raises(RotationWindowError):
            rotator(dynamodb, retain_periods=14).run("resize_old", when)
        assert state(dynamodb) == fortnight

    def test_the_handler_refuses_a_2099_event_before_any_change(self, dynamodb, fortnight, monkeypatch):
        for name, value in TableLayout(PREFIX).to_env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv(ENV_ROTATION_CONFIG, RotationConfig(retain_periods=14).to_json())
        monkeypatch.setattr(rotation, "now", lambda: NOW)
        with pytest.raises(RotationWindowError):
            rotation.handler({"Operation": "resize_old", "time": "2099-01-01T00:15:00Z"}, None)
        assert state(dynamodb) == fortnight
        assert f"{PREFIX}_2099-01-01" not in state(dynamodb)


class TestOwnership:
    def test_an_expired_lookalike_without_the_tags_is_reported_not_deleted(self, dynamodb):
        make_table(dynamodb, day(0))
        make_table(dynamodb, day(-5), 1, 1, owned=False)
        make_table(dynamodb, day(-6), 1, 1)
        report = rotator(dynamodb, retain_periods=3).run("resize_old", NOW)
        assert day(-5) in state(dynamodb) and day(-6) not in state(dynamodb)
        assert {"action": "not_owned", "table": day(-5)} == {
            k: v for k, v in next(a for a in report["actions"] if a["table"] == day(-5)).items() if k != "reason"
        }

    def test_a_lookalike_in_the_previous_slot_is_not_resized(self, dynamodb):
        make_table(dynamodb, day(0))
        make_table(dynamodb, day(-1), owned=False)
        rotator(dynamodb).run("resize_old", NOW)
        assert state(dynamodb)[day(-1)] == (300, 1000)

    def test_a_lookalike_with_the_current_name_gets_no_settings(self, dynamodb):
        make_table(dynamodb, day(0), owned=False)
        dynamodb.update_continuous_backups(
            TableName=day(0), PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": False}
        )
        report = rotator(dynamodb, ttl_attribute="expires").run("reconcile", NOW)
        assert any(a["action"] == "not_owned" and a["table"] == day(0) for a in report["actions"])
        ttl = dynamodb.describe_time_to_live(TableName=day(0))["TimeToLiveDescription"]["TimeToLiveStatus"]
        assert ttl == "DISABLED"

    def test_lookalikes_are_counted_in_a_metric(self, dynamodb):
        lines = EmfLines()
        make_table(dynamodb, day(0))
        make_table(dynamodb, day(-9), 1, 1, owned=False)
        TableRotator(
            TableLayout(PREFIX), RotationConfig(retain_periods=3), dynamodb=dynamodb, metrics=lines.writer(),
            sleep=lambda _s: None, clock=lambda: NOW,
        ).run("resize_old", NOW)
        assert lines.values("ForeignLookalikeTables", TablePrefix=PREFIX) == [1]
        assert day(-9) in state(dynamodb)


def export_times(dynamodb, when: datetime):
    """DescribeExport answers carry ExportTime, as DynamoDB's do (moto leaves it out)."""

    def add(http_response, parsed, **_kwargs):
        parsed["ExportDescription"].setdefault("ExportTime", when)

    dynamodb.meta.events.register("after-call.dynamodb.DescribeExport", add)


def wait_for_exports(dynamodb, table):
    arn = dynamodb.describe_table(TableName=table)["Table"]["TableArn"]

    def finished_summaries():
        summaries = dynamodb.list_exports(TableArn=arn)["ExportSummaries"]
        return summaries if all(s["ExportStatus"] != "IN_PROGRESS" for s in summaries) else None

    return wait_until(finished_summaries, what=f"exports of {table} finished", timeout=30)


class TestExportProof:
    @pytest.fixture
    def expired(self, dynamodb):
        boto3.client("s3").create_bucket(Bucket="archive")
        boto3.client("s3").create_bucket(Bucket="somewhere-else")
        make_table(dynamodb, day(0))
        make_table(dynamodb, day(-5), 1, 1)
        dynamodb.update_table(TableName=day(-5), DeletionProtectionEnabled=True)
        return day(-5)

    def run(self, dynamodb):
        return rotator(dynamodb, retain_periods=3, archive_bucket="archive", archive_prefix="exports/").run(
            "resize_old", NOW
        )

    def test_an_adhoc_export_to_another_bucket_is_no_proof(self, dynamodb, expired):
        arn = dynamodb.describe_table(TableName=expired)["Table"]["TableArn"]
        dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="somewhere-else", S3Prefix="adhoc")
        wait_for_exports(dynamodb, expired)
        export_times(dynamodb, datetime.now(UTC))
        report = self.run(dynamodb)
        assert expired in state(dynamodb)
        assert dynamodb.describe_table(TableName=expired)["Table"]["DeletionProtectionEnabled"] is True
        assert [a["action"] for a in report["actions"] if a["table"] == expired] == ["export"]

    def test_an_incremental_export_to_the_archive_is_no_proof(self, dynamodb, expired):
        arn = dynamodb.describe_table(TableName=expired)["Table"]["TableArn"]
        dynamodb.export_table_to_point_in_time(
            TableArn=arn, S3Bucket="archive", S3Prefix=f"exports/{expired}/", ExportType="INCREMENTAL_EXPORT",
            IncrementalExportSpecification={
                "ExportFromTime": NOW - timedelta(minutes=40), "ExportToTime": NOW - timedelta(minutes=20),
            },
        )
        wait_for_exports(dynamodb, expired)
        export_times(dynamodb, datetime.now(UTC))
        self.run(dynamodb)
        assert expired in state(dynamodb)

    def test_an_export_taken_before_the_period_ended_is_no_proof(self, dynamodb, expired):
        arn = dynamodb.describe_table(TableName=expired)["Table"]["TableArn"]
        dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="archive", S3Prefix=f"exports/{expired}/")
        wait_for_exports(dynamodb, expired)
        export_times(dynamodb, NOW - timedelta(days=5, hours=1))  # inside the table's own day
        self.run(dynamodb)
        assert expired in state(dynamodb)
        assert dynamodb.describe_table(TableName=expired)["Table"]["DeletionProtectionEnabled"] is True

    def test_only_a_full_completed_export_after_the_period_to_the_archive_proves_it(self, dynamodb, expired):
        export_times(dynamodb, datetime.now(UTC))
        assert [a["action"] for a in self.run(dynamodb)["actions"] if a["table"] == expired] == ["export"]
        wait_for_exports(dynamodb, expired)
        second = self.run(dynamodb)
        assert expired not in state(dynamodb)
        assert {"action": "delete", "table": expired, "archived": True} in second["actions"]


class TestFailureIsolation:
    @pytest.fixture
    def dynamodb(self, aws):
        """One attempt a call: botocore retries the "later" answers as throttles, a wait these tests are not about."""
        return boto3.client("dynamodb", region_name=REGION, config=NO_RETRIES)

    def test_one_tables_refused_delete_leaves_it_and_the_others_are_still_expired(self, dynamodb):
        make_table(dynamodb, day(0))
        for offset in (5, 6, 7):
            make_table(dynamodb, day(-offset), 1, 1)
        refuse_on_table(dynamodb, "DeleteTable", day(-6), "AccessDeniedException")
        with pytest.raises(RotationRunError, match=day(-6)) as failed:
            rotator(dynamodb, retain_periods=3).run("resize_old", NOW)
        assert sorted(state(dynamodb)) == sorted([day(0), day(-6)])
        assert {"action": "error", "table": day(-6), "step": "expire"} == {
            k: v for k, v in next(a for a in failed.value.report.actions if a["table"] == day(-6)).items()
            if k != "reason"
        }

    # "Later" answers: the table is changing, too many tables are changing in the account, or the control
    # plane throttled past the SDK's retries (developer guide, "Error handling with DynamoDB").
    @pytest.mark.parametrize("code", ["ResourceInUseException", "LimitExceededException", "ThrottlingException"])
    def test_a_delete_answered_later_defers_that_table_without_error_and_the_others_are_expired(
        self, dynamodb, code
    ):
        make_table(dynamodb, day(0))
        for offset in (5, 6, 7):
            make_table(dynamodb, day(-offset), 1, 1)
        refused = refuse_on_table(dynamodb, "DeleteTable", day(-6), code)
        report = rotator(dynamodb, retain_periods=3).run("resize_old", NOW)
        assert refused == {"answered": 1}
        assert sorted(state(dynamodb)) == sorted([day(0), day(-6)])
        [deferred] = [a for a in report["actions"] if a["table"] == day(-6)]
        assert (deferred["action"], deferred["step"]) == ("defer", "expire")
        assert deferred["reason"].startswith(code) and deferred["reason"].endswith("retried next run")
        # the next run deletes it
        dynamodb = boto3.client("dynamodb", region_name=REGION)  # DynamoDB answers again: a client without the refusal
        later = NOW + timedelta(hours=1)
        rotator(dynamodb, clock=later, retain_periods=3).run("reconcile", later)
        assert sorted(state(dynamodb)) == [day(0)]

    @pytest.mark.parametrize("code", ["ThrottlingException", "LimitExceededException", "ResourceInUseException"])
    def test_a_resize_answered_later_leaves_that_table_for_the_next_run_and_resizes_the_rest(self, dynamodb, code):
        make_table(dynamodb, day(0))
        make_table(dynamodb, day(-1))
        make_table(dynamodb, day(-2))
        refused = refuse_on_table(dynamodb, "UpdateTable", day(-1), code)
        report = rotator(
            dynamodb, previous=CapacityTier.provisioned(100, 1), older=CapacityTier.provisioned(1, 1)
        ).run("resize_old", NOW)
        assert state(dynamodb) == {day(0): (300, 1000), day(-1): (300, 1000), day(-2): (1, 1)}
        assert [a["action"] for a in report["actions"] if a["table"] == day(-1)] == ["defer"]
        assert refused == {"answered": 1}

    def test_a_resize_refused_outright_is_an_error_and_the_rest_are_resized(self, dynamodb):
        make_table(dynamodb, day(0))
        make_table(dynamodb, day(-1))
        make_table(dynamodb, day(-2))
        refuse_on_table(dynamodb, "UpdateTable", day(-1), "AccessDeniedException")
        with pytest.raises(RotationRunError, match=day(-1)):
            rotator(
                dynamodb, previous=CapacityTier.provisioned(100, 1), older=CapacityTier.provisioned(1, 1)
            ).run("resize_old", NOW)
        assert state(dynamodb) == {day(0): (300, 1000), day(-1): (300, 1000), day(-2): (1, 1)}


class TestFutureTables:
    def test_a_table_dated_after_the_next_period_is_reported_never_made_current(self, dynamodb):
        lines = EmfLines()
        make_table(dynamodb, day(0))
        make_table(dynamodb, day(5), 1, 1)
        report = TableRotator(
            TableLayout(PREFIX), RotationConfig(), dynamodb=dynamodb, metrics=lines.writer(),
            sleep=lambda _s: None, clock=lambda: NOW,
        ).run("reconcile", NOW)
        assert state(dynamodb)[day(5)] == (1, 1)
        assert any(a["action"] == "future" and a["table"] == day(5) for a in report["actions"])
        assert lines.values("FuturePeriodTables", TablePrefix=PREFIX) == [1]

    def test_a_table_dated_2099_is_reported_as_future_not_left_hot_silently(self, dynamodb):
        make_table(dynamodb, day(0))
        make_table(dynamodb, f"{PREFIX}_2099-01-01")
        report = rotator(dynamodb).run("resize_old", NOW)
        assert any(a["action"] == "future" and a["table"] == f"{PREFIX}_2099-01-01" for a in report["actions"])


class TestConfig:
    @pytest.mark.parametrize(
        ("raw", "message"),
        [
            ({"retain_periods": "14"}, "retain_periods '14' must be a whole number"),
            ({"retain_periods": 1}, "retain_periods 1 must be >= 2"),
            ({"retain_periods": True}, "retain_periods True must be a whole number"),
            ({"max_changes_per_run": 0}, "must be >= 1"),
            ({"current": {"read_capacity": "300", "write_capacity": 1000}}, "read_capacity '300'"),
            ({"current": {"read": 300}}, "unknown capacity tier settings: read"),
            ({"current": {"on_demand": "yes"}}, "on_demand 'yes' must be true or false"),
            ({"older": {"read_capacity": 1, "write_capacity": 1, "auto_scaling": {"max": 5}}}, "unknown auto scaling"),
            ({"point_in_time_recovery": "false"}, "point_in_time_recovery 'false' must be true or false"),
            ({"tags": {"team": 7}}, "tags .* must map strings to strings"),
            ({"archive_bucket": ""}, "archive_bucket '' must be a non-empty string"),
            ({"bucket": "x"}, "unknown rotation settings: bucket"),
            ({"missing_table_alarm_seconds": 901}, "missing_table_alarm_seconds 901 must be from 0 to create_lead"),
            ({"missing_table_alarm_seconds": 30.5}, "missing_table_alarm_seconds 30.5 must be a whole number"),
        ],
    )
    def test_bad_config_is_refused_when_loaded(self, raw, message):
        with pytest.raises(ValueError, match=message):
            RotationConfig.from_env({ENV_ROTATION_CONFIG: json.dumps(raw)})

    def test_the_missing_table_deadline_defaults_to_5_minutes_or_the_shorter_create_lead(self):
        assert RotationConfig().missing_table_alarm_seconds == 300
        assert RotationConfig(create_lead_seconds=120).missing_table_alarm_seconds == 120

    @pytest.mark.parametrize("raw", ["not json", "[1, 2]"])
    def test_config_that_is_not_a_json_object_is_refused(self, raw):
        with pytest.raises(ValueError, match="CDK_TS_ROTATION_CONFIG"):
            RotationConfig.from_env({ENV_ROTATION_CONFIG: raw})


class TestCustomResource:
    @pytest.fixture
    def cloudformation(self, monkeypatch):
        replies = CloudFormationReplies()
        monkeypatch.setattr(custom_resource, "SSL_CONTEXT", replies.client_context)
        for name, value in TableLayout(PREFIX).to_env().items():
            monkeypatch.setenv(name, value)
        yield replies
        replies.close()

    def event(self, url, **overrides):
        return {
            "RequestType": "Create",
            "ResponseURL": url,
            "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/S/1",
            "RequestId": "r-1",
            "LogicalResourceId": "DeployTimeReconcile",
            **overrides,
        }

    def test_an_unknown_request_type_answers_failed_and_changes_nothing(self, dynamodb, cloudformation):
        rotation.handler(self.event(cloudformation.url, RequestType="Upsert"), None)
        (reply,) = cloudformation.replies
        assert reply["Status"] == "FAILED" and "unknown RequestType 'Upsert'" in reply["Reason"]
        assert state(dynamodb) == {}

    def test_missing_fields_answer_failed_with_the_reason(self, dynamodb, cloudformation):
        event = self.event(cloudformation.url)
        del event["RequestId"]
        rotation.handler(event, None)
        (reply,) = cloudformation.replies
        assert reply["Status"] == "FAILED" and "missing RequestId" in reply["Reason"]
        assert state(dynamodb) == {}

    def test_a_plain_http_response_url_is_never_used(self, dynamodb, cloudformation):
        with pytest.raises(custom_resource.UnanswerableRequestError, match="https"):
            rotation.handler(self.event(cloudformation.url.replace("https://", "http://")), None)
        assert cloudformation.replies == [] and state(dynamodb) == {}

    def test_delete_answers_success_even_when_misconfigured(self, dynamodb, cloudformation, monkeypatch):
        monkeypatch.setenv(ENV_ROTATION_CONFIG, "{not json")
        rotation.handler(self.event(cloudformation.url, RequestType="Delete", PhysicalResourceId="p-1"), None)
        (reply,) = cloudformation.replies
        assert (reply["Status"], reply["PhysicalResourceId"]) == ("SUCCESS", "p-1")
