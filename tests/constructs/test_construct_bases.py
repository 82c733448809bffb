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
    made_before = _OneAlarm.made
    # when its defaults are asked for twice
    first = construct.add_default_alarms()
    again = construct.add_default_alarms()
    # then they were made once, and the same alarm comes back
    assert _OneAlarm.made == made_before + 1
    assert first == again == construct.alarms
    assert list(first) == ["errors"]


class _Data(BindableConstruct):
    def __init__(self, scope, construct_id, name, *, flavour):
        super().__init__(scope, construct_id)
        self.name, self.flavour = name, flavour

    @property
    def binding_environment(self) -> dict[str, str]:
        return {"NAME": self.name}

    grant_read_data = grant_write_data = grant_read_write_data = _NoEnvironment.grant_read_data


class _DataWithAlarms(AlarmingConstruct, _Data):
    _create_default_alarms = _OneAlarm._create_default_alarms


def test_alarms_first_beside_a_data_base_pass_its_arguments_on_and_keep_both():
    # given an owning construct shaped like RotatingTimeSeriesTables(AlarmingConstruct, RotatingTimeSeriesTablesBase)
    stack = Stack(new_app(), "S")
    construct = _DataWithAlarms(stack, "C", "readings", flavour="weekly")
    # then the data base got its arguments and the alarm book exists without an init call
    assert (construct.name, construct.flavour) == ("readings", "weekly")
    assert construct.binding_environment == {"NAME": "readings"}
    assert list(construct.add_default_alarms()) == ["errors"]
    assert stack.node.find_child("C").node.find_child("ErrorsAlarm") is construct.alarms["errors"]
