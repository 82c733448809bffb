"""Whole-state tiers against moto: billing mode, on-demand caps, warm throughput and table class.

moto accepts and reports ``WarmThroughput``; it ignores ``OnDemandThroughput`` and ``TableClass``. Those are
asserted on the requests the rotation sends (botocore hooks), and :class:`ReportedState` adds them back to
DescribeTable answers so convergence can be observed, as DynamoDB itself would report them.
"""

from __future__ import annotations

import enum
import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from cdk_ts_runtime import _deprecations
from cdk_ts_runtime._rotation.config import Billing, CapacityTier, RightSizing, RotationConfig
from cdk_ts_runtime._rotation.tiers import tier_steps
from tests.support.rotation import ReportedState, actions, create_period_table, make_rotator
from tests.support.times import utc

IA = "STANDARD_INFREQUENT_ACCESS"
PROVISIONED = CapacityTier.provisioned(300, 1000)
ON_DEMAND = CapacityTier.pay_per_request()
CAPPED = CapacityTier.on_demand(max_read_request_units=500, max_write_request_units=2000)
WARM = CapacityTier.on_demand(warm_read_units_per_second=15000, warm_write_units_per_second=6000)
COLD_IA = CapacityTier.on_demand(max_read_request_units=50, max_write_request_units=10, table_class=IA)
PROVISIONED_IA = CapacityTier.provisioned(5, 1, table_class=IA)
KINDS = {
    "provisioned": PROVISIONED, "on-demand": ON_DEMAND, "capped": CAPPED, "warm": WARM,
    "on-demand-ia": COLD_IA, "provisioned-ia": PROVISIONED_IA,
}


def describe(dynamodb, name):
    return dynamodb.describe_table(TableName=name)["Table"]


def billing(dynamodb, name):
    return describe(dynamodb, name).get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")


class TestCreate:
    @pytest.mark.parametrize("kind", sorted(KINDS))
    def test_the_next_table_is_created_in_its_tiers_whole_state(self, dynamodb, kind):
        tier = KINDS[kind]
        reported = ReportedState(dynamodb)

        make_rotator(dynamodb, current=tier).run("create_new", utc(2026, 3, 1, 23, 45))

        [create] = [p for op, p in reported.requests if op == "CreateTable"]
        assert create["BillingMode"] == ("PAY_PER_REQUEST" if tier.is_on_demand else "PROVISIONED")
        assert create.get("TableClass", "STANDARD") == tier.table_class
        caps = {"MaxReadRequestUnits": tier.max_read_request_units,
                "MaxWriteRequestUnits": tier.max_write_request_units}
        assert create.get("OnDemandThroughput") == ({k: v for k, v in caps.items() if v} or None)
        if tier.is_on_demand:
            assert "ProvisionedThroughput" not in create
        else:
            assert create["ProvisionedThroughput"] == {"ReadCapacityUnits": tier.read_capacity,
                                                       "WriteCapacityUnits": tier.write_capacity}
        if tier.warm_write_units_per_second:
            warm = describe(dynamodb, "telemetry_2026-03-02")["WarmThroughput"]
            assert (warm["ReadUnitsPerSecond"], warm["WriteUnitsPerSecond"]) == (15000, 6000)
        # created in its state: a reconcile right after changes nothing
        reported.requests.clear()
        make_rotator(dynamodb, current=tier).run("reconcile", utc(2026, 3, 1, 23, 50))
        assert reported.updates("telemetry_2026-03-02") == []


def change_kind(update: dict) -> str:
    """Which of DynamoDB's kinds of change an UpdateTable carries: billing (with units or caps), warm, class."""
    kinds = {
        "billing" if key in ("BillingMode", "ProvisionedThroughput", "OnDemandThroughput")
        else {"WarmThroughput": "warm", "TableClass": "class"}[key]
        for key in update if key != "TableName"
    }
    assert len(kinds) == 1, f"UpdateTable {update} mixes kinds of change {sorted(kinds)}: DynamoDB refuses that"
    return kinds.pop()


class TestConvergence:
    @pytest.mark.parametrize("source", sorted(KINDS))
    @pytest.mark.parametrize("target", sorted(KINDS))
    def test_from_each_tier_kind_to_each_other_one_kind_of_change_per_run_never_a_no_op(
        self, dynamodb, source, target
    ):
        reported = ReportedState(dynamodb)
        make_rotator(dynamodb, current=KINDS[source]).run("create_new", utc(2026, 3, 1, 23, 45))
        name = "telemetry_2026-03-02"
        reported.requests.clear()

        # two days later the table is "older" and converges to the target tier, one step per hourly run
        for hour in range(4):
            make_rotator(dynamodb, current=PROVISIONED, older=KINDS[target]).run(
                "reconcile", utc(2026, 3, 4, hour, 5)
            )

        updates = reported.updates(name)
        kinds = [change_kind(u) for u in updates]
        assert kinds == sorted(kinds, key=["billing", "warm", "class"].index), "billing, then warm, then class"
        assert len(kinds) == len(set(kinds)) <= 3
        final = describe(dynamodb, name)
        tier = KINDS[target]
        assert billing(dynamodb, name) == ("PAY_PER_REQUEST" if tier.is_on_demand else "PROVISIONED")
        assert final.get("TableClassSummary", {}).get("TableClass", "STANDARD") == tier.table_class
        if tier.is_on_demand:
            caps = final.get("OnDemandThroughput", {})
            assert caps.get("MaxReadRequestUnits") == tier.max_read_request_units
            assert caps.get("MaxWriteRequestUnits") == tier.max_write_request_units
        else:
            throughput = final["ProvisionedThroughput"]
            assert (throughput["ReadCapacityUnits"], throughput["WriteCapacityUnits"]) == (
                tier.read_capacity, tier.write_capacity)
        if tier.warm_write_units_per_second:
            assert final["WarmThroughput"]["WriteUnitsPerSecond"] >= tier.warm_write_units_per_second
        assert tier_steps(final, tier) == []
        # converged: the next run sends nothing
        reported.requests.clear()
        make_rotator(dynamodb, current=PROVISIONED, older=KINDS[target]).run("resize_old", utc(2026, 3, 4, 5, 15))
        assert reported.updates(name) == []

    def test_warm_throughput_is_raised_never_lowered_and_only_the_rising_dimension_is_sent(self, dynamodb):
        reported = ReportedState(dynamodb)
        make_rotator(dynamodb, current=WARM).run("create_new", utc(2026, 3, 1, 23, 45))
        reported.requests.clear()
        older = CapacityTier.on_demand(warm_read_units_per_second=13000, warm_write_units_per_second=9000)

        make_rotator(dynamodb, current=PROVISIONED, older=older).run("resize_old", utc(2026, 3, 4, 0, 15))

        [update] = reported.updates("telemetry_2026-03-02")
        assert update["WarmThroughput"] == {"WriteUnitsPerSecond": 9000}
        warm = describe(dynamodb, "telemetry_2026-03-02")["WarmThroughput"]
        assert (warm["ReadUnitsPerSecond"], warm["WriteUnitsPerSecond"]) == (15000, 9000)

    def test_a_cap_the_tier_no_longer_has_is_removed(self, dynamodb):
        reported = ReportedState(dynamodb)
        make_rotator(dynamodb, current=CAPPED).run("create_new", utc(2026, 3, 1, 23, 45))
        reported.requests.clear()

        make_rotator(dynamodb, current=PROVISIONED, older=ON_DEMAND).run("resize_old", utc(2026, 3, 4, 0, 15))

        [update] = reported.updates("telemetry_2026-03-02")
        assert update["OnDemandThroughput"] == {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}


class TestLimits:
    RESIZE = utc(2026, 3, 3, 0, 15)  # telemetry_2026-03-01 is older from here on

    @staticmethod
    def older_table_reporting(dynamodb, read, write, summary) -> ReportedState:
        """telemetry_2026-03-01 at ``read``/``write``, whose DescribeTable adds ``summary`` (a recent change)."""
        reported = ReportedState(dynamodb)
        create_period_table(dynamodb, "telemetry_2026-03-01", read=read, write=write)
        reported.overrides["telemetry_2026-03-01"] = summary
        return reported

    def test_a_second_switch_to_on_demand_within_24_hours_is_deferred_not_failed(self, dynamodb):
        when = self.RESIZE
        reported = self.older_table_reporting(
            dynamodb, 300, 1000,
            {"BillingModeSummary": {"LastUpdateToPayPerRequestDateTime": when - timedelta(hours=3)}},
        )

        report = make_rotator(dynamodb, older=COLD_IA).run("resize_old", when)

        [update] = reported.updates("telemetry_2026-03-01")
        assert update == {"TableName": "telemetry_2026-03-01", "TableClass": IA}
        [defer] = actions(report, "defer")
        assert "4 switches to on-demand in 24 h" in defer["reason"]
        assert billing(dynamodb, "telemetry_2026-03-01") == "PROVISIONED"

        # a day later the switch is made
        reported.overrides.clear()
        make_rotator(dynamodb, older=COLD_IA).run("resize_old", when + timedelta(days=1))
        assert billing(dynamodb, "telemetry_2026-03-01") == "PAY_PER_REQUEST"

    def test_a_class_change_within_30_days_of_the_last_is_deferred_not_failed(self, dynamodb):
        when = self.RESIZE
        reported = self.older_table_reporting(
            dynamodb, 1, 1, {"TableClassSummary": {"LastUpdateDateTime": when - timedelta(days=10)}}
        )

        report = make_rotator(dynamodb, older=CapacityTier.provisioned(1, 1, table_class=IA)).run("resize_old", when)

        assert reported.updates("telemetry_2026-03-01") == []
        [defer] = actions(report, "defer")
        assert "2 class updates in 30 days" in defer["reason"]
        assert not actions(report, "error")

    def test_switching_on_demand_back_to_provisioned_is_never_held_back(self, dynamodb):
        reported = ReportedState(dynamodb)
        make_rotator(dynamodb, current=ON_DEMAND).run("create_new", utc(2026, 3, 1, 23, 45))
        reported.overrides["telemetry_2026-03-02"] = {
            "BillingModeSummary": {"LastUpdateToPayPerRequestDateTime": datetime(2026, 3, 3, 23, tzinfo=UTC)}
        }

        make_rotator(dynamodb, older=PROVISIONED_IA).run("resize_old", utc(2026, 3, 4, 0, 15))

        [update] = reported.updates("telemetry_2026-03-02")
        assert update["BillingMode"] == "PROVISIONED" and "TableClass" not in update
        make_rotator(dynamodb, older=PROVISIONED_IA).run("reconcile", utc(2026, 3, 4, 1, 5))
        assert reported.updates("telemetry_2026-03-02")[1] == {"TableName": "telemetry_2026-03-02", "TableClass": IA}


def test_tier_config_round_trips_through_the_environment():
    config = RotationConfig(current=WARM, previous=CAPPED, older=COLD_IA)
    assert RotationConfig.from_env({"CDK_TS_ROTATION_CONFIG": config.to_json()}) == config


def test_the_wire_form_stays_0_2s_on_demand_flag_so_either_release_reads_the_other():
    # a function of the previous release may read this config while a deploy (or a rollback) is under way
    config = RotationConfig(current=CapacityTier.provisioned(5, 5), previous=CapacityTier.pay_per_request())
    wire = json.loads(config.to_json())
    assert wire["current"]["on_demand"] is False and wire["previous"]["on_demand"] is True
    assert "billing" not in wire["current"]


def test_a_0_2_tier_and_a_billing_tier_both_read():
    old = {"on_demand": True, "table_class": "STANDARD_INFREQUENT_ACCESS"}
    new = {"billing": "PAY_PER_REQUEST", "table_class": "STANDARD_INFREQUENT_ACCESS"}
    expected = CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")
    assert CapacityTier.from_dict(old) == CapacityTier.from_dict(new) == expected
    provisioned = CapacityTier.from_dict({"read_capacity": 1, "write_capacity": 2, "on_demand": False})
    assert provisioned.billing is Billing.PROVISIONED
    with pytest.raises(ValueError, match="both on_demand and billing"):
        CapacityTier.from_dict({**old, "billing": "PAY_PER_REQUEST"})
    with pytest.raises(ValueError, match="billing 'HOURLY' is not one of PROVISIONED, PAY_PER_REQUEST"):
        CapacityTier.from_dict({"billing": "HOURLY"})


def test_billing_is_a_plain_field_the_factories_set():
    assert CapacityTier.provisioned(1, 1).billing is Billing.PROVISIONED
    assert CapacityTier.on_demand().billing is Billing.ON_DEMAND
    assert CapacityTier.pay_per_request() == CapacityTier(billing=Billing.ON_DEMAND)
    assert CapacityTier.pay_per_request().is_on_demand and not CapacityTier.provisioned(1, 1).is_on_demand
    assert "billing=<Billing.ON_DEMAND" in repr(CapacityTier.pay_per_request())


def test_reading_on_demand_on_a_tier_still_answers_the_flag_with_the_registry_s_warning():
    message = _deprecations.entry("cdk_ts.CapacityTier.on_demand").message
    assert "tier.is_on_demand" in message and "0.4.0" in message
    with pytest.warns(DeprecationWarning, match=re.escape(message)) as caught:
        assert CapacityTier.pay_per_request().on_demand is True
    assert [w.filename for w in caught] == [__file__]
    with pytest.warns(DeprecationWarning):
        assert CapacityTier.provisioned(1, 1).on_demand is False


class _CdkStyleTableClass(enum.Enum):  # what a jsii enum is: members whose value is the name
    STANDARD_INFREQUENT_ACCESS = "STANDARD_INFREQUENT_ACCESS"


@pytest.mark.parametrize("given", ["STANDARD_INFREQUENT_ACCESS", _CdkStyleTableClass.STANDARD_INFREQUENT_ACCESS])
def test_a_tier_takes_the_table_class_as_a_name_or_an_enum_and_stores_the_name(given):
    for tier in (CapacityTier.on_demand(table_class=given), CapacityTier.provisioned(1, 1, table_class=given)):
        assert tier.table_class == "STANDARD_INFREQUENT_ACCESS" and type(tier.table_class) is str
        assert tier == CapacityTier.from_dict(json.loads(json.dumps(tier.to_dict())))


def test_a_tier_takes_aws_cdks_own_table_class_enum():
    dynamodb = pytest.importorskip("aws_cdk.aws_dynamodb")
    tier = CapacityTier.on_demand(table_class=dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS)
    assert tier == CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: CapacityTier.on_demand(table_class="GLACIER"), "table_class 'GLACIER' is not one of"),
        (lambda: CapacityTier.on_demand(max_write_request_units=0), "max_write_request_units 0 must be"),
        (lambda: CapacityTier.on_demand(warm_read_units_per_second=-5), "warm_read_units_per_second -5 must be"),
        (lambda: CapacityTier(read_capacity=1, write_capacity=1, max_read_request_units=5),
         "max_read_request_units 5 is an on-demand cap"),
        (lambda: CapacityTier.on_demand(right_size="yes"), "right_size 'yes' must be"),
    ],
)
def test_invalid_tiers_name_the_bad_value(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_both_factories_take_the_same_table_options():
    options = {"warm_read_units_per_second": 15000, "warm_write_units_per_second": 6000, "table_class": IA}

    provisioned = CapacityTier.provisioned(300, 1000, right_size=True, **options)
    on_demand = CapacityTier.on_demand(right_size=True, **options)

    for tier in (provisioned, on_demand):
        assert (tier.warm_read_units_per_second, tier.warm_write_units_per_second) == (15000, 6000)
        assert (tier.table_class, tier.right_sizing) == (IA, RightSizing())
    assert CapacityTier.on_demand() == CapacityTier.pay_per_request()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: CapacityTier.on_demand(warm_reads=5),
            "CapacityTier.on_demand(): unknown keyword argument 'warm_reads'; the keywords are max_read_request_units, "
            "max_write_request_units, right_size, table_class, warm_read_units_per_second, warm_write_units_per_second",
        ),
        (
            lambda: CapacityTier.on_demand(warm_read_unit_per_second=5),
            "CapacityTier.on_demand(): unknown keyword argument 'warm_read_unit_per_second'; "
            "did you mean 'warm_read_units_per_second'?",
        ),
        (  # the factory's own parameters are suggested too
            lambda: CapacityTier.on_demand(max_read_units=5),
            "CapacityTier.on_demand(): unknown keyword argument 'max_read_units'; "
            "did you mean 'max_read_request_units'?",
        ),
        (  # CapacityTier's own fields are not options: they would bypass the factory
            lambda: CapacityTier.provisioned(300, 1000, on_demand=True, colour="blue"),
            "CapacityTier.provisioned(): unknown keyword argument 'colour'; the keywords are auto_scaling, read, "
            "right_size, table_class, warm_read_units_per_second, warm_write_units_per_second, write; "
            "unknown keyword argument 'on_demand'; the keywords are",
        ),
        (
            lambda: CapacityTier.provisioned(300, 1000, right_sizing=RightSizing()),
            "CapacityTier.provisioned(): unknown keyword argument 'right_sizing'; did you mean 'right_size'?",
        ),
    ],
)
def test_an_unknown_table_option_is_named_with_the_way_out(build, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        build()


def test_a_positional_argument_too_many_names_the_public_factory():
    with pytest.raises(TypeError, match=r"^CapacityTier\.on_demand\(\) takes"):
        CapacityTier.on_demand(None, None, 13000)


def test_by_default_closed_periods_become_on_demand_then_standard_ia_in_two_runs(dynamodb):
    reported = ReportedState(dynamodb)
    create_period_table(dynamodb, "telemetry_2026-03-01")
    create_period_table(dynamodb, "telemetry_2026-03-02")

    make_rotator(dynamodb).run("resize_old", utc(2026, 3, 2, 0, 15))

    # DynamoDB refuses a class change with anything else in one UpdateTable: billing first, alone
    assert reported.updates("telemetry_2026-03-01") == [
        {"TableName": "telemetry_2026-03-01", "BillingMode": "PAY_PER_REQUEST"}
    ]
    assert billing(dynamodb, "telemetry_2026-03-01") == "PAY_PER_REQUEST"
    assert reported.updates("telemetry_2026-03-02") == []
    # the hourly reconcile makes the class change, alone
    make_rotator(dynamodb).run("reconcile", utc(2026, 3, 2, 1, 0))
    assert reported.updates("telemetry_2026-03-01")[1:] == [{"TableName": "telemetry_2026-03-01", "TableClass": IA}]
    # a day later the table is older: same tier, nothing to send (no second class change)
    reported.requests.clear()
    make_rotator(dynamodb).run("resize_old", utc(2026, 3, 3, 0, 15))
    assert reported.updates("telemetry_2026-03-01") == []


@pytest.mark.parametrize(
    ("option", "start"), [("warm_read_units_per_second", 12000), ("warm_write_units_per_second", 4000)]
)
def test_on_demand_warm_throughput_a_new_table_already_has_is_refused_with_the_limit(option, start):
    # developer guide, "Understanding DynamoDB warm throughput": a new on-demand table starts at 12,000 reads
    # and 4,000 writes per second, and warm throughput is never lowered
    with pytest.raises(ValueError, match=f"{option} {start} on an on-demand tier"):
        CapacityTier.on_demand(**{option: start})
    with pytest.raises(ValueError, match=f"already starts at {start:,} per second"):
        CapacityTier.on_demand(**{option: 5})


def test_on_demand_warm_throughput_above_the_start_and_any_provisioned_value_are_accepted():
    assert CapacityTier.on_demand(warm_read_units_per_second=12001).warm_read_units_per_second == 12001
    assert CapacityTier.on_demand(warm_write_units_per_second=4001).warm_write_units_per_second == 4001
    # provisioned tables take any value from 1 (hashicorp/terraform-provider-aws#49894)
    assert CapacityTier.provisioned(5, 5, warm_read_units_per_second=1).warm_read_units_per_second == 1
