"""The base classes that replaced the mixins: a construct missing what its base needs is refused when it is made."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam

from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._binding import BindableConstruct
from cdk_ts._single_table import SingleTableConstruct
from tests.support.nag import new_app


class _NoDefaults(AlarmingConstruct):
    pass


class _OneAlarm(AlarmingConstruct):
    made = 0

    def _create_default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        _OneAlarm.made += 1
        metric = cloudwatch.Metric(namespace="test", metric_name="Errors")
        return {"errors": self._alarm_above("ErrorsAlarm", metric, "errors")}


class _NoEnvironment(BindableConstruct):
    def grant_read_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        raise AssertionError("not called")

    grant_write_data = grant_read_write_data = grant_read_data


class _NoThrottleMetric(SingleTableConstruct):
    binding_environment = {}  # noqa: RUF012
    grant_read_data = grant_write_data = grant_read_write_data = _NoEnvironment.grant_read_data


@pytest.mark.parametrize(
    ("cls", "missing"),
    [
        (_NoDefaults, "_create_default_alarms"),
        (_NoEnvironment, "binding_environment"),
        (_NoThrottleMetric, "metric_throttled_requests"),
    ],
)
def test_a_construct_missing_a_member_its_base_needs_cannot_be_made(cls, missing):
    stack = Stack(new_app(), "S")
    with pytest.raises(TypeError, match=rf"abstract.*{missing}"):
        cls(stack, "C")


def test_the_alarm_book_is_made_with_the_construct_and_makes_the_defaults_once():
    # given a construct with one default alarm, made with no init call of its own
    stack = Stack(new_app(), "S")
    construct = _OneAlarm(stack, "C")
    assert construct.alarms == {}
    # when its defaults are asked for twice
    first = construct.add_default_alarms()
    again = construct.add_default_alarms()
    # then they were made once, and the same alarm comes back
    assert _OneAlarm.made == 1
    assert first == again == construct.alarms
    assert list(first) == ["errors"]
