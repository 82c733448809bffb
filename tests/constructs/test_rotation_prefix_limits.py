"""A table prefix too long for a string the construct makes from it is refused at synth, with limit and value."""

from __future__ import annotations

import functools

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template

from cdk_ts._validation import Problems
from cdk_ts.buckets import secure_bucket
from cdk_ts.rotation._texts import FUNCTION_DESCRIPTION_MAX, check_derived_texts, derived_texts, function_description
from cdk_ts.rotation.tables import RotatingTimeSeriesTables
from cdk_ts_runtime.periods import LABEL_LENGTH, TABLE_NAME_MAX, RotationPeriod
from tests.support.nag import new_app
from tests.support.problems import raises_problems
from tests.support.rotating_tables import rotation_function

PERIODS = list(RotationPeriod)


def longest_prefix_for_the_function_description(period: RotationPeriod) -> int:
    return FUNCTION_DESCRIPTION_MAX - len(function_description("", period))


@pytest.mark.parametrize("period", PERIODS)
def test_the_longest_prefix_the_function_description_allows_is_accepted(period):
    length = longest_prefix_for_the_function_description(period)
    stack = Stack(new_app(), "Test")
    RotatingTimeSeriesTables(stack, "Telemetry", table_prefix="p" * length, period=period, retain_periods=3)
    assert len(rotation_function(Template.from_stack(stack))["Description"]) == FUNCTION_DESCRIPTION_MAX


@pytest.mark.parametrize("period", PERIODS)
def test_one_character_more_is_refused_by_our_check_with_the_limit_and_the_value(period):
    length = longest_prefix_for_the_function_description(period) + 1
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError) as raised:
        RotatingTimeSeriesTables(stack, "Telemetry", table_prefix="p" * length, period=period, retain_periods=3)
    message = str(raised.value)
    # ours (construct path, prefix, limit, value, the way out), not aws-cdk-lib's "can not be longer than 256"
    assert message.startswith(f"Test/Telemetry: table_prefix '{'p' * length}' ({length} characters) makes ")
    assert f"the rotation function's description {FUNCTION_DESCRIPTION_MAX + 1} characters long" in message
    assert f"over Lambda's limit of {FUNCTION_DESCRIPTION_MAX}" in message
    assert repr(function_description("p" * length, period)) in message
    assert f"use a prefix of at most {length - 1} characters" in message
    assert stack.node.try_find_child("Telemetry") is None


@pytest.mark.parametrize("period", PERIODS)
def test_the_function_description_binds_before_the_table_name_limit(period):
    # so every period table name of an accepted prefix is a valid DynamoDB table name too
    assert longest_prefix_for_the_function_description(period) + 1 + LABEL_LENGTH[period] <= TABLE_NAME_MAX


@functools.cache
def parent() -> Stack:
    """One stack for the checks below: a Problems collector only reads its path."""
    return Stack(new_app(), "Test")


def limits(period):
    """Each derived string's name and the longest prefix it allows (every one holds the prefix once)."""
    return [(t.what, t.limit - len(t.value)) for t in derived_texts("", period, "exports/")]


@pytest.mark.parametrize(
    ("period", "what", "longest"),
    [(period, what, longest) for period in PERIODS for what, longest in limits(period)],
)
def test_every_derived_limit_accepts_its_longest_prefix_and_refuses_one_more(period, what, longest):
    def problems_about(length):
        problems = Problems(parent(), "Telemetry")
        check_derived_texts(problems, "p" * length, period, "exports/")
        return [m for m in problems.messages if f"makes {what} " in m]

    assert problems_about(longest) == []
    (refused,) = problems_about(longest + 1)
    text = next(t for t in derived_texts("p" * (longest + 1), period, "exports/") if t.what == what)
    assert f"limit of {text.limit}: {text.value!r}" in refused
    assert f"use a prefix of at most {longest} characters" in refused


def test_the_export_prefix_is_checked_only_when_tables_are_exported():
    assert not [t for t in derived_texts("p", RotationPeriod.DAILY, None) if "export" in t.what]
    assert [t for t in derived_texts("p", RotationPeriod.DAILY, "exports/") if "export" in t.what]


def test_a_long_archive_prefix_is_refused_with_the_export_limit():
    stack = Stack(new_app(), "Test")
    bucket = secure_bucket(stack, "Archive")
    with pytest.raises(ValueError, match=r"the export prefix of the longest table name 1025 characters long"):
        RotatingTimeSeriesTables(
            stack, "Telemetry", table_prefix="telemetry", retain_periods=3, archive_bucket=bucket,
            archive_prefix="a" * (1025 - len("telemetry_2026-01-01/") - 1) + "/",
        )


def test_a_prefix_too_long_for_table_names_is_told_every_limit_it_breaks_at_once():
    stack = Stack(new_app(), "Test")
    raises_problems(
        lambda: RotatingTimeSeriesTables(stack, "Telemetry", table_prefix="p" * 250), "Test/Telemetry",
        "a daily prefix needs 1-244 characters", "use a prefix of at most 220 characters",
    )
