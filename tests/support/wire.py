"""DynamoDB's answers as bytes on the wire, parsed by botocore: how tests meet a throttle without a proxy.

A test never builds a ``ClientError`` dict by hand: a hand-made dict can claim a shape DynamoDB never sends
(the reasons under the wrong member, the wrong exception for the billing mode). Here a cited wire body goes
in and botocore, unmodified, parses it exactly as it parses DynamoDB's answers: a ``before-send`` handler
answers the request with the body (botocore's documented way to short-circuit sending), so the client's own
parser, modeled-error fields and retries all run.

Sources of the shapes and texts:
- botocore's DynamoDB service model (2012-08-10): ``ThrottlingException`` has the members ``message`` and
  ``throttlingReasons``; ``ProvisionedThroughputExceededException`` and ``RequestLimitExceeded`` have
  ``message`` and ``ThrottlingReasons``; a ``ThrottlingReason`` is ``{"reason", "resource"}``.
- The messages are the ones the same model documents under TransactionCanceledException ("Throttling Error",
  "Provisioned Throughput Exceeded"). A real on-demand answer quoted in awslabs/dynein#195 (2024, before the
  reasons existed) shows the wire form: ``"__type":"com.amazon.coral.availability#ThrottlingException"`` and
  the hot-key message without a final full stop.
- Reasons: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html
"""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Callable

import boto3
from botocore import xform_name
from botocore.awsrequest import AWSResponse
from botocore.config import Config

from cdk_ts.testing._rules import wire_type
from cdk_ts.testing._throughput import ON_DEMAND_TABLE_MESSAGE, PROVISIONED_TABLE_MESSAGE
from tests.support.environment import REGION

#: The messages and ``__type`` names are the rules proxy's, each cited there: one source for both.
ON_DEMAND_MESSAGE = ON_DEMAND_TABLE_MESSAGE
PROVISIONED_MESSAGE = PROVISIONED_TABLE_MESSAGE
#: The account's throughput quota: the first sentence of ``RequestLimitExceeded``'s documentation in botocore's
#: model (no public trace quotes the message DynamoDB sends).
ACCOUNT_MESSAGE = "Throughput exceeds the current throughput quota for your account."
TABLE_ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/{table}"


def reasons_for(table: str, *reasons: str, index: str | None = None) -> list[dict[str, str]]:
    """``ThrottlingReason`` entries for ``table`` (or its ``index``): ``Index...`` reasons name the index's ARN."""
    arn = TABLE_ARN.format(table=table)
    return [
        {"reason": reason, "resource": f"{arn}/index/{index}" if reason.startswith("Index") and index else arn}
        for reason in reasons
    ]


def on_demand_throttle(table: str, *reasons: str, index: str | None = None) -> bytes:
    """An on-demand table's throttle: ``ThrottlingException`` with ``throttlingReasons`` (none when not given)."""
    body: dict = {"__type": wire_type("ThrottlingException"), "message": ON_DEMAND_MESSAGE}
    if reasons:
        body["throttlingReasons"] = reasons_for(table, *reasons, index=index)
    return json.dumps(body, separators=(",", ":")).encode()


def provisioned_throttle(table: str, *reasons: str, index: str | None = None) -> bytes:
    """A provisioned table's throttle: ``ProvisionedThroughputExceededException`` with ``ThrottlingReasons``."""
    body: dict = {"__type": wire_type("ProvisionedThroughputExceededException"), "message": PROVISIONED_MESSAGE}
    if reasons:
        body["ThrottlingReasons"] = reasons_for(table, *reasons, index=index)
    return json.dumps(body, separators=(",", ":")).encode()


def account_throttle(table: str, *reasons: str) -> bytes:
    """The account's quota: ``RequestLimitExceeded`` with ``ThrottlingReasons``."""
    body: dict = {"__type": wire_type("RequestLimitExceeded"), "message": ACCOUNT_MESSAGE}
    if reasons:
        body["ThrottlingReasons"] = reasons_for(table, *reasons)
    return json.dumps(body, separators=(",", ":")).encode()


class _Raw(io.BytesIO):
    """The raw stream botocore reads a response body from."""

    def stream(self, **_kwargs):
        yield self.getvalue()


def response(body: bytes, status: int = 400) -> AWSResponse:
    """An HTTP response carrying ``body`` as DynamoDB sends it (JSON 1.0, with the CRC32 botocore checks)."""
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "x-amz-crc32": str(zlib.crc32(body) & 0xFFFFFFFF),
        "x-amzn-RequestId": "wire-test",
    }
    return AWSResponse("https://dynamodb.us-east-1.amazonaws.com/", status, headers, _Raw(body))


def answer(client, operation: str, answer_for: Callable[[dict], bytes | None], status: int = 400) -> dict:
    """Answer ``client``'s ``operation`` with ``answer_for(request JSON)`` when it returns bytes; else send it.

    The body is parsed by the client's own botocore, and its retries see it as they see DynamoDB's answer.
    Any JSON-protocol service's client works (DynamoDB, timestream-write). Returns a counter, ``{"answered": n}``.
    """
    counter = {"answered": 0}

    def before_send(request, **_kwargs):
        body = answer_for(json.loads(request.body or b"{}"))
        if body is None:
            return None
        counter["answered"] += 1
        # botocore calls every before-send handler and sends the first response. In-process moto's handler runs
        # after this one and would still apply the request; an address moto does not serve keeps the engine
        # from doing what DynamoDB refused.
        request.url = "http://127.0.0.1:9/answered-on-the-wire-by-the-test"
        return response(body, status)

    service = client.meta.service_model.service_id.hyphenize()
    client.meta.events.register_first(f"before-send.{service}.{operation}", before_send)
    return counter


#: The smallest valid parameters of the operations ``parse_error`` is used with.
_PARAMS = {
    "PutItem": {"TableName": "t", "Item": {"k": {"S": "v"}}},
    "GetItem": {"TableName": "t", "Key": {"k": {"S": "v"}}},
    "Query": {"TableName": "t"},
    "BatchWriteItem": {"RequestItems": {"t": [{"PutRequest": {"Item": {"k": {"S": "v"}}}}]}},
    "BatchGetItem": {"RequestItems": {"t": {"Keys": [{"k": {"S": "v"}}]}}},
}


def parse_error(body: bytes, operation: str = "PutItem", status: int = 400):
    """The ``ClientError`` botocore raises for ``body`` as the answer to ``operation`` (bytes in, error out)."""
    client = boto3.client(
        "dynamodb", region_name=REGION, endpoint_url="http://127.0.0.1:9", aws_access_key_id="testing",
        aws_secret_access_key="testing", config=Config(retries={"mode": "standard", "total_max_attempts": 1}),
    )
    answer(client, operation, lambda _request: body, status)
    method = getattr(client, xform_name(operation))
    try:
        method(**_PARAMS[operation])
    except client.exceptions.ClientError as error:
        return error
    raise AssertionError(f"{operation} answered with {body!r} did not raise")
