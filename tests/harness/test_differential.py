"""The rules proxy changes nothing it has no rule for: the same requests, to the engine alone and through the proxy.

One sequence of ordinary requests (tables in both billing modes, with and without a GSI; item reads and writes; a
conditional write that fails; a query over two pages; batch writes and reads; describe, throughput changes, tags,
TTL, deletion) goes to the engine directly and to the same engine behind the proxy, with settings under which
no rule fires (limits far away, the clock moved an hour past every window between requests). The answers are
compared after normalising what differs between any two runs (request ids, times, table names and ids). Where
they may differ is listed in ``ALLOWED``, each entry with the rule that makes the proxy answer otherwise and its
source; any other difference fails and names the request and the field.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from botocore.exceptions import ClientError

from cdk_ts.testing import server_client_for
from tests.support.conformance import NO_RETRIES, WireClient
from tests.support.environment import REGION
from tests.support.waiting import wait_until, wait_until_active

pytestmark = pytest.mark.server

API = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/"
GUIDE = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"


ABSENT = "<absent>"


@dataclass(frozen=True)
class Allowed:
    """Where the proxy's answer may differ from the engine's: operations and a field path (fnmatch), the values
    the rule explains (``applies(engine_value, proxy_value)``), the rule and its source."""

    operation: str
    path: str
    rule: str
    source: str
    applies: Callable[[object, object], bool] = lambda _engine, _proxy: True

    def covers(self, operation: str, path: str, engine_value, proxy_value) -> bool:
        """Whether this entry explains ``engine_value`` -> ``proxy_value`` at ``path`` of ``operation``'s answer."""
        return (
            fnmatch.fnmatchcase(operation, self.operation)
            and fnmatch.fnmatchcase(path, self.path)
            and self.applies(engine_value, proxy_value)
        )


_DESCRIBED = "*Table"  # CreateTable, UpdateTable, DeleteTable, DescribeTable: each carries a table description
_DESCRIPTION = "Table*"  # "Table" in DescribeTable, "TableDescription" elsewhere

ALLOWED = (
    Allowed(
        "[CUD]*Table",
        f"{_DESCRIPTION}.TableStatus",
        "after each accepted CreateTable/UpdateTable/DeleteTable "
        "the table is CREATING/UPDATING/DELETING for a while; moto is ACTIVE at once",
        API + "API_UpdateTable.html",
        lambda _e, p: p in ("CREATING", "UPDATING", "DELETING"),
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.ProvisionedThroughput.NumberOfDecreasesToday",
        "the day's capacity decreases, counted by the proxy",
        GUIDE + "ServiceQuotas.html",
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.ProvisionedThroughput.Last*DateTime",
        "the times of the last increase and decrease, kept by the proxy",
        API + "API_ProvisionedThroughputDescription.html",
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.ProvisionedThroughput.*CapacityUnits",
        "an on-demand table reports 0 read and 0 write capacity units",
        API + "API_ProvisionedThroughputDescription.html",
        lambda _e, p: p == 0,
    ),
    Allowed(
        "UpdateTable",
        "TableDescription.ProvisionedThroughput.*CapacityUnits",
        "while UPDATING the table still has the provisioned throughput from before the call (UpdateTable, API "
        "version 2011-12-05; dynalite answers so too, moto reports the new units at once)",
        "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html",
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.BillingModeSummary",
        "the billing mode, reported by the proxy where the engine leaves the summary out",
        API + "API_BillingModeSummary.html",
        lambda e, _p: e == ABSENT,
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.BillingModeSummary.LastUpdateToPayPerRequestDateTime",
        "the time of the last switch to on-demand, recorded by the proxy",
        API + "API_BillingModeSummary.html",
        lambda e, p: e == ABSENT and p != ABSENT,
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.TableClassSummary*",
        "the table class and the time of its last change, kept by the proxy (moto ignores TableClass)",
        API + "API_TableClassSummary.html",
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.WarmThroughput*",
        "a new on-demand table starts at 12,000 reads / 4,000 writes "
        "per second; a provisioned one at its capacity, rising with it",
        GUIDE + "warm-throughput-scenarios.html",
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.DeletionProtectionEnabled",
        "deletion protection, kept by the proxy (dynalite refuses an UpdateTable carrying only it)",
        API + "API_TableDescription.html",
    ),
    Allowed(
        _DESCRIBED,
        f"{_DESCRIPTION}.OnDemandThroughput*",
        "the on-demand maximum, kept by the proxy",
        API + "API_OnDemandThroughput.html",
    ),
    Allowed(
        "DeleteTable",
        "TableDescription.GlobalSecondaryIndexes",
        "a DELETING table's description has no global secondary indexes: dynalite's deleteTable test, recorded "
        "against DynamoDB, checks that DeleteTable's answer has none (moto's lists them)",
        "https://github.com/architect/dynalite/blob/main/test/deleteTable.js",
        lambda _e, p: p == ABSENT,
    ),
)


@dataclass
class Context:
    """The names of one run's tables and its answers so far, for requests built from earlier answers."""

    prefix: str
    answers: dict[str, dict] = field(default_factory=dict)

    def t(self, letter: str) -> str:
        """The table name of ``letter`` in this run."""
        return f"{self.prefix}{letter}"


@dataclass(frozen=True)
class Request:
    """One request of the sequence: a label, the operation, its parameters, and the error both sides answer."""

    label: str
    operation: str
    params: Callable[[Context], dict]
    error: str | None = None  # the code the engine answers (the sequence is wrong if it does not)
    needs_ttl: bool = False  # dynalite has no TTL (architect/dynalite#103)


def _keys(*extra):
    return {
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            *extra,
        ],
    }


_G = {"AttributeName": "g", "AttributeType": "S"}


def _gsi(throughput: bool) -> list[dict]:
    index = {
        "IndexName": "by_g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
    }
    if throughput:
        index["ProvisionedThroughput"] = {"ReadCapacityUnits": 50, "WriteCapacityUnits": 50}
    return [index]


def _item(pk: str, sk: str, **values) -> dict:
    return {"pk": {"S": pk}, "sk": {"S": sk}, **{k: {"S": v} for k, v in values.items()}}


def _throughput(units: int) -> dict:
    return {"ReadCapacityUnits": units, "WriteCapacityUnits": units}


def _creates() -> list[Request]:
    # a: provisioned, no index; b: on-demand with a GSI; c: provisioned with a GSI; d: on-demand, no index.
    return [
        Request(
            "create a",
            "CreateTable",
            lambda c: {
                "TableName": c.t("a"),
                **_keys(),
                "BillingMode": "PROVISIONED",
                "ProvisionedThroughput": _throughput(100),
            },
        ),
        Request(
            "create b",
            "CreateTable",
            lambda c: {
                "TableName": c.t("b"),
                **_keys(_G),
                "BillingMode": "PAY_PER_REQUEST",
                "GlobalSecondaryIndexes": _gsi(False),
            },
        ),
        Request(
            "create c",
            "CreateTable",
            lambda c: {
                "TableName": c.t("c"),
                **_keys(_G),
                "BillingMode": "PROVISIONED",
                "ProvisionedThroughput": _throughput(100),
                "GlobalSecondaryIndexes": _gsi(True),
            },
        ),
        Request(
            "create d", "CreateTable", lambda c: {"TableName": c.t("d"), **_keys(), "BillingMode": "PAY_PER_REQUEST"}
        ),
    ]


def _items() -> list[Request]:
    return _puts() + _single_item_calls() + _queries() + _batches_and_scan()


def _puts() -> list[Request]:
    requests = []
    for letter in "abc":
        for sk in ("1", "2", "3"):
            requests.append(
                Request(
                    f"put {letter}{sk}",
                    "PutItem",
                    lambda c, letter=letter, sk=sk: {
                        "TableName": c.t(letter),
                        "Item": _item("dev", sk, g=f"op{sk}", v="x" * 100),
                    },
                )
            )
    return requests


def _single_item_calls() -> list[Request]:
    return [
        Request(
            "get a", "GetItem", lambda c: {"TableName": c.t("a"), "Key": _item("dev", "1"), "ConsistentRead": True}
        ),
        Request("get b missing", "GetItem", lambda c: {"TableName": c.t("b"), "Key": _item("nobody", "1")}),
        Request(
            "update b",
            "UpdateItem",
            lambda c: {
                "TableName": c.t("b"),
                "Key": _item("dev", "2"),
                "UpdateExpression": "SET v = :v, n = :n",
                "ExpressionAttributeValues": {":v": {"S": "changed"}, ":n": {"N": "7"}},
                "ReturnValues": "ALL_NEW",
            },
        ),
        Request(
            "conditional put fails",
            "PutItem",
            lambda c: {
                "TableName": c.t("a"),
                "Item": _item("dev", "1"),
                "ConditionExpression": "attribute_not_exists(pk)",
            },
            error="ConditionalCheckFailedException",
        ),
        Request(
            "conditional update fails",
            "UpdateItem",
            lambda c: {
                "TableName": c.t("c"),
                "Key": _item("dev", "3"),
                "UpdateExpression": "SET v = :v",
                "ConditionExpression": "v = :old",
                "ExpressionAttributeValues": {":v": {"S": "y"}, ":old": {"S": "no"}},
            },
            error="ConditionalCheckFailedException",
        ),
    ]


def _dev_in_a_two_at_a_time(c: Context, **extra) -> dict:
    """A Query of key ``dev`` in table a, two items a page."""
    return {
        "TableName": c.t("a"),
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "dev"}},
        "Limit": 2,
        **extra,
    }


def _queries() -> list[Request]:
    return [
        Request("query page 1", "Query", _dev_in_a_two_at_a_time),
        Request(
            "query page 2",
            "Query",
            lambda c: _dev_in_a_two_at_a_time(c, ExclusiveStartKey=c.answers["query page 1"]["LastEvaluatedKey"]),
        ),
        Request(
            "query the gsi",
            "Query",
            lambda c: {
                "TableName": c.t("c"),
                "IndexName": "by_g",
                "KeyConditionExpression": "g = :g",
                "ExpressionAttributeValues": {":g": {"S": "op2"}},
            },
        ),
    ]


def _batches_and_scan() -> list[Request]:
    return [
        Request(
            "batch write",
            "BatchWriteItem",
            lambda c: {
                "RequestItems": {
                    c.t("d"): [{"PutRequest": {"Item": _item("batch", str(i))}} for i in range(5)],
                    c.t("a"): [{"DeleteRequest": {"Key": _item("dev", "3")}}],
                }
            },
        ),
        Request(
            "batch get",
            "BatchGetItem",
            lambda c: {
                "RequestItems": {c.t("d"): {"Keys": [_item("batch", str(i)) for i in range(5)], "ConsistentRead": True}}
            },
        ),
        Request(
            "delete item",
            "DeleteItem",
            lambda c: {"TableName": c.t("b"), "Key": _item("dev", "1"), "ReturnValues": "ALL_OLD"},
        ),
        Request("scan d", "Scan", lambda c: {"TableName": c.t("d"), "Select": "COUNT"}),
    ]


def _control() -> list[Request]:
    return (
        [
            Request("describe a", "DescribeTable", lambda c: {"TableName": c.t("a")}),
            Request("describe b", "DescribeTable", lambda c: {"TableName": c.t("b")}),
            Request(
                "increase a",
                "UpdateTable",
                lambda c: {"TableName": c.t("a"), "ProvisionedThroughput": _throughput(200)},
            ),
            Request(
                "decrease a",
                "UpdateTable",
                lambda c: {"TableName": c.t("a"), "ProvisionedThroughput": _throughput(150)},
            ),
            Request(
                "a to on-demand", "UpdateTable", lambda c: {"TableName": c.t("a"), "BillingMode": "PAY_PER_REQUEST"}
            ),
            Request("describe a after", "DescribeTable", lambda c: {"TableName": c.t("a")}),
            Request(
                "tag d",
                "TagResource",
                lambda c: {
                    "ResourceArn": c.answers["describe d"]["Table"]["TableArn"],
                    "Tags": [{"Key": "team", "Value": "iot"}],
                },
            ),
            Request(
                "list tags d",
                "ListTagsOfResource",
                lambda c: {"ResourceArn": c.answers["describe d"]["Table"]["TableArn"]},
            ),
            Request(
                "untag d",
                "UntagResource",
                lambda c: {"ResourceArn": c.answers["describe d"]["Table"]["TableArn"], "TagKeys": ["team"]},
            ),
            Request(
                "list tags d after",
                "ListTagsOfResource",
                lambda c: {"ResourceArn": c.answers["describe d"]["Table"]["TableArn"]},
            ),
            Request(
                "ttl on d",
                "UpdateTimeToLive",
                lambda c: {
                    "TableName": c.t("d"),
                    "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "expires"},
                },
                needs_ttl=True,
            ),
            Request("describe ttl d", "DescribeTimeToLive", lambda c: {"TableName": c.t("d")}, needs_ttl=True),
            Request("list tables", "ListTables", lambda c: {"ExclusiveStartTableName": c.prefix, "Limit": 4}),
        ]
        + [
            Request(f"delete {letter}", "DeleteTable", lambda c, letter=letter: {"TableName": c.t(letter)})
            for letter in "abcd"
        ]
        + [
            Request(
                "describe deleted a",
                "DescribeTable",
                lambda c: {"TableName": c.t("a")},
                error="ResourceNotFoundException",
            ),
        ]
    )


def _sequence(with_ttl: bool) -> list[Request]:
    requests = _creates() + [Request("describe d", "DescribeTable", lambda c: {"TableName": c.t("d")})]
    requests += _items() + _control()
    return [r for r in requests if with_ttl or not r.needs_ttl]


# -- running and normalising --------------------------------------------------------------------------------------
def _normalised(value, prefix: str):
    """``value`` with what differs between any two runs replaced: the run's table names, times, table ids."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "ResponseMetadata":  # request ids, headers, retry counts
                continue
            out[_normalised(key, prefix)] = "<id>" if key == "TableId" else _normalised(item, prefix)
        return out
    if isinstance(value, list):
        return [_normalised(v, prefix) for v in value]
    if isinstance(value, dt.datetime):
        return "<time>"
    if isinstance(value, str):
        return value.replace(prefix, "<run>")
    return value


def _run(client, prefix: str, requests: list[Request], between: Callable[[Request], None]) -> list[tuple]:
    """Send ``requests`` in order, calling ``between`` after each; (request, status, code, normalised body) each."""
    wire, context, answers = WireClient(client), Context(prefix), []
    for request in requests:
        answer = wire.call(request.operation, request.params(context))
        context.answers[request.label] = answer.parsed
        if request.operation == "BatchGetItem" and answer.code is None:
            # "DynamoDB does not return items in any particular order" (API_BatchGetItem): compare them sorted.
            for items in answer.parsed.get("Responses", {}).values():
                items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        body = (
            answer.parsed
            if answer.code is None
            else {"Error": answer.parsed["Error"], **{k: v for k, v in answer.parsed.items() if k != "Error"}}
        )
        answers.append((request, answer.status, answer.code, _normalised(body, prefix)))
        between(request)
    return answers


def _differences(a, b, path: str = "") -> list[str]:
    """Paths where ``a`` and ``b`` differ, each with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                out.append((sub, a.get(key, ABSENT), b.get(key, ABSENT)))
            else:
                out += _differences(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [(path, a, b)]


@pytest.mark.parametrize("engine", ["moto_server", "dynalite"])
def test_proxy_answers_as_the_engine_where_no_rule_applies(request, engine, unique_name):
    server = request.getfixturevalue(engine)
    proxy = request.getfixturevalue("rules_proxy" if engine == "moto_server" else "rules_proxy_dynalite")
    proxy.configure(create_seconds=20, update_seconds=60, delete_seconds=20)
    requests = _sequence(with_ttl=engine == "moto_server")
    direct_client = server_client_for(server, region=REGION)
    direct_prefix, proxied_prefix = f"{unique_name}e", f"{unique_name}p"

    def settle_engine(done: Request) -> None:
        if done.operation not in ("CreateTable", "UpdateTable", "DeleteTable") or done.error:
            return
        name = _table_of(done, direct_prefix)
        if done.operation == "DeleteTable":
            wait_until(lambda: _gone(direct_client, name), what=f"{name} deleted")
        else:
            wait_until_active(direct_client, name)

    direct = _run(server_client_for(server, region=REGION), direct_prefix, requests, settle_engine)
    # An hour after each request every window of the proxy has passed (the longest, UpdateTimeToLive's, is an
    # hour), and no limit is near: no rule applies to any request of the sequence.
    proxied = _run(proxy.client(config=NO_RETRIES), proxied_prefix, requests, lambda _done: proxy.advance(3601))

    wrong_sequence = [
        f"{r.label}: {code or 'OK'} (expected {r.error or 'OK'})" for r, _s, code, _b in direct if code != r.error
    ]
    assert not wrong_sequence, "the engine alone did not answer the sequence as written: " + "; ".join(wrong_sequence)
    unexplained = []
    for (req, status_e, code_e, body_e), (_req, status_p, code_p, body_p) in zip(direct, proxied, strict=True):
        if (status_e, code_e) != (status_p, code_p):
            unexplained.append(f"{req.label} ({req.operation}): engine {status_e} {code_e}, proxy {status_p} {code_p}")
            continue
        for path, engine_value, proxy_value in _differences(body_e, body_p):
            if not any(a.covers(req.operation, path, engine_value, proxy_value) for a in ALLOWED):
                unexplained.append(
                    f"{req.label} ({req.operation}) {path}: engine {engine_value!r}, proxy {proxy_value!r}"
                )
    assert not unexplained, "differences no rule explains:\n" + "\n".join(unexplained)


def _table_of(request: Request, prefix: str) -> str:
    return request.params(Context(prefix))["TableName"]


def _gone(client, name: str) -> bool | None:
    try:
        client.describe_table(TableName=name)
    except ClientError as error:
        if error.response["Error"]["Code"] == "ResourceNotFoundException":
            return True
        raise
    return None
