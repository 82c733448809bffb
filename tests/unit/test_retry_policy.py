"""RetryPolicy and call_with_retries: decisions from answers botocore parsed, attempts as botocore counts them."""

from __future__ import annotations

import random

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from hypothesis import given
from hypothesis import strategies as st

from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._retries import Decision, Failure, RetryPolicy, call_with_retries
from cdk_ts_runtime._throttling import ThrottleScope
from tests.support.environment import REGION
from tests.support.wire import (
    answer_error,
    dynamodb_error,
    nowhere_client,
    on_demand_throttle,
    parse_error,
    provisioned_throttle,
)

THROTTLES = frozenset({"ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"})
SERVER_ERROR = frozenset({"InternalServerError"})
PUT_500 = dynamodb_error("InternalServerError", operation="PutItem", table="t")
SHARDED = RetryPolicy(max_attempts=3, base_seconds=0.05, cap_seconds=2.0, retry_codes=THROTTLES,
                      grow_scopes=frozenset({ThrottleScope.PARTITION}))


def refusal(code: str):
    """DynamoDB's ``code`` for a PutItem, parsed by botocore from the wire."""
    client = nowhere_client("dynamodb")
    answer_error(client, "PutItem", dynamodb_error(code, operation="PutItem", table="t"))
    with pytest.raises(client.exceptions.ClientError) as raised:
        client.put_item(TableName="t", Item={"k": {"S": "v"}})
    return raised.value


# ---- decisions ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "decision"), [
    (on_demand_throttle("t", "TableWriteKeyRangeThroughputExceeded"), Decision.GROW),
    (provisioned_throttle("t", "TableWriteKeyRangeThroughputExceeded"), Decision.GROW),
    (provisioned_throttle("t", "TableWriteProvisionedThroughputExceeded"), Decision.RETRY),
    (on_demand_throttle("t", "IndexWriteKeyRangeThroughputExceeded", index="by_day"), Decision.RETRY),
    # a table limit and a partition together: more shards do not cure the table's
    (on_demand_throttle("t", "TableWriteKeyRangeThroughputExceeded", "TableWriteMaxOnDemandThroughputExceeded"),
     Decision.RETRY),
    (on_demand_throttle("t"), Decision.RETRY),  # no reasons: retried; the writer asks CloudWatch whether to grow
])
def test_a_throttle_grows_only_when_its_reasons_name_one_partition_of_the_base_table(body, decision):
    assert SHARDED.decide(parse_error(body)) is decision


@pytest.mark.parametrize("code", ["ValidationException", "AccessDeniedException", "ResourceInUseException"])
def test_an_answer_outside_the_retry_codes_stops(code):
    assert SHARDED.decide(refusal(code)) is Decision.STOP


def test_codes_and_error_classes_decide_independently_of_each_other():
    policy = RetryPolicy(max_attempts=2, base_seconds=0.1, cap_seconds=1, retry_codes=SERVER_ERROR,
                         retry_errors=(EndpointConnectionError,))
    assert policy.decide(refusal("InternalServerError")) is Decision.RETRY
    assert policy.decide(EndpointConnectionError(endpoint_url="https://x")) is Decision.RETRY
    # a policy with no grow scopes never grows, even a partition's throttle it retries
    assert policy.decide(refusal("ValidationException")) is Decision.STOP
    assert RetryPolicy(max_attempts=2, base_seconds=0, cap_seconds=0, retry_codes=THROTTLES).decide(
        parse_error(on_demand_throttle("t", "TableWriteKeyRangeThroughputExceeded"))
    ) is Decision.RETRY
    assert policy.decide(ValueError("a bug")) is Decision.STOP


@pytest.mark.parametrize(("field", "value", "message"), [
    ("max_attempts", 0, "max_attempts 0 must be a whole number >= 1"),
    ("base_seconds", -1, "base_seconds"),
    ("cap_seconds", float("nan"), "cap_seconds"),
])
def test_a_policy_refuses_limits_it_cannot_run(field, value, message):
    settings = {"max_attempts": 3, "base_seconds": 0.1, "cap_seconds": 1.0, field: value}
    with pytest.raises(ValidationError, match=message):
        RetryPolicy(**settings)


# ---- backoff ------------------------------------------------------------------------------------------------------


def test_the_wait_doubles_each_attempt_until_the_cap():
    # given a policy whose jitter always draws the middle of its range
    policy = RetryPolicy(max_attempts=7, base_seconds=0.05, cap_seconds=1.0)
    # then the range doubles (0.1, 0.2, 0.4, 0.8) until the cap of 1.0 holds it
    assert [policy.delay(attempt, lambda: 0.5) for attempt in range(1, 7)] == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]


def test_without_jitter_a_policy_whose_base_is_its_cap_pauses_the_same_each_time():
    policy = RetryPolicy(max_attempts=24, base_seconds=5.0, cap_seconds=5.0, jitter=False)
    assert {policy.delay(attempt, lambda: 0.0) for attempt in range(1, 24)} == {5.0}


@given(
    attempt=st.integers(min_value=1, max_value=100_000),
    base=st.floats(min_value=0, max_value=1e6),
    cap=st.floats(min_value=0, max_value=1e6),
    draw=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_a_wait_is_never_negative_nor_longer_than_the_cap_nor_its_doubling(attempt, base, cap, draw):
    policy = RetryPolicy(max_attempts=1, base_seconds=base, cap_seconds=cap)
    wait = policy.delay(attempt, lambda: draw)
    assert 0 <= wait <= cap
    if attempt < 60:
        assert wait <= base * 2**attempt


def test_late_attempts_draw_from_the_whole_capped_range():
    policy = RetryPolicy(max_attempts=40, base_seconds=0.1, cap_seconds=5.0)
    draws = random.Random(3).random
    waits = [policy.delay(attempt, draws) for attempt in range(1, 40)]
    assert all(0 <= w < 5.0 for w in waits)
    assert max(waits) > 2.5


# ---- the helper ---------------------------------------------------------------------------------------------------


def test_attempts_are_counted_as_botocore_counts_total_max_attempts():
    # given DynamoDB answering every PutItem with a 500, a client left to botocore's standard retries of 3 attempts
    retrying = _client(Config(retries={"mode": "standard", "total_max_attempts": 3}))
    by_botocore = answer_error(retrying, "PutItem", PUT_500)
    with pytest.raises(retrying.exceptions.InternalServerError):
        retrying.put_item(TableName="t", Item={"k": {"S": "v"}})
    # and the same answer to a one-attempt client under a policy of 3 attempts
    once = nowhere_client("dynamodb")
    by_us = answer_error(once, "PutItem", PUT_500)
    slept: list[float] = []
    policy = RetryPolicy(max_attempts=3, base_seconds=0.05, cap_seconds=1, retry_codes=SERVER_ERROR)
    with pytest.raises(once.exceptions.InternalServerError):
        call_with_retries(lambda _n: once.put_item(TableName="t", Item={"k": {"S": "v"}}), policy, sleep=slept.append)
    # then both sent 3 requests, and the helper waited between them only
    assert by_botocore["answered"] == by_us["answered"] == 3
    assert len(slept) == 2


def _client(config: Config):
    return boto3.client("dynamodb", region_name=REGION, endpoint_url="http://127.0.0.1:9",
                        aws_access_key_id="testing", aws_secret_access_key="testing", config=config)


def test_a_stop_is_raised_at_once_without_a_wait_or_a_failure_hook():
    seen: list[Failure] = []
    slept: list[float] = []
    invalid = refusal("ValidationException")

    def call(_attempt):
        raise invalid

    with pytest.raises(type(invalid)) as raised:
        call_with_retries(call, SHARDED, on_failure=seen.append, sleep=slept.append)
    assert raised.value is invalid and seen == [] and slept == []


def test_each_failure_reaches_the_hook_with_its_decision_before_the_wait():
    # given a writer throttled on one partition, then by its table, then accepted
    answers = [parse_error(on_demand_throttle("t", "TableWriteKeyRangeThroughputExceeded")),
               parse_error(provisioned_throttle("t", "TableWriteProvisionedThroughputExceeded"))]
    events: list[tuple[str, object]] = []

    def call(attempt):
        events.append(("call", attempt))
        if answers:
            raise answers.pop(0)
        return "written"

    result = call_with_retries(
        call, SHARDED, on_failure=lambda f: events.append(("failed", (f.attempt, f.decision))),
        sleep=lambda s: events.append(("slept", round(s, 3))), rng=lambda: 0.5,
    )
    assert result == "written"
    assert events == [
        ("call", 1), ("failed", (1, Decision.GROW)), ("slept", 0.05),
        ("call", 2), ("failed", (2, Decision.RETRY)), ("slept", 0.1),
        ("call", 3),
    ]


def test_results_not_accepted_are_retried_and_the_last_one_is_returned_when_attempts_run_out():
    policy = RetryPolicy(max_attempts=4, base_seconds=0.01, cap_seconds=0.1)
    given_up: list[Failure] = []

    def give_up(failure):
        given_up.append(failure)
        return f"gave up after {failure.attempt}"

    assert call_with_retries(lambda n: n, policy, accept=lambda n: n == 3, sleep=lambda _s: None) == 3
    assert call_with_retries(lambda n: n, policy, accept=lambda _n: False, sleep=lambda _s: None) == 4
    assert call_with_retries(lambda n: n, policy, accept=lambda _n: False, give_up=give_up,
                             sleep=lambda _s: None) == "gave up after 4"
    assert given_up[0].result == 4 and given_up[0].error is None


def test_a_caller_without_time_for_another_wait_gives_up_after_the_current_attempt():
    policy = RetryPolicy(max_attempts=8, base_seconds=5, cap_seconds=60)
    budget = iter([True, False])
    calls: list[int] = []

    def call(attempt):
        calls.append(attempt)
        return None

    call_with_retries(call, policy, accept=lambda _r: False, may_retry=lambda: next(budget), sleep=lambda _s: None)
    assert calls == [1, 2]


@given(max_attempts=st.integers(min_value=1, max_value=30), succeeds_on=st.integers(min_value=1, max_value=40))
def test_calls_are_never_more_than_max_attempts_and_waits_only_come_between_them(max_attempts, succeeds_on):
    policy = RetryPolicy(max_attempts=max_attempts, base_seconds=0.01, cap_seconds=0.5)
    calls: list[int] = []
    slept: list[float] = []

    def call(attempt):
        calls.append(attempt)
        return attempt >= succeeds_on

    call_with_retries(call, policy, accept=bool, sleep=slept.append, rng=random.Random(max_attempts).random)
    assert calls == list(range(1, min(max_attempts, succeeds_on) + 1))
    assert len(slept) == len(calls) - 1 and all(0 <= s <= 0.5 for s in slept)
