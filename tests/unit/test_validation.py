"""Problems: every prop problem of one construct in one ValueError, prefixed with the construct path."""

from __future__ import annotations

import pytest
from aws_cdk import App, Stack

from cdk_ts._validation import Problems, construct_path


def test_no_problem_raises_nothing():
    problems = Problems(Stack(App(), "Stack"), "Thing")
    assert problems.check(True, "never shown")
    problems.raise_if_any()


def test_one_problem_reads_path_colon_message():
    problems = Problems(Stack(App(), "Stack"), "Thing")
    assert not problems.check(False, "batch_size 0 must be 1-10000")
    with pytest.raises(ValueError, match=r"^Stack/Thing: batch_size 0 must be 1-10000$"):
        problems.raise_if_any()


def test_a_message_given_as_a_callable_is_built_only_when_the_check_fails():
    problems = Problems(Stack(App(), "Stack"), "Thing")
    built = []

    def message(text: str):
        return lambda: built.append(text) or text

    assert problems.check(True, message("passing"))
    assert not problems.check(False, message("timeout 16 minutes must be at most 15 minutes"))

    assert built == ["timeout 16 minutes must be at most 15 minutes"]
    with pytest.raises(ValueError, match=r"^Stack/Thing: timeout 16 minutes must be at most 15 minutes$"):
        problems.raise_if_any()


def test_several_problems_are_listed_together():
    problems = Problems(Stack(App(), "Stack"), "Thing")
    problems.check(False, "first")
    problems.add("second")
    assert problems.collect(lambda: int("x")) is None
    with pytest.raises(ValueError) as raised:
        problems.raise_if_any()
    lines = str(raised.value).splitlines()
    assert lines[0] == "Stack/Thing: 3 problems:"
    assert lines[1:3] == ["  - first", "  - second"]
    assert "invalid literal for int()" in lines[3]


def test_collect_returns_what_was_built():
    problems = Problems(Stack(App(), "Stack"))
    assert problems.collect(lambda: 42) == 42
    assert problems.path == "Stack"


def test_the_path_of_a_construct_under_the_app_root_has_no_leading_slash():
    assert construct_path(App(), "Stack") == "Stack"
