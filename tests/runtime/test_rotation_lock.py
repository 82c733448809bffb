"""Single-flight rotation runs: the lock item, and runs that find it held, against moto and real local servers."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.config import RotationConfig
from cdk_ts_runtime._rotation.lock import (
    LOCK_EXPIRY_ATTRIBUTE,
    LOCK_KEY,
    LOCK_TABLE_ENV,
    RUN_TIMEOUT_ENV,
    LockTableMissingError,
    RunLock,
)
from cdk_ts_runtime._rotation.rotator import TableRotator
from tests.support.emf import EmfLines
from tests.support.requests import RequestCounter
from tests.support.rotation import actions, capacity, create_period_table
from tests.support.threads import start_and_join

NOW = datetime(2026, 3, 2, 0, 15, tzinfo=UTC)


def create_lock_table(dynamodb, name):
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": LOCK_KEY, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": LOCK_KEY, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 200})


@pytest.fixture
def lock_table(any_dynamodb, unique_name):
    name = f"{unique_name}-lock"
    create_lock_table(any_dynamodb, name)
    return any_dynamodb, name


def make_lock(dynamodb, table, clock=lambda: NOW, lock_id="telemetry"):
    return RunLock(dynamodb=dynamodb, table_name=table, lock_id=lock_id, clock=clock)


class TestRunLock:
    def test_a_second_run_finds_the_lock_held_and_learns_by_whom_until_it_is_released(self, lock_table):
        dynamodb, table = lock_table
        first, second = make_lock(dynamodb, table), make_lock(dynamodb, table)

        assert first.acquire("resize_old", timedelta(minutes=6)) is None
        holder = second.acquire("reconcile", timedelta(minutes=6))

        assert (holder.owner, holder.operation) == (first.owner, "resize_old")
        assert holder.expires_at == NOW + timedelta(minutes=6)
        assert first.release() is True
        assert second.acquire("reconcile", timedelta(minutes=6)) is None
        item = dynamodb.get_item(TableName=table, Key={LOCK_KEY: {"S": "telemetry"}}, ConsistentRead=True)["Item"]
        assert item["owner"]["S"] == second.owner

    def test_an_expired_lock_is_taken_over_and_its_old_owner_cannot_release_the_new_one(self, lock_table):
        dynamodb, table = lock_table
        later = [NOW]
        dead = make_lock(dynamodb, table, clock=lambda: later[0])
        assert dead.acquire("reconcile", timedelta(minutes=6)) is None

        later[0] = NOW + timedelta(minutes=6, seconds=1)
        fresh = make_lock(dynamodb, table, clock=lambda: later[0])
        assert fresh.acquire("reconcile", timedelta(minutes=6)) is None

        assert dead.release() is False
        item = dynamodb.get_item(TableName=table, Key={LOCK_KEY: {"S": "telemetry"}}, ConsistentRead=True)["Item"]
        assert item["owner"]["S"] == fresh.owner
        assert int(item[LOCK_EXPIRY_ATTRIBUTE]["N"]) == int((later[0] + timedelta(minutes=6)).timestamp())

    def test_locks_of_two_prefixes_do_not_block_each_other(self, lock_table):
        dynamodb, table = lock_table
        assert make_lock(dynamodb, table, lock_id="a").acquire("reconcile", timedelta(minutes=1)) is None
        assert make_lock(dynamodb, table, lock_id="b").acquire("reconcile", timedelta(minutes=1)) is None


def test_sixteen_runs_racing_for_the_lock_leave_exactly_one_holder(dynalite, unique_name):
    # dynalite's conditional writes are atomic, as DynamoDB's are (moto_server's are not: see test_sharding).
    from cdk_ts.testing import server_client_for

    dynamodb = server_client_for(dynalite)
    table = f"{unique_name}-lock"
    create_lock_table(dynamodb, table)
    locks = [make_lock(server_client_for(dynalite), table) for _ in range(16)]
    results: list = [None] * 16
    barrier = threading.Barrier(16)

    def race(index):
        barrier.wait()
        results[index] = locks[index].acquire("reconcile", timedelta(minutes=6))

    start_and_join(threading.Thread(target=race, args=(i,)) for i in range(16))

    winners = [lock for lock, holder in zip(locks, results, strict=True) if holder is None]
    assert len(winners) == 1
    assert {holder.owner for holder in results if holder is not None} == {winners[0].owner}


class TestRotatorWithLock:
    @pytest.fixture
    def setup(self, dynamodb):
        create_lock_table(dynamodb, "rotation-lock")
        return dynamodb

    def rotator(self, dynamodb, **options):
        env = {**TableLayout("telemetry").to_env(), LOCK_TABLE_ENV: "rotation-lock"}
        return TableRotator.from_env(env, dynamodb=dynamodb, sleep=lambda _s: None, clock=lambda: NOW, **options)

    def test_a_run_that_finds_another_acting_changes_nothing_ends_without_error_and_says_so(self, setup):
        dynamodb = setup
        other = make_lock(dynamodb, "rotation-lock")
        other.acquire("reconcile", timedelta(minutes=6))
        counter = RequestCounter(dynamodb)

        report = self.rotator(dynamodb).run("reconcile", NOW)

        [busy] = report["actions"]
        assert busy["action"] == "busy"
        assert other.owner in busy["reason"] and "changed nothing" in busy["reason"]
        assert dynamodb.list_tables()["TableNames"] == ["rotation-lock"]
        assert counter.calls["CreateTable"] == counter.calls["UpdateTable"] == counter.calls["DeleteTable"] == 0

    def test_a_run_takes_the_lock_acts_and_releases_it(self, setup):
        dynamodb = setup
        report = self.rotator(dynamodb).run("reconcile", NOW)
        assert [a["action"] for a in report["actions"]][:1] == ["create"]
        assert "Item" not in dynamodb.get_item(TableName="rotation-lock", Key={LOCK_KEY: {"S": "telemetry"}})

    def test_the_lock_is_released_when_the_run_fails(self, setup):
        dynamodb = setup
        rotator = self.rotator(dynamodb)
        rotator.reconcile = lambda when, report: (_ for _ in ()).throw(RuntimeError("boom"))
        with pytest.raises(RuntimeError, match="boom"):
            rotator.run("reconcile", NOW)
        assert "Item" not in dynamodb.get_item(TableName="rotation-lock", Key={LOCK_KEY: {"S": "telemetry"}})

    def test_the_lock_is_held_for_the_functions_time_left_plus_a_margin(self, setup, monkeypatch):
        dynamodb = setup
        seen = []
        rotator = self.rotator(dynamodb, time_left=lambda: 300.0)
        original = TableRotator.reconcile

        def look(self, when, report):  # on the run's own copy of the rotator
            seen.append(dynamodb.get_item(TableName="rotation-lock", Key={LOCK_KEY: {"S": "telemetry"}})["Item"])
            original(self, when, report)

        monkeypatch.setattr(TableRotator, "reconcile", look)
        rotator.run("reconcile", NOW)
        assert int(seen[0][LOCK_EXPIRY_ATTRIBUTE]["N"]) == int((NOW + timedelta(seconds=360)).timestamp())

    def test_a_run_asked_to_wait_takes_the_lock_once_the_other_run_releases_it(self, setup):
        dynamodb = setup
        other = make_lock(dynamodb, "rotation-lock")
        other.acquire("resize_old", timedelta(minutes=6))
        waits = []

        def sleep(seconds):
            waits.append(seconds)
            if len(waits) == 3:
                other.release()

        rotator = self.rotator(dynamodb)
        rotator.sleep = sleep
        report = rotator.run("reconcile", NOW, wait_for_lock=60)

        assert len(waits) == 3
        assert "telemetry_2026-03-02" in dynamodb.list_tables()["TableNames"]
        assert not actions(report, "busy")


class TestRunDeadline:
    def test_no_change_starts_in_the_last_seconds_of_the_run_and_the_tables_are_deferred(self, dynamodb):
        for day in (1, 2, 3):
            create_period_table(dynamodb, f"telemetry_2026-02-0{day}")
        create_period_table(dynamodb, "telemetry_2026-03-02")
        counter = RequestCounter(dynamodb)
        rotator = TableRotator(  # 100 s left until the first change is made, then 20 s: inside the 30 s margin
            TableLayout("telemetry"), RotationConfig(metric_namespace=None, max_concurrency=1), dynamodb=dynamodb,
            sleep=lambda _s: None, clock=lambda: NOW,
            time_left=lambda: 100.0 if counter.calls["UpdateTable"] == 0 else 20.0,
        )

        report = rotator.run("resize_old", NOW)

        updates = [a["table"] for a in report["actions"] if a["action"] == "update"]
        deferred = actions(report, "defer")
        assert len(updates) == 1
        assert len(deferred) == 2 and all("of the run's time left" in a["reason"] for a in deferred)
        assert sorted(capacity(dynamodb, f"telemetry_2026-02-0{d}") == "on-demand" for d in (1, 2, 3)) == [
            False, False, True,
        ]


def test_the_handler_builds_the_lock_and_the_deadline_from_the_environment_and_context(monkeypatch):
    from cdk_ts_runtime.handlers import rotation

    monkeypatch.setenv(LOCK_TABLE_ENV, "rotation-lock")
    for name, value in TableLayout("telemetry").to_env().items():
        monkeypatch.setenv(name, value)

    class Context:
        def get_remaining_time_in_millis(self):
            return 295_000

    monkeypatch.setenv(RUN_TIMEOUT_ENV, "300")
    rotator = rotation.build_rotator(__import__("os").environ, Context())
    assert (rotator.lock.table_name, rotator.lock.lock_id) == ("rotation-lock", "telemetry")
    assert rotator.lock.longest_hold == timedelta(seconds=360)  # the function's timeout plus the margin
    assert rotator.time_left() == 295.0
    assert rotator.dynamodb.meta.config.retries == {"mode": "standard", "total_max_attempts": 5}


class TestMalformedLock:
    """A lock item no run of ours could have written never blocks the rotation: it is taken over and reported.

    On dynalite: its conditional writes compare as DynamoDB's do (in-process moto raises comparing a String
    expiry with a Number).
    """

    FAR = str(int((NOW + timedelta(hours=2)).timestamp()))

    @pytest.fixture
    def setup(self, dynalite, unique_name):
        from cdk_ts.testing import server_client_for

        dynamodb = server_client_for(dynalite)
        create_lock_table(dynamodb, f"{unique_name}-lock")
        return dynamodb, unique_name

    def key(self, prefix):
        return {LOCK_KEY: {"S": prefix}}

    def put(self, dynamodb, prefix, **attributes):
        item = {**self.key(prefix), "owner": {"S": "someone"}, "operation": {"S": "reconcile"}, **attributes}
        dynamodb.put_item(TableName=f"{prefix}-lock", Item=item)
        return item

    def item(self, dynamodb, prefix):
        return dynamodb.get_item(TableName=f"{prefix}-lock", Key=self.key(prefix), ConsistentRead=True).get("Item")

    def rotator(self, dynamodb, prefix, **options):
        env = {**TableLayout(prefix).to_env(), LOCK_TABLE_ENV: f"{prefix}-lock", RUN_TIMEOUT_ENV: "300"}
        return TableRotator.from_env(env, dynamodb=dynamodb, sleep=lambda _s: None, clock=lambda: NOW, **options)

    @pytest.mark.parametrize(("expiry", "problem"), [
        ({}, "has no expires_at"),
        ({LOCK_EXPIRY_ATTRIBUTE: {"S": "tomorrow"}}, "is not a number"),
        ({LOCK_EXPIRY_ATTRIBUTE: {"N": str(NOW.timestamp() + 60.5)}}, "is not a whole number"),
        ({LOCK_EXPIRY_ATTRIBUTE: {"N": FAR}}, "further ahead than any run holds the lock (360 s"),
    ], ids=["missing", "not-a-number", "fractional", "too-far-ahead"])
    def test_is_taken_over_reported_and_the_run_acts(self, setup, expiry, problem):
        dynamodb, prefix = setup
        malformed = self.put(dynamodb, prefix, **expiry)
        seen = []
        dynamodb.meta.events.register(  # the lock item while the run acts: the run's own
            "before-call.dynamodb.ListTables", lambda **_kw: seen.append(self.item(dynamodb, prefix))
        )
        rotator = self.rotator(dynamodb, prefix, time_left=lambda: 290.0)

        report = rotator.run("resize_old", NOW)

        [taken] = actions(report, "lock_taken_over")
        assert problem in taken["reason"] and taken["item"] == malformed
        assert not actions(report, "busy")
        assert seen[0]["owner"]["S"] == rotator.lock.owner
        assert int(seen[0][LOCK_EXPIRY_ATTRIBUTE]["N"]) == int((NOW + timedelta(seconds=350)).timestamp())
        assert self.item(dynamodb, prefix) is None  # released at the end like any lock of ours

    def test_a_lock_within_the_functions_timeout_plus_the_margin_is_well_formed_and_holds(self, setup):
        dynamodb, prefix = setup
        expires = str(int((NOW + timedelta(seconds=360)).timestamp()))
        held = self.put(dynamodb, prefix, **{LOCK_EXPIRY_ATTRIBUTE: {"N": expires}})
        report = self.rotator(dynamodb, prefix).run("resize_old", NOW)
        assert [a["action"] for a in report["actions"]] == ["busy"]
        assert self.item(dynamodb, prefix) == held

    def test_a_malformed_item_changed_after_it_was_read_is_not_overwritten(self, setup):
        dynamodb, prefix = setup
        self.put(dynamodb, prefix)  # no expiry
        lock = make_lock(dynamodb, f"{prefix}-lock", lock_id=prefix)
        holder = lock.acquire("reconcile", timedelta(minutes=6))
        assert holder.problem == "it has no expires_at"
        # meanwhile another run takes the item over first
        other = make_lock(dynamodb, f"{prefix}-lock", lock_id=prefix)
        assert other.take_over(holder, "resize_old", timedelta(minutes=6)) is True

        assert lock.take_over(holder, "reconcile", timedelta(minutes=6)) is False
        item = self.item(dynamodb, prefix)
        assert (item["owner"]["S"], item["operation"]["S"]) == (other.owner, "resize_old")
        assert lock.acquire("reconcile", timedelta(minutes=6)).owner == other.owner


def test_a_missing_lock_table_is_an_error_naming_it_and_the_way_out(dynamodb):
    env = {**TableLayout("telemetry").to_env(), LOCK_TABLE_ENV: "no-such-lock-table"}
    rotator = TableRotator.from_env(env, dynamodb=dynamodb, sleep=lambda _s: None, clock=lambda: NOW)
    message = r"'no-such-lock-table' \(CDK_TS_ROTATION_LOCK_TABLE\) does not exist.*deploy the stack again.*unset "
    with pytest.raises(LockTableMissingError, match=message + "CDK_TS_ROTATION_LOCK_TABLE"):
        rotator.run("reconcile", NOW)
    assert dynamodb.list_tables()["TableNames"] == []


def test_every_run_says_in_a_metric_whether_it_found_the_lock_held(dynamodb):
    create_lock_table(dynamodb, "rotation-lock")
    lines = EmfLines()
    env = {**TableLayout("telemetry").to_env(), LOCK_TABLE_ENV: "rotation-lock"}

    def run():
        rotator = TableRotator.from_env(
            env, dynamodb=dynamodb, metrics=lines.writer(), sleep=lambda _s: None, clock=lambda: NOW
        )
        return rotator.run("reconcile", NOW)

    run()  # takes the lock: 0
    make_lock(dynamodb, "rotation-lock").acquire("resize_old", timedelta(minutes=6))
    assert [a["action"] for a in run()["actions"]] == ["busy"]  # finds it held: 1

    assert lines.values("LockHeldRuns", TablePrefix="telemetry") == [0, 1]


@pytest.mark.parametrize("raw", ["five", "0", "901", "300.5"])
def test_a_run_timeout_no_lambda_function_can_have_is_refused_by_name(raw):
    env = {**TableLayout("telemetry").to_env(), LOCK_TABLE_ENV: "rotation-lock", RUN_TIMEOUT_ENV: raw}
    message = f"CDK_TS_ROTATION_TIMEOUT_SECONDS '{raw}' must be whole seconds from 1 to 900"
    with pytest.raises(ValueError, match=message):
        TableRotator.from_env(env, dynamodb=object())
