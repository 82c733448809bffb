"""Right-sizing against moto: the next table follows the current one's peak in CloudWatch (put_metric_data)."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG, CapacityTier, RightSizing, RotationConfig
from cdk_ts_runtime.handlers import rotation
from tests.support.requests import RequestCounter
from tests.support.rotation import PREFIX, OnTimeRotator, ReportedState, actions, create_period_table
from tests.support.times import utc
from tests.support.wire import CLOUDWATCH_ACCESS_DENIED, answer_error

WHEN = utc(2026, 3, 1, 23, 45)
CURRENT = "telemetry_2026-03-01"
NEXT = "telemetry_2026-03-02"


@pytest.fixture
def cloudwatch(aws):
    return boto3.client("cloudwatch", region_name="us-east-1")


def rotator(dynamodb, cloudwatch, tier):
    return OnTimeRotator(
        TableLayout(PREFIX), RotationConfig(current=tier, metric_namespace=None), dynamodb=dynamodb,
        autoscaling=boto3.client("application-autoscaling", region_name="us-east-1"),
        cloudwatch=cloudwatch, sleep=lambda _s: None,
    )


def consumed(cloudwatch, table, metric, sums_by_minute):
    """Per-minute Sums of a consumed-capacity metric, as DynamoDB publishes them."""
    cloudwatch.put_metric_data(Namespace="AWS/DynamoDB", MetricData=[
        {"MetricName": metric, "Dimensions": [{"Name": "TableName", "Value": table}],
         "Timestamp": utc(2026, 3, 1) + timedelta(minutes=minute), "Value": value, "Unit": "Count"}
        for minute, value in sums_by_minute.items()
    ])


def provisioned_units(dynamodb, name):
    throughput = dynamodb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    return throughput["ReadCapacityUnits"], throughput["WriteCapacityUnits"]


def sizing_report(report):
    [entry] = actions(report, "right_size")
    return entry


def test_a_provisioned_tier_is_sized_to_the_observed_peak_times_headroom(dynamodb, cloudwatch):
    create_period_table(dynamodb, CURRENT)
    # per-minute Sums: the write peak is 60,000 in a minute = 1,000/s; reads peak at 6,000 = 100/s
    consumed(cloudwatch, CURRENT, "ConsumedWriteCapacityUnits", {60: 30_000, 600: 60_000, 1200: 12_000})
    consumed(cloudwatch, CURRENT, "ConsumedReadCapacityUnits", {60: 6_000, 700: 600})
    tier = CapacityTier.provisioned(300, 1000, right_size=RightSizing(headroom=1.3, floor=5, ceiling=1200))

    report = rotator(dynamodb, cloudwatch, tier).run("create_new", WHEN)

    # 100/s × 1.3 = 130 RCU; 1,000/s × 1.3 = 1,300 WCU, bounded by the ceiling 1,200
    assert provisioned_units(dynamodb, NEXT) == (130, 1200)
    entry = sizing_report(report)
    assert entry["observed"] == {"read": 100.0, "write": 1000.0}
    assert entry["observed_table"] == CURRENT and entry["chosen"] == "130/1200"
    # the sized table is left at its size by a later reconcile (inside floor..ceiling)
    counter = RequestCounter(dynamodb)
    rotator(dynamodb, cloudwatch, tier).run("reconcile", WHEN + timedelta(minutes=5))
    assert counter.calls["UpdateTable"] == 0


def test_an_on_demand_tier_gets_the_peak_as_warm_throughput(dynamodb, cloudwatch):
    create_period_table(dynamodb, CURRENT)
    consumed(cloudwatch, CURRENT, "ConsumedWriteCapacityUnits", {60: 600_000})  # 10,000/s
    consumed(cloudwatch, CURRENT, "ConsumedReadCapacityUnits", {60: 60_000})  # 1,000/s: below 12,000 warm
    reported = ReportedState(dynamodb)

    report = rotator(dynamodb, cloudwatch, CapacityTier.on_demand(right_size=True)).run("create_new", WHEN)

    [create] = [p for op, p in reported.requests if op == "CreateTable"]
    assert create["BillingMode"] == "PAY_PER_REQUEST"
    assert create["WarmThroughput"] == {"WriteUnitsPerSecond": 13000}
    assert sizing_report(report)["observed"] == {"read": 1000.0, "write": 10000.0}


def test_without_data_points_the_configured_tier_is_used(dynamodb, cloudwatch):
    report = rotator(dynamodb, cloudwatch, CapacityTier.provisioned(300, 1000, right_size=True)).run(
        "create_new", WHEN)

    assert provisioned_units(dynamodb, NEXT) == (300, 1000)
    assert "no consumed-capacity data points" in sizing_report(report)["reason"]


def test_when_cloudwatch_is_denied_the_configured_tier_is_used_and_the_run_succeeds(dynamodb, cloudwatch):
    denied = answer_error(cloudwatch, "GetMetricStatistics", CLOUDWATCH_ACCESS_DENIED)

    report = rotator(dynamodb, cloudwatch, CapacityTier.provisioned(300, 1000, right_size=True)).run(
        "create_new", WHEN)

    assert denied == {"answered": 1}
    assert provisioned_units(dynamodb, NEXT) == (300, 1000)
    assert sizing_report(report)["reason"].startswith("AccessDenied")
    assert not actions(report, "error")


def test_an_existing_next_table_is_not_sized_again(dynamodb, cloudwatch):
    create_period_table(dynamodb, NEXT)
    counter = RequestCounter(cloudwatch)

    rotator(dynamodb, cloudwatch, CapacityTier.provisioned(300, 1000, right_size=True)).run("create_new", WHEN)

    assert counter.calls["GetMetricStatistics"] == 0


def test_the_handler_gives_a_right_sizing_rotator_a_cloudwatch_client_even_without_metrics(aws):
    config = RotationConfig(current=CapacityTier.on_demand(right_size=True), metric_namespace=None)
    env = {**TableLayout(PREFIX).to_env(), ENV_ROTATION_CONFIG: config.to_json()}
    assert rotation.build_rotator(env).cloudwatch is not None
    plain = {**TableLayout(PREFIX).to_env(), ENV_ROTATION_CONFIG: RotationConfig(metric_namespace=None).to_json()}
    assert rotation.build_rotator(plain).cloudwatch is None


def test_only_the_current_tier_may_be_right_sized():
    with pytest.raises(ValueError, match="older tier on-demand has right_sizing; only the current tier is sized"):
        RotationConfig(older=CapacityTier.on_demand(right_size=True))


def test_without_a_cloudwatch_client_the_configured_tier_is_used(dynamodb):
    report = rotator(dynamodb, None, CapacityTier.provisioned(300, 1000, right_size=True)).run("create_new", WHEN)

    assert provisioned_units(dynamodb, NEXT) == (300, 1000)
    assert sizing_report(report)["reason"] == "no CloudWatch client: the configured tier"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "12", None, True])
def test_an_answer_that_is_not_a_finite_non_negative_number_counts_as_missing(dynamodb, cloudwatch, bad):
    # CloudWatch itself refuses NaN and infinities on input; the hook stands for an answer we cannot trust
    consumed(cloudwatch, CURRENT, "ConsumedWriteCapacityUnits", {60: 60_000})

    def corrupt(parsed, **_kwargs):
        for point in parsed.get("Datapoints", []):
            point["Sum"] = bad

    cloudwatch.meta.events.register("after-call.cloudwatch.GetMetricStatistics", corrupt)
    report = rotator(dynamodb, cloudwatch, CapacityTier.provisioned(300, 1000, right_size=True)).run(
        "create_new", WHEN)

    assert provisioned_units(dynamodb, NEXT) == (300, 1000)
    assert "no consumed-capacity data points" in sizing_report(report)["reason"]


def test_a_negative_sum_counts_as_missing(dynamodb, cloudwatch):
    consumed(cloudwatch, CURRENT, "ConsumedWriteCapacityUnits", {60: -60_000})

    report = rotator(dynamodb, cloudwatch, CapacityTier.provisioned(300, 1000, right_size=True)).run(
        "create_new", WHEN)

    assert provisioned_units(dynamodb, NEXT) == (300, 1000)
    assert "no consumed-capacity data points" in sizing_report(report)["reason"]


def test_an_unreachable_cloudwatch_endpoint_leaves_the_configured_tier_and_the_table_is_created(dynamodb):
    # as in a VPC without a CloudWatch endpoint: nothing listens there, so the connection is refused
    from cdk_ts.testing._engines import free_port
    from cdk_ts_runtime._retries import METRICS

    unreachable = boto3.client(
        "cloudwatch", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{free_port()}", config=METRICS
    )
    report = rotator(dynamodb, unreachable, CapacityTier.provisioned(300, 1000, right_size=True)).run(
        "create_new", WHEN)

    assert provisioned_units(dynamodb, NEXT) == (300, 1000)
    assert sizing_report(report)["reason"] == "no answer from CloudWatch (EndpointConnectionError): the configured tier"
    assert not actions(report, "error")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: RightSizing(headroom=float("nan")), "headroom nan must be a finite number >= 1"),
        (lambda: RightSizing(headroom=float("inf")), "headroom inf must be a finite number >= 1"),
        (lambda: RightSizing(headroom=-2), "headroom -2 must be a finite number >= 1"),
        (lambda: RightSizing(floor=-1), "floor -1 must be a whole number >= 1"),
        (lambda: RightSizing(ceiling=float("inf")), "ceiling inf must be a whole number >= 1"),
    ],
)
def test_sizing_numbers_that_are_not_finite_or_are_negative_are_refused_when_the_tier_is_built(build, message):
    with pytest.raises(ValueError, match=message):
        build()
