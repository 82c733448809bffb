"""The rotation through DynamoDB's own rules (cdk_ts.testing): state asserted after every run.

The harness answers as DynamoDB does where moto and dynalite say yes: a table-class change must be alone in
its UpdateTable, a table is UPDATING for a while after each update and refuses further changes meanwhile,
capacity decreases, switches to on-demand and class changes have budgets, and too many tables changing at
once is refused. boto3 and botocore run unmodified, their retries included, with the rotation's own
control-plane settings (``cdk_ts_runtime._retries.CONTROL_PLANE``).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from botocore.config import Config

from cdk_ts_runtime._retries import CONTROL_PLANE
from cdk_ts_runtime.rotation import TableRotator
from cdk_ts_runtime.rotation.lock import LOCK_KEY, RunLock
from cdk_ts_runtime.rotation.ownership import ownership_tags
from cdk_ts_runtime.rotation_config import CapacityTier, RightSizing, RotationConfig
from cdk_ts_runtime.table_layout import TableLayout
from tests.support.emf import EmfLines
from tests.support.requests import RequestCounter
from tests.support.rotation import actions, report_export_time
from tests.support.threads import start_and_join

IA = "STANDARD_INFREQUENT_ACCESS"
DAY0 = datetime(2026, 3, 10, tzinfo=UTC)


def at(days=0, hours=0, minutes=0):
    return DAY0 + timedelta(days=days, hours=hours, minutes=minutes)


class Rotation:
    """A rotation driven through the harness: each run at a scheduled time, the harness clock moved there first.

    ``client_config`` is the rotation's own control-plane retries unless a test isolates the rotation's retries
    from the SDK's.
    """

    def __init__(self, proxy, prefix, client_config=CONTROL_PLANE, **config):
        self.proxy = proxy
        self.prefix = prefix
        self.dynamodb = proxy.client("dynamodb", config=client_config)
        self.counter = RequestCounter(self.dynamodb)
        self.config = RotationConfig(**{"metric_namespace": None, "point_in_time_recovery": False, **config})
        self.layout = TableLayout(prefix)
        # the harness clock only moves forward from here: tables a test makes by hand exist well before any run
        proxy.set_time(at(-40))

    def rotator(self, when, **options):
        return TableRotator(
            self.layout, self.config, dynamodb=self.dynamodb, clock=lambda: when,
            sleep=self.proxy.advance,  # waiting for a new table to become ACTIVE moves the harness clock
            **options,
        )

    def run(self, operation, when, *, lambda_seconds=None, **options):
        """One run at ``when``; it must succeed or defer (a RotationRunError fails the test).

        With ``lambda_seconds``, the run has that long from ``when`` on the harness clock, as a Lambda run would.
        """
        if when > self.proxy.now():
            self.proxy.set_time(when)
        if lambda_seconds is not None:
            options["time_left"] = self.lambda_time_left(lambda_seconds)
        return self.rotator(when, **options).run(operation, when)

    def name(self, day):
        return f"{self.prefix}_{at(day):%Y-%m-%d}"

    def describe(self, day):
        return self.dynamodb.describe_table(TableName=self.name(day))["Table"]

    def tier(self, day):
        """(billing mode, provisioned units or None, table class, status) as the harness reports them."""
        table = self.describe(day)
        mode = (table.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
        units = None
        if mode == "PROVISIONED":
            units = (table["ProvisionedThroughput"]["ReadCapacityUnits"],
                     table["ProvisionedThroughput"]["WriteCapacityUnits"])
        table_class = (table.get("TableClassSummary") or {}).get("TableClass", "STANDARD")
        return mode, units, table_class, table["TableStatus"]

    def make_table(self, day, read=300, write=1000):
        """A period table as an earlier run created it, then the UPDATING/CREATING window let pass."""
        key_schema, definitions = self.layout.key_schema()
        self.dynamodb.create_table(
            TableName=self.name(day), KeySchema=key_schema, AttributeDefinitions=definitions,
            ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
            Tags=[{"Key": k, "Value": v} for k, v in ownership_tags(self.layout).items()],
        )
        self.proxy.advance(60)

    def updates(self):
        return [params for op, params in self.counter.params if op == "UpdateTable"]

    def pitr(self, day):
        backups = self.dynamodb.describe_continuous_backups(TableName=self.name(day))["ContinuousBackupsDescription"]
        return backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"]

    def ttl(self, day):
        return self.dynamodb.describe_time_to_live(TableName=self.name(day))["TimeToLiveDescription"]

    def tags(self, day):
        arn = self.describe(day)["TableArn"]
        return {t["Key"]: t["Value"] for t in self.dynamodb.list_tags_of_resource(ResourceArn=arn)["Tags"]}

    def lambda_time_left(self, seconds=300):
        """The remaining time of a Lambda run of ``seconds`` that starts now, on the harness clock."""
        started = self.proxy.now()
        return lambda: seconds - (self.proxy.now() - started).total_seconds()

    def block_creates_until(self, until):
        """Refuse every CreateTable until ``until``: another table CREATING until then uses the account's whole
        limit of tables changing at once (set to 1), as 500 other tables changing would."""
        usual = self.proxy.settings.create_seconds
        self.proxy.configure(create_seconds=(until - self.proxy.now()).total_seconds())
        self.proxy.client("dynamodb").create_table(  # not counted among the rotation's requests
            TableName=f"{self.prefix}-blocker-{until:%H%M%S}",  # never parses as a period table
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        )
        self.proxy.configure(create_seconds=usual, control_plane_limit=1)


class MetricLog:
    """Every EMF line of a rotation, with the harness time it was written at: what the alarms would evaluate."""

    def __init__(self, proxy, _moto_server=None):
        self.lines = EmfLines(now=proxy.now)
        self.writer = self.lines.writer()

    def values(self, metric):
        return self.lines.timed(metric)


def default_schedule(days):
    """The default schedules over ``days`` days from DAY0: create_new at 23:45 and its retry at 23:55, resize_old
    at 00:15, reconcile hourly (at :30, as a rate schedule deployed at a half hour runs), after a deploy-time run."""
    events = [("reconcile", at(0, 0, 5))]  # the deploy-time run
    for day in range(days):
        events += [("reconcile", at(day, hour, 30)) for hour in range(24)]
        events += [("resize_old", at(day, 0, 15)), ("create_new", at(day, 23, 45)), ("create_new", at(day, 23, 55))]
    events.append(("resize_old", at(days, 0, 15)))
    events += [("reconcile", at(days, hour, 30)) for hour in range(3)]
    return sorted(events, key=lambda event: event[1])


HOT = ("PROVISIONED", (300, 1000), "STANDARD", "ACTIVE")
CLOSED = ("PAY_PER_REQUEST", None, IA, "ACTIVE")


class TestOneKindOfChangePerUpdate:
    def test_a_closed_period_goes_on_demand_then_standard_ia_one_call_each_waiting_for_active(
        self, rules_proxy, unique_name
    ):
        rotation = Rotation(rules_proxy, unique_name)
        rotation.make_table(-1)
        rotation.make_table(0)
        rules_proxy.advance(3600)

        first = rotation.run("resize_old", at(0, 0, 15))
        assert rotation.tier(-1) == ("PAY_PER_REQUEST", None, "STANDARD", "UPDATING")
        assert [u for u in rotation.updates()] == [{"TableName": rotation.name(-1), "BillingMode": "PAY_PER_REQUEST"}]
        assert actions(first, "update")[0]["steps_left"] == 1

        # still UPDATING a moment later: the class change waits, reported as deferred, never an error
        second = rotation.run("reconcile", at(0, 0, 15) + timedelta(seconds=10))
        assert [a["table"] for a in actions(second, "defer")] == [rotation.name(-1)]
        assert "waits until the table is ACTIVE" in actions(second, "defer")[0]["reason"]
        assert rotation.tier(-1) == ("PAY_PER_REQUEST", None, "STANDARD", "UPDATING")
        assert len(rotation.updates()) == 1

        third = rotation.run("reconcile", at(0, 1))
        assert rotation.updates()[1:] == [{"TableName": rotation.name(-1), "TableClass": IA}]
        assert not actions(third, "error")
        rotation.proxy.advance(3600)
        assert rotation.tier(-1) == CLOSED
        assert rotation.tier(0) == HOT

        # converged: no further UpdateTable (the harness refuses no-op updates)
        rotation.run("reconcile", at(0, 3))
        assert len(rotation.updates()) == 2

    def test_billing_then_warm_throughput_then_class_each_alone_each_on_an_active_table(
        self, rules_proxy, unique_name
    ):
        warm_ia = CapacityTier.on_demand(warm_write_units_per_second=6000, table_class=IA)
        rotation = Rotation(rules_proxy, unique_name, previous=warm_ia)
        rotation.make_table(-1)
        rules_proxy.advance(3600)

        kinds = []
        for hour in range(4):  # resize_old at 00:15, then the hourly reconcile
            operation = "resize_old" if hour == 0 else "reconcile"
            report = rotation.run(operation, at(0, hour, 15))
            assert not actions(report, "error")
            kinds.append(sorted(set().union(*(set(u) - {"TableName"} for u in rotation.updates()[len(kinds):]))))
        assert kinds == [["BillingMode"], ["WarmThroughput"], ["TableClass"], []]
        assert rotation.updates()[1]["WarmThroughput"] == {"WriteUnitsPerSecond": 6000}
        rules_proxy.advance(3600)
        assert rotation.tier(-1) == CLOSED
        assert rotation.describe(-1)["WarmThroughput"]["WriteUnitsPerSecond"] == 6000

    def test_the_0_2_request_is_what_dynamodb_refuses(self, rules_proxy, unique_name):
        """The single UpdateTable 0.2 sent every night, sent as it was: refused, and the table unchanged."""
        from botocore.exceptions import ClientError

        rotation = Rotation(rules_proxy, unique_name)
        rotation.make_table(-1)
        rules_proxy.advance(3600)
        with pytest.raises(ClientError, match="TableClass modification must be the only operation in the request"):
            rotation.dynamodb.update_table(
                TableName=rotation.name(-1), BillingMode="PAY_PER_REQUEST", TableClass=IA
            )
        assert rotation.tier(-1) == HOT


class TestLimits:
    def test_a_decrease_past_the_daily_budget_waits_an_hour_and_is_then_made(self, rules_proxy, unique_name):
        rotation = Rotation(
            rules_proxy, unique_name,
            previous=CapacityTier.provisioned(100, 1), older=CapacityTier.provisioned(1, 1),
        )
        rotation.make_table(-1, 300, 1000)
        rules_proxy.set_time(at(0, 0, 1))
        for units in (900, 800, 700, 600):  # four decreases today, as someone made by hand
            rotation.dynamodb.update_table(
                TableName=rotation.name(-1),
                ProvisionedThroughput={"ReadCapacityUnits": 300, "WriteCapacityUnits": units},
            )
            rules_proxy.advance(120)
        assert rotation.describe(-1)["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 4

        report = rotation.run("resize_old", at(0, 0, 15))
        assert rotation.tier(-1)[1] == (300, 600)
        [deferred] = actions(report, "defer")
        assert "the next is allowed an hour after it" in deferred["reason"]

        rotation.run("reconcile", at(0, 1, 10))
        rules_proxy.advance(600)
        assert rotation.tier(-1) == ("PROVISIONED", (100, 1), "STANDARD", "ACTIVE")

    def test_a_switch_to_on_demand_within_24_hours_of_the_last_waits_a_day(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name)
        rotation.make_table(-1)
        rules_proxy.set_time(at(-1, 20))
        rotation.dynamodb.update_table(TableName=rotation.name(-1), BillingMode="PAY_PER_REQUEST")
        rules_proxy.advance(600)
        rotation.dynamodb.update_table(
            TableName=rotation.name(-1), BillingMode="PROVISIONED",
            ProvisionedThroughput={"ReadCapacityUnits": 300, "WriteCapacityUnits": 1000},
        )
        rules_proxy.advance(600)

        report = rotation.run("resize_old", at(0, 0, 15))
        # the class change goes ahead alone; the switch waits for its 24 hours
        assert rotation.updates()[-1] == {"TableName": rotation.name(-1), "TableClass": IA}
        assert any("switches to on-demand in 24 h" in a["reason"] for a in actions(report, "defer"))
        assert not actions(report, "error")

        rotation.run("reconcile", at(0, 20, 30))
        rules_proxy.advance(600)
        assert rotation.tier(-1) == CLOSED

    def test_a_third_class_change_in_30_days_is_never_sent(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, previous=CapacityTier.provisioned(300, 1000, table_class=IA))
        rotation.make_table(-1)
        rules_proxy.set_time(at(-5))
        for table_class in (IA, "STANDARD"):
            rotation.dynamodb.update_table(TableName=rotation.name(-1), TableClass=table_class)
            rules_proxy.advance(3600)

        report = rotation.run("resize_old", at(0, 0, 15))
        assert rotation.updates()[2:] == []
        assert any("class updates in 30 days" in a["reason"] for a in actions(report, "defer"))
        assert rotation.tier(-1) == HOT

    def test_too_many_tables_changing_in_the_account_leaves_the_table_for_the_next_run(
        self, rules_proxy, unique_name
    ):
        rotation = Rotation(rules_proxy, unique_name)
        rotation.make_table(-1)
        rotation.make_table(0)
        rules_proxy.advance(3600)
        rules_proxy.configure(control_plane_limit=1)
        rules_proxy.set_time(at(0, 0, 15))
        rotation.dynamodb.update_table(TableName=rotation.name(0), DeletionProtectionEnabled=True)  # now UPDATING

        report = rotation.run("resize_old", at(0, 0, 15))
        [deferred] = [a for a in actions(report, "defer") if a["table"] == rotation.name(-1)]
        assert deferred["reason"].startswith("LimitExceededException")
        assert rotation.tier(-1) == HOT

        rules_proxy.configure(control_plane_limit=500)
        rotation.run("reconcile", at(0, 1))
        rules_proxy.advance(600)
        assert rotation.tier(-1)[0] == "PAY_PER_REQUEST"


class TestCreateAndExpire:
    def test_a_new_table_is_waited_for_while_creating_then_gets_its_settings(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, ttl_attribute="expires")
        report = rotation.run("create_new", at(-1, 23, 45))
        assert [a["action"] for a in report["actions"]] == ["create", "enable_ttl"]
        assert rotation.tier(0) == HOT

    def test_a_right_sized_next_table_is_created_at_the_observed_peak_and_waited_for(
        self, rules_proxy, moto_server, unique_name
    ):
        from cdk_ts.testing import server_client_for

        cloudwatch = server_client_for(moto_server, "cloudwatch")
        tier = CapacityTier.provisioned(300, 1000, right_size=RightSizing(headroom=1.5, floor=5, ceiling=2000))
        rotation = Rotation(rules_proxy, unique_name, current=tier)
        rotation.make_table(-1)
        cloudwatch.put_metric_data(Namespace="AWS/DynamoDB", MetricData=[
            {"MetricName": metric, "Dimensions": [{"Name": "TableName", "Value": rotation.name(-1)}],
             "Timestamp": at(-1, 12), "Value": per_minute, "Unit": "Count"}
            for metric, per_minute in (("ConsumedWriteCapacityUnits", 48_000), ("ConsumedReadCapacityUnits", 6_000))
        ])

        report = rotation.run("create_new", at(-1, 23, 45), cloudwatch=cloudwatch)

        # peaks of 800 writes/s and 100 reads/s, times 1.5: created so, then ACTIVE within the run
        assert rotation.tier(0) == ("PROVISIONED", (150, 1200), "STANDARD", "ACTIVE")
        [sized] = actions(report, "right_size")
        assert sized["observed"] == {"read": 100.0, "write": 800.0}

    def test_an_expired_protected_table_is_unprotected_then_deleted_once_active(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, retain_periods=2, deletion_protection=True)
        rotation.make_table(-3)
        rotation.make_table(0)
        rules_proxy.advance(3600)
        rotation.dynamodb.update_table(TableName=rotation.name(-3), DeletionProtectionEnabled=True)
        rules_proxy.advance(3600)

        first = rotation.run("resize_old", at(0, 0, 15))
        assert rotation.describe(-3)["DeletionProtectionEnabled"] is False
        assert [a["reason"] for a in actions(first, "defer") if a["table"] == rotation.name(-3)] == [
            "deletion protection lifted; status UPDATING: deleted next run"
        ]
        rotation.run("reconcile", at(0, 1))
        names = rotation.dynamodb.list_tables()["TableNames"]
        assert rotation.name(-3) not in names or rotation.describe(-3)["TableStatus"] == "DELETING"


    def test_an_expired_table_is_exported_then_deleted_by_a_later_run(self, rules_proxy, moto_server, unique_name):
        from cdk_ts.testing import server_client_for

        s3 = server_client_for(moto_server, "s3")
        bucket = f"{unique_name.lower()}-archive"
        s3.create_bucket(Bucket=bucket)
        rotation = Rotation(
            rules_proxy, unique_name, retain_periods=2, archive_bucket=bucket, point_in_time_recovery=True
        )
        rotation.make_table(-3)
        rotation.make_table(0)
        rotation.dynamodb.update_continuous_backups(
            TableName=rotation.name(-3), PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
        )
        rules_proxy.advance(3600)
        report_export_time(rotation.dynamodb)  # DynamoDB reports ExportTime; moto_server does not

        first = rotation.run("resize_old", at(0, 0, 15))
        assert [a["action"] for a in first["actions"] if a["table"] == rotation.name(-3)] == ["export"]
        assert rotation.tier(-3)[3] == "ACTIVE"  # kept until the export is proven
        arn = rotation.describe(-3)["TableArn"]
        for _ in range(200):  # moto runs the export on a thread, as DynamoDB runs it asynchronously
            exports = rotation.dynamodb.list_exports(TableArn=arn)["ExportSummaries"]
            if exports and exports[0]["ExportStatus"] == "COMPLETED":
                break
            __import__("time").sleep(0.05)

        second = rotation.run("reconcile", at(0, 1))
        assert {"action": "delete", "table": rotation.name(-3), "archived": True} in second["actions"]
        assert rotation.describe(-3)["TableStatus"] == "DELETING"
        rules_proxy.advance(3600)
        assert rotation.name(-3) not in rotation.dynamodb.list_tables()["TableNames"]


class TestSingleFlight:
    def test_the_deploy_time_run_and_a_scheduled_run_at_once_one_acts_the_other_says_so(
        self, rules_proxy_dynalite, unique_name
    ):
        proxy = rules_proxy_dynalite
        rotation = Rotation(proxy, unique_name)
        lock_table = f"{unique_name}-lock"
        rotation.dynamodb.create_table(
            TableName=lock_table, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": LOCK_KEY, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": LOCK_KEY, "AttributeType": "S"}],
        )
        rotation.make_table(-1)
        proxy.advance(3600)
        proxy.set_time(at(0, 0, 15))
        reports: list = []
        barrier = threading.Barrier(2)

        def run(operation):
            lock = RunLock(dynamodb=rotation.dynamodb, table_name=lock_table, lock_id=unique_name,
                           clock=lambda: at(0, 0, 15))
            rotator = rotation.rotator(at(0, 0, 15), lock=lock)
            rotator.sleep = lambda _s: None  # the two runs share the harness clock: only real time may pass
            barrier.wait()
            reports.append(rotator.run(operation, at(0, 0, 15)))

        start_and_join(threading.Thread(target=run, args=(op,)) for op in ("reconcile", "resize_old"))

        busy = [r for r in reports if actions(r, "busy")]
        acted = [r for r in reports if not actions(r, "busy")]
        assert len(busy) == 1 and len(acted) == 1, reports
        assert [u["TableName"] for u in rotation.updates()] == [rotation.name(-1)], reports
        assert rotation.tier(-1)[0] == "PAY_PER_REQUEST"


@pytest.mark.slow  # three days of schedules through the rules proxy: ~10 s
def test_three_days_of_the_default_schedules_every_run_succeeds_or_defers_and_tables_end_in_their_tiers(
    rules_proxy, unique_name
):
    """The default RotatingTimeSeriesTables schedules: create_new at 23:45, resize_old at 00:15, reconcile hourly.

    Every control-plane rule of the harness is in force: UPDATING/CREATING windows, the decrease budget, one kind
    of change per UpdateTable, PITR refused for a while after a new table turns ACTIVE, tags that lag, TTL once an
    hour per table.
    """
    rotation = Rotation(rules_proxy, unique_name, point_in_time_recovery=True, ttl_attribute="expires_at")
    # tags lag 5 minutes (a guess): the creating run's table is its own meanwhile; a later run reads the tags
    rules_proxy.configure(update_seconds=600, create_seconds=60, backups_unavailable_seconds=120,
                          tag_lag_seconds=300)

    converged_at = {}
    deferred_steps = set()
    for operation, when in default_schedule(3):
        report = rotation.run(operation, when)  # a RotationRunError would fail the test here
        assert not actions(report, "error")
        assert not actions(report, "not_owned"), "a table this rotation created is never foreign while tags lag"
        deferred_steps |= {a.get("step") for a in actions(report, "defer")}
        for day in (0, 1, 2):
            if day not in converged_at and when >= at(day + 1) and rotation.tier(day) == CLOSED:
                converged_at[day] = when

    assert "pitr" in deferred_steps  # the backups rule did refuse, and the next runs finished the job
    for day in (0, 1, 2, 3):
        assert rotation.pitr(day) == "ENABLED"
        assert rotation.ttl(day) == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}

    for update in rotation.updates():
        assert len(set(update) - {"TableName"}) == 1 or set(update) - {"TableName"} == {
            "BillingMode", "ProvisionedThroughput"
        }, f"one kind of change per UpdateTable: {update}"
    assert rotation.tier(3) == HOT
    assert [rotation.tier(day) for day in (0, 1, 2)] == [CLOSED] * 3
    for day, when in converged_at.items():
        assert when - at(day + 1) <= timedelta(days=1), f"day {day} reached its tier only at {when}"
    assert sorted(converged_at) == [0, 1, 2]


class TestWhatSettlesAfterAMoment:
    """PITR, tags and TTL as DynamoDB settles them: a run defers what it may not do yet, the next one does it."""

    def test_pitr_refused_on_a_new_table_is_deferred_and_enabled_by_the_next_run(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, point_in_time_recovery=True, ttl_attribute="expires")

        first = rotation.run("create_new", at(-1, 23, 45))

        [deferred] = actions(first, "defer")
        assert (deferred["table"], deferred["step"]) == (rotation.name(0), "pitr")
        assert deferred["reason"].startswith("ContinuousBackupsUnavailableException: Backups are being enabled")
        assert not actions(first, "error") and not actions(first, "enable_pitr")
        assert rotation.pitr(0) == "DISABLED"
        assert [a["action"] for a in first["actions"]] == ["create", "defer", "enable_ttl"]  # TTL did not wait
        assert rotation.tier(0) == HOT

        second = rotation.run("reconcile", at(0, 0, 30))

        assert actions(second, "enable_pitr") == [{"action": "enable_pitr", "table": rotation.name(0)}]
        assert not actions(second, "defer") and not actions(second, "error")
        assert rotation.pitr(0) == "ENABLED"
        assert rotation.ttl(0) == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
        assert rotation.tier(0) == HOT

    def test_a_table_the_run_created_is_its_own_while_its_tags_lag(self, rules_proxy, unique_name):
        rules_proxy.configure(tag_lag_seconds=3600)
        rotation = Rotation(rules_proxy, unique_name, ttl_attribute="expires")

        report = rotation.run("create_new", at(-1, 23, 45))

        assert rotation.tags(0) == {}  # ListTagsOfResource still shows no tags at all
        assert [a["action"] for a in report["actions"]] == ["create", "enable_ttl"]
        assert not actions(report, "not_owned")
        assert rotation.ttl(0)["AttributeName"] == "expires"

    def test_a_table_the_run_did_not_create_needs_its_tags_even_while_they_lag(self, rules_proxy, unique_name):
        rules_proxy.configure(tag_lag_seconds=3600)
        rotation = Rotation(rules_proxy, unique_name)
        rules_proxy.set_time(at(0, 0, 5))
        rotation.make_table(-1)  # created with the rotation's tags minutes before the run: they do not show yet
        rotation.make_table(0)

        first = rotation.run("resize_old", at(0, 0, 15))

        assert rotation.name(-1) in [a["table"] for a in actions(first, "not_owned")]
        assert rotation.updates() == []
        assert rotation.tier(-1) == HOT

        second = rotation.run("reconcile", at(0, 1, 30))  # the tags show by now

        assert not actions(second, "not_owned")
        assert [u["TableName"] for u in rotation.updates()] == [rotation.name(-1)]
        assert rotation.tier(-1)[0] == "PAY_PER_REQUEST"

    def test_ttl_changed_within_the_hour_is_deferred_and_enabled_by_a_later_run(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, ttl_attribute="expires")
        rotation.make_table(0)
        rules_proxy.set_time(at(0, 0, 10))
        ttl = {"Enabled": False, "AttributeName": "old_expires"}
        rotation.dynamodb.update_time_to_live(
            TableName=rotation.name(0), TimeToLiveSpecification={**ttl, "Enabled": True}
        )
        rules_proxy.set_time(at(0, 1, 20))
        rotation.dynamodb.update_time_to_live(TableName=rotation.name(0), TimeToLiveSpecification=ttl)  # by hand
        rules_proxy.advance(600)

        first = rotation.run("reconcile", at(0, 1, 30))

        [deferred] = [a for a in actions(first, "defer") if a["table"] == rotation.name(0)]
        assert deferred["step"] == "ttl"
        assert "modified multiple times within a fixed interval" in deferred["reason"]
        assert not actions(first, "error")
        assert rotation.ttl(0) == {"TimeToLiveStatus": "DISABLED"}

        second = rotation.run("reconcile", at(0, 2, 30))

        assert actions(second, "enable_ttl") == [
            {"action": "enable_ttl", "table": rotation.name(0), "attribute": "expires"}
        ]
        rules_proxy.advance(3600)
        assert rotation.ttl(0) == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
        assert rotation.tier(0) == HOT

#: One request a call, so a refused CreateTable reaches the rotation at once: these tests are about the
#: rotation's own retries, and botocore's (5 attempts, seconds of real backoff each) would only slow them.
ONE_ATTEMPT = Config(retries={"mode": "standard", "total_max_attempts": 1})
LIMIT = "CreateTable:LimitExceededException"


def _creates_refused_until(rules_proxy, moto_server, unique_name, until: datetime) -> tuple[Rotation, MetricLog]:
    """A rotation whose creates DynamoDB refuses (LimitExceededException) until ``until``, its metrics logged.

    The harness clock is set to 23:45 of day 0, when the create_new schedule runs.
    """
    rotation = Rotation(rules_proxy, unique_name, client_config=ONE_ATTEMPT, metric_namespace="cdk-ts")
    metrics = MetricLog(rules_proxy, moto_server)
    rules_proxy.set_time(at(0, 23, 45))
    rotation.block_creates_until(until)
    return rotation, metrics


def _create_new_as_lambda(rotation: Rotation, metrics: MetricLog, when: datetime) -> dict:
    """create_new at ``when`` as the function runs it: 300 s to run, the longest jittered waits, EMF metrics."""
    return rotation.run("create_new", when, rng=lambda: 1.0, lambda_seconds=300, metrics=metrics.writer)


class TestTheNextTableBeforeItsBoundary:
    """Refused creates are tried again before the boundary; a table still missing then raises the alarm's metric."""

    def test_a_create_refused_for_a_while_is_tried_again_in_the_run_and_made(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, client_config=ONE_ATTEMPT)
        rules_proxy.set_time(at(0, 23, 45))
        rotation.block_creates_until(at(0, 23, 45) + timedelta(seconds=25))

        report = rotation.run("create_new", at(0, 23, 45), rng=lambda: 1.0, lambda_seconds=300)

        # refused at 23:45:00 and 23:45:10 (waits of 10 and 20 s), made at 23:45:30
        assert rules_proxy.stats()["refusals"][LIMIT] == 2
        [created] = actions(report, "create")
        assert (created["table"], created["attempts"]) == (rotation.name(1), 3)
        assert rotation.tier(1) == HOT
        assert not actions(report, "defer")

    def test_a_create_refused_for_the_whole_run_is_deferred_and_the_retry_run_makes_it(
        self, rules_proxy, moto_server, unique_name
    ):
        rotation, metrics = _creates_refused_until(rules_proxy, moto_server, unique_name, at(0, 23, 55))

        first = _create_new_as_lambda(rotation, metrics, at(0, 23, 45))

        # tries at 23:45:00, :10, :30, 23:46:10, 23:47:10, 23:48:10, 23:49:10; a 60 s wait would reach the margin
        [deferred] = actions(first, "defer")
        assert (deferred["table"], deferred["attempts"]) == (rotation.name(1), 7)
        assert deferred["reason"].startswith("LimitExceededException: Subscriber limit exceeded")
        assert rotation.name(1) not in rotation.dynamodb.list_tables()["TableNames"]
        assert metrics.values("NextPeriodTableMissing") == []  # not missing yet: 23:55 is the deadline

        second = _create_new_as_lambda(rotation, metrics, at(0, 23, 55))

        assert actions(second, "create")[0]["table"] == rotation.name(1)
        assert rotation.tier(1) == HOT
        assert [value for when, value in metrics.values("NextPeriodTableMissing") if when < at(1)] == [0]

    def test_a_table_still_refused_at_the_deadline_is_told_before_the_boundary(
        self, rules_proxy, moto_server, unique_name
    ):
        rotation, metrics = _creates_refused_until(rules_proxy, moto_server, unique_name, at(1, 0, 10))

        for when in (at(0, 23, 45), at(0, 23, 55)):
            _create_new_as_lambda(rotation, metrics, when)

        missing = metrics.values("NextPeriodTableMissing")
        # the retry run said so at its first refusal, 23:55, and again as it ended: both before midnight
        assert missing and all(value == 1 for _when, value in missing)
        assert missing[0][0] == at(0, 23, 55) and all(when < at(1) for when, _value in missing)
        assert rotation.name(1) not in rotation.dynamodb.list_tables()["TableNames"]

        # once DynamoDB takes creates again, the next run makes it (as the current table) and says so
        report = rotation.run("reconcile", at(1, 0, 30), metrics=metrics.writer)
        assert actions(report, "create")[0]["table"] == rotation.name(1)
        assert rotation.tier(1) == HOT

    def test_a_same_named_table_still_being_deleted_is_waited_out_not_taken_for_the_new_one(
        self, rules_proxy, unique_name
    ):
        rotation = Rotation(rules_proxy, unique_name, client_config=ONE_ATTEMPT)
        rotation.make_table(1)
        rules_proxy.set_time(at(0, 23, 45))
        rules_proxy.configure(delete_seconds=25)
        rotation.dynamodb.delete_table(TableName=rotation.name(1))  # DELETING for 25 s (someone cleaning up)

        report = rotation.run("create_new", at(0, 23, 45), rng=lambda: 1.0, lambda_seconds=300)

        # CreateTable answered ResourceInUseException while the old table was DELETING: tried again, not "exists"
        assert rules_proxy.stats()["refusals"] == {} and not actions(report, "exists")
        [created] = actions(report, "create")
        assert created["attempts"] == 3  # 23:45:00 and :10 refused by the engine, made at :30
        assert rotation.tier(1) == HOT


@pytest.mark.slow  # three days of schedules, a refused night through botocore's own retries: ~15 s
def test_three_days_of_the_default_schedules_with_creates_refused_one_night_have_every_table_before_midnight(
    rules_proxy, moto_server, unique_name
):
    """The night of day 1, CreateTable is refused for 25 s from 23:45 (its first attempts), SDK retries included."""
    rotation = Rotation(rules_proxy, unique_name, metric_namespace="cdk-ts")
    metrics = MetricLog(rules_proxy, moto_server)
    rules_proxy.configure(update_seconds=600, create_seconds=60)

    first_create_of = {}
    for operation, when in default_schedule(3):
        if when == at(1, 23, 45):
            rules_proxy.set_time(when)
            rotation.block_creates_until(when + timedelta(seconds=25))
        # a RotationRunError fails here; rng=1.0: the create's waits are 10 s, then 20 s
        report = rotation.run(operation, when, metrics=metrics.writer, rng=lambda: 1.0)
        assert not actions(report, "error")
        for created in actions(report, "create"):
            first_create_of.setdefault(created["table"], (when, created.get("attempts", 1)))
        if when == at(1, 23, 55):
            rules_proxy.configure(control_plane_limit=500)

    # the night's first two CreateTables were refused, botocore's 5 attempts each; the run's third made it
    assert rules_proxy.stats()["refusals"][LIMIT] == 2 * 5
    assert first_create_of[rotation.name(2)] == (at(1, 23, 45), 3)  # made by the 23:45 run, at its third try
    for day in (1, 2, 3):  # each next table before its midnight; otherwise the alarm's metric said 1 before it
        made_in_time = first_create_of.get(rotation.name(day), (at(day), 0))[0] < at(day)
        told = any(value == 1 and at(day) - timedelta(minutes=5) <= when < at(day)
                   for when, value in metrics.values("NextPeriodTableMissing"))
        assert made_in_time or told, (day, first_create_of, metrics.values("NextPeriodTableMissing"))
    assert all(first_create_of[rotation.name(day)][0] < at(day) for day in (1, 2, 3))
    # the alarm's inputs: every night's retry run said 0 before midnight, never 1
    assert [value for _when, value in metrics.values("NextPeriodTableMissing")] == [0, 0, 0]
    assert rotation.tier(3) == HOT
    assert [rotation.tier(day) for day in (0, 1, 2)] == [CLOSED] * 3


class TestThrottledKeysInsights:
    """Period tables get Contributor Insights in THROTTLED_KEYS mode at run time (UpdateContributorInsights)."""

    def insights(self, rotation, day):
        return rotation.dynamodb.describe_contributor_insights(TableName=rotation.name(day))

    def test_a_new_period_table_names_its_throttled_keys_and_the_next_run_leaves_it_so(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, throttled_keys_insights=True)

        first = rotation.run("reconcile", at(0, 0, 30))

        [enabled] = actions(first, "enable_contributor_insights")
        assert (enabled["table"], enabled["mode"]) == (rotation.name(0), "THROTTLED_KEYS")
        state = self.insights(rotation, 0)
        assert (state["ContributorInsightsStatus"], state["ContributorInsightsMode"]) == ("ENABLED", "THROTTLED_KEYS")
        assert [rule.split("-")[1] for rule in state["ContributorInsightsRuleList"]] == ["PKT"]
        sent = [p for op, p in rotation.counter.params if op == "UpdateContributorInsights"]
        assert sent == [{"TableName": rotation.name(0), "ContributorInsightsAction": "ENABLE",
                         "ContributorInsightsMode": "THROTTLED_KEYS"}]

        second = rotation.run("reconcile", at(0, 1, 30))
        assert not actions(second, "enable_contributor_insights")
        assert rotation.counter.calls["UpdateContributorInsights"] == 1

    def test_a_table_already_watching_every_key_is_left_in_that_mode(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name, throttled_keys_insights=True)
        rotation.make_table(0)
        rotation.dynamodb.update_contributor_insights(TableName=rotation.name(0), ContributorInsightsAction="ENABLE")

        report = rotation.run("reconcile", at(0, 0, 30))

        assert not actions(report, "enable_contributor_insights")
        assert self.insights(rotation, 0)["ContributorInsightsMode"] == "ACCESSED_AND_THROTTLED_KEYS"

    def test_without_the_switch_no_contributor_insights_call_is_made(self, rules_proxy, unique_name):
        rotation = Rotation(rules_proxy, unique_name)

        rotation.run("reconcile", at(0, 0, 30))

        assert not {"DescribeContributorInsights", "UpdateContributorInsights"} & set(rotation.counter.calls)
        assert self.insights(rotation, 0)["ContributorInsightsStatus"] == "DISABLED"
