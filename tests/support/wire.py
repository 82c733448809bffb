"""AWS answers as bytes on the wire, parsed by botocore: how tests meet a throttle or a refusal without a proxy.

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

Any other refusal goes in with :func:`answer_error`: a :class:`ServiceError` (code, message, status, each from
the source cited at its constant) rendered in the client's own protocol (``json``, ``rest-xml``, ``query``).
"""

from __future__ import annotations

import io
import json
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from xml.sax.saxutils import escape

import boto3
from botocore import xform_name
from botocore.awsrequest import AWSResponse

from cdk_ts.testing._rules import wire_type
from cdk_ts.testing._throughput import ON_DEMAND_TABLE_MESSAGE, PROVISIONED_TABLE_MESSAGE
from tests.support.conformance import NO_RETRIES
from tests.support.environment import REGION

#: The messages and ``__type`` names are the rules proxy's, each cited there: one source for both.
ON_DEMAND_MESSAGE = ON_DEMAND_TABLE_MESSAGE
PROVISIONED_MESSAGE = PROVISIONED_TABLE_MESSAGE
#: The account's throughput quota: the first sentence of ``RequestLimitExceeded``'s documentation in botocore's
#: model (no public trace quotes the message DynamoDB sends).
ACCOUNT_MESSAGE = "Throughput exceeds the current throughput quota for your account."
TABLE_ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/{table}"
REQUEST_ID = "wire-test"


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


def response(body: bytes, status: int = 400, headers: dict[str, str] | None = None) -> AWSResponse:
    """An HTTP response carrying ``body`` as DynamoDB sends it (JSON 1.0, with the CRC32 botocore checks).

    ``headers`` replace the JSON ones for another protocol's body (the request id stays).
    """
    if headers is None:
        headers = {"Content-Type": "application/x-amz-json-1.0", "x-amz-crc32": str(zlib.crc32(body) & 0xFFFFFFFF)}
    headers = {**headers, "x-amzn-RequestId": REQUEST_ID}
    return AWSResponse("https://dynamodb.us-east-1.amazonaws.com/", status, headers, _Raw(body))


def answer(client, operation: str, answer_for: Callable[[dict], bytes | None], status: int = 400) -> dict:
    """Answer ``client``'s ``operation`` with ``answer_for(request JSON)`` when it returns bytes; else send it.

    The body is parsed by the client's own botocore, and its retries see it as they see DynamoDB's answer.
    Any JSON-protocol service's client works (DynamoDB, timestream-write). Returns a counter, ``{"answered": n}``.
    """
    def answer_with(request) -> AWSResponse | None:
        body = answer_for(json.loads(request.body or b"{}"))
        return None if body is None else response(body, status)

    return _answer(client, operation, answer_with)


def _answer(client, operation: str, answer_with: Callable[[object], AWSResponse | None]) -> dict:
    """Answer ``operation`` with ``answer_with(prepared request)`` when it returns a response; count the answers."""
    counter = {"answered": 0}

    def before_send(request, **_kwargs):
        answered = answer_with(request)
        if answered is None:
            return None
        counter["answered"] += 1
        # botocore calls every before-send handler and sends the first response. In-process moto's handler runs
        # after this one and would still apply the request; an address moto does not serve keeps the engine
        # from doing what the service refused.
        request.url = "http://127.0.0.1:9/answered-on-the-wire-by-the-test"
        return answered

    service = client.meta.service_model.service_id.hyphenize()
    client.meta.events.register_first(f"before-send.{service}.{operation}", before_send)
    return counter


def nowhere_client(service: str):
    """A ``service`` client whose requests go nowhere (127.0.0.1:9), one attempt each: answer them on the wire."""
    return boto3.client(
        service, region_name=REGION, endpoint_url="http://127.0.0.1:9", aws_access_key_id="testing",
        aws_secret_access_key="testing", config=NO_RETRIES,
    )


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
    client = nowhere_client("dynamodb")
    answer(client, operation, lambda _request: body, status)
    method = getattr(client, xform_name(operation))
    try:
        method(**_PARAMS[operation])
    except client.exceptions.ClientError as error:
        return error
    raise AssertionError(f"{operation} answered with {body!r} did not raise")


@dataclass(frozen=True)
class ServiceError:
    """A refusal as a service sends it: ``code`` (botocore's ``Error.Code``), ``message`` and HTTP ``status``."""

    code: str
    message: str
    status: int


#: The principal AccessDenied messages name: the rotation function's role (any role ARN has this form).
ROLE_ARN = "arn:aws:sts::123456789012:assumed-role/cdk-ts-rotation/rotation-function"

#: DynamoDB's ``__type`` and message member where they are not ``wire_type``'s and ``message``: a real
#: AccessDeniedException on the wire, quoted in sebdah/dynamic-dynamodb#321,
#: ``{"Message": "User: ... is not authorized to perform: dynamodb:ListTables on resource: *",
#: "__type": "com.amazon.coral.service#AccessDeniedException"}``.
_DYNAMODB_FORMS = {"AccessDeniedException": ("com.amazon.coral.service#AccessDeniedException", "Message")}


def dynamodb_error(code: str, *, operation: str, table: str) -> ServiceError:
    """DynamoDB's refusal ``code`` of ``operation`` on ``table``, as a source quotes it (HTTP 400 unless said).

    - ``AccessDeniedException``: the form of praetorian-inc/chariot-ui#485 ("StatusCode: 400 ... api error
      AccessDeniedException: User: arn:aws:iam::...:user/DigitalOcean is not authorized to perform:
      dynamodb:DeleteItem on resource: arn:aws:dynamodb:...:table/... because no identity-based policy allows the
      dynamodb:DeleteItem action").
    - ``ResourceInUseException``: "Attempt to change a resource which is still in use: Table is being updated:
      NAME", as hashicorp/terraform#9559 reports (the rules proxy's ``resource_in_use`` answer).
    - ``LimitExceededException``: "Subscriber limit exceeded: Only 10 tables can be created, updated, or deleted
      simultaneously", quoted in trek10inc/dynamodb-autoscaling#8 (statusCode 400), with today's 500 from the
      exception's documentation in botocore's model ("up to 500 simultaneous table operations").
    - ``ThrottlingException`` (a control-plane call): no source quotes the message; the first sentence of the
      shape's documentation in botocore's model.
    - ``ProvisionedThroughputExceededException``: :data:`PROVISIONED_MESSAGE`, without reasons.
    - ``ValidationException`` (a batch): "Provided list of item keys contains duplicates", quoted for
      BatchWriteItem in mirrorfm/core#8; ``__type`` in coral's validate namespace (``wire_type``).
    - ``InternalServerError``: HTTP 500; no source quotes the message; the shape's documentation in botocore's
      model ("An error occurred on the server side.").
    - ``PointInTimeRecoveryUnavailableException``: no source quotes the message; the shape's documentation in
      botocore's model.
    """
    arn = TABLE_ARN.format(table=table)
    messages = {
        "AccessDeniedException": (
            f"User: {ROLE_ARN} is not authorized to perform: dynamodb:{operation} on resource: {arn} "
            f"because no identity-based policy allows the dynamodb:{operation} action"
        ),
        "ResourceInUseException": (
            f"Attempt to change a resource which is still in use: Table is being updated: {table}"
        ),
        "LimitExceededException": (
            "Subscriber limit exceeded: Only 500 tables can be created, updated, or deleted simultaneously"
        ),
        "ThrottlingException": "The request was denied due to request throttling.",
        "ProvisionedThroughputExceededException": PROVISIONED_MESSAGE,
        "ValidationException": "Provided list of item keys contains duplicates",
        "InternalServerError": "An error occurred on the server side.",
        "PointInTimeRecoveryUnavailableException": (
            "Point in time recovery has not yet been enabled for this source table."
        ),
    }
    if code not in messages:
        raise ValueError(f"no cited DynamoDB answer for {code!r}; cited: {sorted(messages)}")
    return ServiceError(code, messages[code], 500 if code == "InternalServerError" else 400)


#: S3's answers, from the API reference's "Error responses" page (the REST error body, and its list of error
#: codes: ``SlowDown`` "Please reduce your request rate." 503 Slow Down; ``AccessDenied`` "Access Denied" 403
#: Forbidden). botocore retries ``SlowDown`` as a throttle (``retries/standard.py``).
S3_SLOW_DOWN = ServiceError("SlowDown", "Please reduce your request rate.", 503)
S3_ACCESS_DENIED = ServiceError("AccessDenied", "Access Denied", 403)

#: CloudWatch refusing a metrics read: code and message as RafalWilinski/cloudwatch-public-metrics#6 quotes them
#: ("AccessDenied: User: arn:aws:sts::...:assumed-role/... is not authorized to perform:
#: cloudwatch:GetMetricStatistics"), status 403 as prometheus-community/yet-another-cloudwatch-exporter#57 quotes
#: for the same refusal of ListMetrics.
CLOUDWATCH_ACCESS_DENIED = ServiceError(
    "AccessDenied", f"User: {ROLE_ARN} is not authorized to perform: cloudwatch:GetMetricStatistics", 403
)


def protocol_of(client) -> str:
    """The protocol ``client``'s botocore speaks (the first of the model's ``protocols`` it supports)."""
    model = client.meta.service_model
    return getattr(model, "resolved_protocol", None) or model.protocol


def error_response(client, error: ServiceError) -> AWSResponse:
    """``error`` as the HTTP answer ``client``'s service sends in ``client``'s protocol.

    - ``json`` (DynamoDB, and CloudWatch for botocore that speaks JSON to it): ``{"__type", "message"}``; DynamoDB's
      types as ``wire_type`` and :data:`_DYNAMODB_FORMS` give them. A service migrated from ``query``
      (``awsQueryCompatible``) also sends ``x-amzn-query-error: Code;Sender`` (``Receiver`` for a 5xx), the
      header smithy-lang/smithy-rs#1872 describes, from which botocore takes the query-era code.
    - ``rest-xml`` (S3): ``<Error><Code/><Message/><RequestId/></Error>``, S3's "Error responses" page.
    - ``query`` (CloudWatch for older botocore): ``<ErrorResponse><Error><Type/><Code/><Message/></Error>
      <RequestId/></ErrorResponse>``, the form of a real answer quoted in DanielDaCosta/apiGateway-sqs-lambda#1.
    """
    model = client.meta.service_model
    protocol = protocol_of(client)
    fault = "Receiver" if error.status >= 500 else "Sender"
    if protocol == "json":
        type_name, member = error.code, "message"
        if model.service_name == "dynamodb":
            type_name, member = _DYNAMODB_FORMS.get(error.code, (wire_type(error.code), "message"))
        body = json.dumps({"__type": type_name, member: error.message}, separators=(",", ":")).encode()
        headers = {
            "Content-Type": f"application/x-amz-json-{model.metadata.get('jsonVersion', '1.0')}",
            "x-amz-crc32": str(zlib.crc32(body) & 0xFFFFFFFF),
        }
        if "awsQueryCompatible" in model.metadata:
            headers["x-amzn-query-error"] = f"{error.code};{fault}"
        return response(body, error.status, headers)
    code, message = escape(error.code), escape(error.message)
    if protocol == "rest-xml":
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{code}</Code><Message>{message}</Message><RequestId>{REQUEST_ID}</RequestId></Error>"
        )
        return response(body.encode(), error.status, {"Content-Type": "application/xml"})
    if protocol == "query":
        body = (
            f'<ErrorResponse xmlns="{model.metadata["xmlNamespace"]}"><Error><Type>{fault}</Type><Code>{code}</Code>'
            f"<Message>{message}</Message></Error><RequestId>{REQUEST_ID}</RequestId></ErrorResponse>"
        )
        return response(body.encode(), error.status, {"Content-Type": "text/xml"})
    raise NotImplementedError(f"answer_error renders json, rest-xml and query bodies, not {protocol!r}")


def on_table(table: str) -> Callable[[dict], bool]:
    """``when`` for :func:`answer_error`: the calls naming ``table`` (``TableName``, or ``TableArn``), only those."""
    return lambda params: params.get("TableName") == table or params.get("TableArn", "").endswith(f":table/{table}")


def answer_error(
    client, operation: str, error: ServiceError, *, when: Callable[[dict], bool] = lambda _params: True
) -> dict:
    """Answer ``client``'s ``operation`` with ``error`` on the wire whenever ``when(params)`` holds; else send it.

    ``params`` are the API parameters as the caller passed them (``{"TableName": ...}``, ``{"Bucket", "Key",
    ...}``), remembered per thread when the call starts. Every attempt is answered alike, so the client's own
    retries run as against the service. Returns a counter, ``{"answered": n}``.
    """
    calls = threading.local()

    def remember(params, **_kwargs):
        calls.params = params

    def answer_with(_request) -> AWSResponse | None:
        return error_response(client, error) if when(calls.params) else None

    service = client.meta.service_model.service_id.hyphenize()
    client.meta.events.register(f"provide-client-params.{service}.{operation}", remember)
    return _answer(client, operation, answer_with)


def refuse_on_table(client, operation: str, table: str, code: str) -> dict:
    """Answer every ``operation`` on ``table`` (and only on it) with DynamoDB's ``code`` (:func:`dynamodb_error`)."""
    return answer_error(client, operation, dynamodb_error(code, operation=operation, table=table), when=on_table(table))
