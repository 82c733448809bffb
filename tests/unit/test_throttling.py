"""One classification of DynamoDB's throttles, read from wire bodies that botocore parses (bytes in, error out)."""

from __future__ import annotations

import itertools
import json

import pytest

from cdk_ts.testing._rules import wire_type
from cdk_ts_runtime._throttling import (
    ThrottledError,
    ThrottleLimit,
    ThrottleScope,
    classify_throttle,
    throttle_scope,
)
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


def expected_scope(reason: str) -> ThrottleScope:
    if reason.endswith("KeyRangeThroughputExceeded"):
        return ThrottleScope.INDEX if reason.startswith("Index") else ThrottleScope.PARTITION
    return ThrottleScope.TABLE


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
