"""``tests.support.wire.answer_error``: each protocol's error body, parsed by an unmodified botocore, is the error."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from botocore.parsers import create_parser

from tests.support import wire


def get_metric_statistics(cloudwatch):
    start = datetime(2026, 3, 1, tzinfo=UTC)
    return cloudwatch.get_metric_statistics(
        Namespace="AWS/DynamoDB", MetricName="ConsumedWriteCapacityUnits", StartTime=start, EndTime=start,
        Period=60, Statistics=["Sum"],
    )


CASES = [
    ("s3", "PutObject", lambda s3: s3.put_object(Bucket="b", Key="k", Body=b"x"), wire.S3_SLOW_DOWN),
    ("s3", "PutObject", lambda s3: s3.put_object(Bucket="b", Key="k", Body=b"x"), wire.S3_ACCESS_DENIED),
    ("cloudwatch", "GetMetricStatistics", get_metric_statistics, wire.CLOUDWATCH_ACCESS_DENIED),
    ("dynamodb", "DeleteTable", lambda ddb: ddb.delete_table(TableName="t"),
     wire.dynamodb_error("AccessDeniedException", operation="DeleteTable", table="t")),
    ("dynamodb", "DeleteTable", lambda ddb: ddb.delete_table(TableName="t"),
     wire.dynamodb_error("InternalServerError", operation="DeleteTable", table="t")),
]


@pytest.mark.parametrize(("service", "operation", "call", "error"), CASES)
def test_the_answer_is_parsed_into_its_code_message_and_status(service, operation, call, error):
    answering = wire.nowhere_client(service)
    answered = wire.answer_error(answering, operation, error)
    with pytest.raises(answering.exceptions.ClientError) as raised:
        call(answering)
    assert (raised.value.response["Error"]["Code"], raised.value.response["Error"]["Message"]) == (
        error.code, error.message)
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == error.status
    assert answered == {"answered": 1}


def test_cloudwatch_in_the_query_protocol_older_botocore_speaks_gives_the_same_error(monkeypatch):
    cloudwatch = wire.nowhere_client("cloudwatch")
    monkeypatch.setattr(wire, "protocol_of", lambda _client: "query")
    answer = wire.error_response(cloudwatch, wire.CLOUDWATCH_ACCESS_DENIED)
    assert answer.content.startswith(b'<ErrorResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/">')
    parsed = create_parser("query").parse(
        {"body": answer.content, "headers": answer.headers, "status_code": answer.status_code},
        cloudwatch.meta.service_model.operation_model("GetMetricStatistics").output_shape,
    )
    message = wire.CLOUDWATCH_ACCESS_DENIED.message
    assert parsed["Error"] == {"Type": "Sender", "Code": "AccessDenied", "Message": message}


def test_only_calls_when_accepts_are_answered():
    dynamodb = wire.nowhere_client("dynamodb")
    answered = wire.refuse_on_table(dynamodb, "DescribeTable", "refused", "AccessDeniedException")
    with pytest.raises(dynamodb.exceptions.ClientError, match="AccessDeniedException"):
        dynamodb.describe_table(TableName="refused")
    with pytest.raises(Exception, match="127.0.0.1:9"):  # sent on: nothing listens there
        dynamodb.describe_table(TableName="other")
    assert answered == {"answered": 1}


def test_an_unknown_dynamodb_code_is_refused_naming_the_cited_ones():
    with pytest.raises(ValueError, match="no cited DynamoDB answer for 'Nope'; cited: .*AccessDeniedException"):
        wire.dynamodb_error("Nope", operation="PutItem", table="t")
