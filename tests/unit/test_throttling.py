"""One classification of DynamoDB's throttles, read from wire bodies that botocore parses (bytes in, error out)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdk_ts.testing._rules import wire_type
from cdk_ts_runtime._throttling import (
    ThrottledError,
    ThrottleLimit,
    ThrottleScope,
    classify_throttle,
    throttle_scope,
)
from tests.support.examples import examples
from tests.support.wire import (
    account_throttle,
    on_demand_throttle,
    parse_error,
    provisioned_throttle,
)

#: Every reason of API_ThrottlingReason: ResourceType + OperationType + LimitType.
ALL_REASONS = [
    f"{resource}{operation}{limit.value}"
    for resource, operation, limit in itertools.product(("Table", "Index"), ("Read", "Write"), ThrottleLimit)
]
SHAPES = {"on-demand": on_demand_throttle, "provisioned": provisioned_throttle, "account quota": account_throttle}


DOCS = Path(__file__).resolve().parents[2] / "docs" / "constructs" / "sharding.md"
#: A row of the docs' scope table: | `scope` | the reasons, as `Table…KeyRange...` patterns | what the writer does |
_SCOPE_ROW = re.compile(r"^\| `(\w+)` \| (.+?) \|", re.MULTILINE)


def documented_patterns() -> dict[ThrottleScope, list[re.Pattern]]:
    """The reasons docs/constructs/sharding.md gives each scope, as regexes (``…`` stands for any text)."""
    rows = {}
    for scope, reasons in _SCOPE_ROW.findall(DOCS.read_text()):
        if scope in {s.value for s in ThrottleScope} and scope != ThrottleScope.UNKNOWN:
            patterns = [p for p in re.findall(r"`([^`]+)`", reasons) if "…" in p]
            rows[ThrottleScope(scope)] = [re.compile(re.escape(p).replace("…", ".*")) for p in patterns]
    return rows


def expected_scope(reason: str) -> ThrottleScope:
    """The scope the docs give ``reason``: exactly one row of their table may name it."""
    rows = documented_patterns().items()
    matching = [scope for scope, patterns in rows if any(p.fullmatch(reason) for p in patterns)]
    assert len(matching) == 1, f"docs/constructs/sharding.md gives {reason} the scopes {matching}"
    return matching[0]


def test_the_docs_scope_table_names_every_scope_but_unknown():
    assert set(documented_patterns()) == {ThrottleScope.PARTITION, ThrottleScope.INDEX, ThrottleScope.TABLE}


def test_every_index_reason_is_scoped_index_as_the_docs_say():
    for reason in ALL_REASONS:
        if reason.startswith("Index"):
            assert expected_scope(reason) is ThrottleScope.INDEX
            assert throttle_scope(parse_error(provisioned_throttle("t", reason, index="GSI1"))) is ThrottleScope.INDEX


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(ALL_REASONS), min_size=1, max_size=5), st.sampled_from(sorted(SHAPES)))
def test_any_mix_of_reasons_takes_the_documented_scope_more_shards_cure_least(reasons, shape):
    # the docs: when reasons disagree, the one more shards cure least decides (table, then index, then partition)
    precedence = [ThrottleScope.TABLE, ThrottleScope.INDEX, ThrottleScope.PARTITION]
    documented = {expected_scope(reason) for reason in reasons}
    wanted = next(scope for scope in precedence if scope in documented)
    make = SHAPES[shape]
    body = make("t", *reasons) if shape == "account quota" else make("t", *reasons, index="GSI1")
    assert throttle_scope(parse_error(body)) is wanted


def test_the_api_reference_lists_sixteen_reasons():
    assert len(set(ALL_REASONS)) == 16


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reason", ALL_REASONS)
def test_every_reason_in_every_shape_is_classified(shape, reason):
    index = "by-operator" if reason.startswith("Index") else None
    body = SHAPES[shape]("readings", reason) if shape == "account quota" else SHAPES[shape](
        "readings", reason, index=index)
    for operation in ("PutItem", "BatchWriteItem", "GetItem", "Query", "BatchGetItem"):
        throttle = classify_throttle(parse_error(body, operation))
        assert throttle is not None
        assert throttle.scope is expected_scope(reason)
        assert [r.reason for r in throttle.reasons] == [reason]
        assert throttle.sharding_helps is (throttle.scope is ThrottleScope.PARTITION)


def test_an_on_demand_hot_key_is_a_partition_throttle():
    # the answer DynamoDB sends on its default mode: ThrottlingException, reasons in throttlingReasons
    error = parse_error(on_demand_throttle("readings", "TableWriteKeyRangeThroughputExceeded"))
    assert error.response["Error"]["Code"] == "ThrottlingException"
    assert "throttlingReasons" in error.response and "ThrottlingReasons" not in error.response
    throttle = classify_throttle(error)
    assert throttle.scope is ThrottleScope.PARTITION
    assert throttle.reasons[0].resource == "arn:aws:dynamodb:us-east-1:123456789012:table/readings"
    assert throttle.reasons[0].write and not throttle.reasons[0].index


def test_an_index_reason_names_the_index_and_is_not_cured_by_shards():
    error = parse_error(on_demand_throttle("log", "IndexWriteKeyRangeThroughputExceeded", index="GSI1"))
    throttle = classify_throttle(error)
    assert throttle.scope is ThrottleScope.INDEX
    assert throttle.reasons[0].resource.endswith("table/log/index/GSI1")
    assert not throttle.sharding_helps


@pytest.mark.parametrize("limit", ["TableWriteProvisionedThroughputExceeded", "TableWriteMaxOnDemandThroughputExceeded",
                                   "TableWriteAccountLimitExceeded", "IndexWriteKeyRangeThroughputExceeded"])
def test_a_key_range_with_a_table_or_index_limit_is_not_cured_by_shards(limit):
    error = parse_error(on_demand_throttle("t", "TableWriteKeyRangeThroughputExceeded", limit, index="GSI1"))
    assert throttle_scope(error) is (ThrottleScope.INDEX if limit.startswith("Index") else ThrottleScope.TABLE)


@pytest.mark.parametrize("make", [on_demand_throttle, provisioned_throttle], ids=["on-demand", "provisioned"])
def test_a_throttle_without_reasons_is_unknown(make):
    assert throttle_scope(parse_error(make("t"))) is ThrottleScope.UNKNOWN


def test_the_account_quota_without_reasons_is_the_tables_not_a_partitions():
    assert throttle_scope(parse_error(account_throttle("t"))) is ThrottleScope.TABLE


def test_a_reason_this_version_does_not_know_is_unknown_but_kept():
    body = json.loads(on_demand_throttle("t"))
    body["throttlingReasons"] = [{"reason": "TableWriteSomethingNewExceeded", "resource": "arn"}]
    throttle = classify_throttle(parse_error(json.dumps(body).encode()))
    assert throttle.scope is ThrottleScope.UNKNOWN
    assert not throttle.reasons[0].known and throttle.reasons[0].limit is None
    assert "TableWriteSomethingNewExceeded" in throttle.describe()


def test_other_errors_are_not_throttles():
    body = json.dumps({"__type": wire_type("ConditionalCheckFailedException"),
                       "message": "The conditional request failed"}).encode()
    error = parse_error(body)
    assert classify_throttle(error) is None and throttle_scope(error) is None
    assert classify_throttle(ValueError("x")) is None


def test_throttled_error_is_still_a_client_error_and_names_the_throttle():
    error = parse_error(on_demand_throttle("t", "TableWriteMaxOnDemandThroughputExceeded"))
    raised = ThrottledError(error, 4)
    assert raised.response is error.response and raised.operation_name == "PutItem"
    assert raised.throttle.scope is ThrottleScope.TABLE
    assert str(raised) == ("PutItem still throttled after 4 attempts: "
                           "ThrottlingException (table: TableWriteMaxOnDemandThroughputExceeded)")
