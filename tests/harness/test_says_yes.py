"""Where DynamoDB says yes, ``cdk-ts local`` says yes: the same requests to the engine alone and behind the layer.

The cases come from what DynamoDB was seen to accept: dynalite's suite, recorded against DynamoDB with fixed tables
of 10 read / 5 write units, writes items just under 400 KB, deletes in parallel while cleaning up, batch-writes to
several tables and pages through queries and scans (``bench/peer_suites.py`` runs that whole suite; this file keeps a
fast part of it in the ordinary test command, so no rule can silently turn a yes into a no). Each scenario runs
twice on fresh servers, against the engine alone and behind ``local_dynamodb()`` with its defaults, with clients that
never retry: any throttle shows. Where DynamoDB says no whatever the capacity (an oversized item), the layer says no
first, with DynamoDB's code and message, and never with a throttle.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from botocore.exceptions import ClientError

from cdk_ts.testing import local_dynamodb, start_dynalite, start_moto_server
from tests.support.conformance import NO_RETRIES
from tests.support.waiting import wait_until_active

pytestmark = pytest.mark.server

KB = 1024
ENGINES = {"moto": start_moto_server, "dynalite": start_dynalite}
#: DynamoDB's message for an item over 400 KB (ServiceQuotas.html "Items"; dynalite's putItem and batchWriteItem
#: tests, recorded against DynamoDB, expect it one byte past 409,600).
ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"


def small_table(client, name: str, *, read: int = 5, write: int = 5) -> str:
    """A fresh provisioned table (``pk`` hash, ``sk`` range) of ``read``/``write`` units, waited for as a user would."""
    client.create_table(
        TableName=name, BillingMode="PROVISIONED",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")],
        ProvisionedThroughput={"ReadCapacityUnits": read, "WriteCapacityUnits": write},
    )
    wait_until_active(client, name)
    return name


def key(pk: str, sk: str = "s") -> dict:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def item_of_size(pk: str, size: int) -> dict:
    """An item whose DynamoDB size is exactly ``size`` bytes (names and values of ASCII strings)."""
    base = key(pk)
    used = sum(len(name) + len(value["S"]) for name, value in base.items()) + len("v")
    return {**base, "v": {"S": "x" * (size - used)}}


def outcome(call) -> str:
    """``"ok"``, or the error code DynamoDB's answer carries (parsed by botocore)."""
    try:
        call()
    except ClientError as error:
        return error.response["Error"]["Code"]
    return "ok"


# -- scenarios: each returns what a test suite would assert -------------------------------------------------------
def large_item_on_a_small_table(client, prefix: str) -> dict:
    table = small_table(client, f"{prefix}-large")
    stored = outcome(lambda: client.put_item(TableName=table, Item=item_of_size("big", 390 * KB)))
    read = client.get_item(TableName=table, Key=key("big"), ConsistentRead=True).get("Item", {})
    return {"put": stored, "read back bytes": len(read.get("v", {}).get("S", ""))}


def parallel_deletes_on_a_small_table(client, prefix: str) -> dict:
    table = small_table(client, f"{prefix}-deletes")
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(lambda i: outcome(lambda: client.delete_item(TableName=table, Key=key(f"absent{i}"))),
                                range(20)))
    return {"deletes": sorted(set(answers)), "count": len(answers)}


def batches_pages_and_segments(client, prefix: str) -> dict:
    tables = [small_table(client, f"{prefix}-batch-{n}") for n in (1, 2)]
    unprocessed = []
    for start in range(0, 60, 12):  # 5 batches of 24 writes over two tables, as a suite's set-up does
        request = {table: [{"PutRequest": {"Item": {**key(table, f"{i:03}"), "n": {"N": str(i)}}}}
                           for i in range(start, start + 12)] for table in tables}
        unprocessed.append(client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {})
    pages, items = 0, 0
    for page in client.get_paginator("query").paginate(
            TableName=tables[0], KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": tables[0]}},
            Limit=7):
        pages, items = pages + 1, items + len(page["Items"])
    segments = [sum(len(page["Items"]) for page in client.get_paginator("scan").paginate(
        TableName=tables[1], Segment=segment, TotalSegments=3, Limit=5)) for segment in range(3)]
    return {"unprocessed": [u for u in unprocessed if u], "query pages": pages, "query items": items,
            "scanned": sum(segments)}


#: Each scenario and what it answers on either engine alone.
SCENARIOS = {
    large_item_on_a_small_table: {"put": "ok", "read back bytes": 390 * KB - len("pkbigsksv")},
    parallel_deletes_on_a_small_table: {"deletes": ["ok"], "count": 20},
    batches_pages_and_segments: {"unprocessed": [], "query pages": 9, "query items": 60, "scanned": 60},
}


@pytest.fixture(scope="module", params=sorted(ENGINES))
def engines(request):
    """``(engine alone, the layer in front of another engine of that kind)``, both as a user starts them."""
    alone = ENGINES[request.param]()
    try:
        with local_dynamodb(request.param) as layer:
            yield alone, layer
    finally:
        alone.stop()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_what_the_engine_accepts_the_layer_accepts_with_its_defaults(engines, scenario, unique_name):
    engine, ddb = engines
    # given the scenario's answers on the engine alone
    alone = scenario(_no_retry_client(engine.endpoint_url), unique_name)

    # when it runs behind the layer, as a user starts it (documented rules, default settings)
    ddb.reset_stats()
    behind = scenario(ddb.client(config=NO_RETRIES), unique_name)
    throttles = ddb.throttles()
    refusals = ddb.stats()["refusals"]

    # then the answers are the engine's, which are what DynamoDB answers, and nothing was throttled or refused
    assert alone == SCENARIOS[scenario]
    assert behind == alone
    assert (throttles, refusals) == (0, {})


def _no_retry_client(endpoint_url: str):
    import boto3

    return boto3.client("dynamodb", endpoint_url=endpoint_url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=NO_RETRIES)  # noqa: S106 - a local server


def test_the_three_reproductions_of_issue_38_hold_behind_cdk_ts_local():
    with local_dynamodb("dynalite") as ddb:
        client = ddb.client(config=NO_RETRIES)
        table = small_table(client, "repro-38")

        # a 390 KB item on a fresh 5-unit table is stored
        assert outcome(lambda: client.put_item(TableName=table, Item=item_of_size("big", 390 * KB))) == "ok"
        assert client.get_item(TableName=table, Key=key("big"))["Item"]["v"]["S"].startswith("x")
        # a 410 KB item is refused as DynamoDB refuses it, not throttled
        with pytest.raises(ClientError) as excinfo:
            client.put_item(TableName=table, Item=item_of_size("huge", 410 * KB))
        assert excinfo.value.response["Error"] == {"Code": "ValidationException", "Message": ITEM_TOO_LARGE}
        # 20 parallel deletes of absent keys: none throttled
        with ThreadPoolExecutor(max_workers=20) as pool:
            answers = list(pool.map(
                lambda i: outcome(lambda: client.delete_item(TableName=table, Key=key(f"gone{i}"))), range(20)))
        assert answers == ["ok"] * 20
        assert ddb.throttles(table=table) == 0


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_an_oversized_item_is_refused_before_any_throttle_whatever_the_capacity(engine):
    # a table with no burst credit, its write capacity spent: the next small write is throttled
    with local_dynamodb(engine, initial_burst_seconds=0, start_time=datetime(2026, 3, 10, tzinfo=UTC)) as ddb:
        client = ddb.client(config=NO_RETRIES)
        table = small_table(client, "spent", write=1)
        assert outcome(lambda: client.put_item(TableName=table, Item=item_of_size("first", 900))) == \
            "ProvisionedThroughputExceededException"  # no credit at first
        ddb.advance(1)
        client.put_item(TableName=table, Item=item_of_size("first", 900))  # one second's unit
        assert outcome(lambda: client.put_item(TableName=table, Item=item_of_size("second", 900))) == \
            "ProvisionedThroughputExceededException"

        # an item one byte over 400 KB is DynamoDB's ValidationException, and one exactly at it is only throttled
        with pytest.raises(ClientError) as excinfo:
            client.put_item(TableName=table, Item=item_of_size("huge", 400 * KB + 1))
        assert excinfo.value.response["Error"] == {"Code": "ValidationException", "Message": ITEM_TOO_LARGE}
        assert outcome(lambda: client.put_item(TableName=table, Item=item_of_size("edge", 400 * KB))) == \
            "ProvisionedThroughputExceededException"
        with pytest.raises(ClientError) as excinfo:
            client.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": item_of_size("b", 401 * KB)}}]})
        assert excinfo.value.response["Error"]["Message"] == ITEM_TOO_LARGE
        assert ddb.refusals(code="ValidationException") == 2 and ddb.throttles(table=table) == 3


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_malformed_request_gets_the_engines_validation_not_a_rule_of_the_layer(engine):
    with local_dynamodb(engine, initial_burst_seconds=0, create_seconds=60, windows_end_at_first_wait=False) as ddb:
        client = ddb.client(config=NO_RETRIES)
        client.create_table(
            TableName="creating", BillingMode="PROVISIONED", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
        # the table is CREATING: a well-formed write is refused as not found, an invalid one as invalid first
        assert outcome(lambda: client.put_item(TableName="creating", Item={"pk": {"S": "a"}})) == \
            "ResourceNotFoundException"
        assert outcome(lambda: client.put_item(TableName="creating", Item=item_of_size("a", 401 * KB))) == \
            "ValidationException"
        # a value that is no number is the engine's to judge (both refuse it): the CREATING rule does not answer it
        assert outcome(lambda: client.put_item(TableName="creating", Item={"pk": {"S": "b"}, "n": {"N": "x"}})) == \
            "ValidationException"
        assert ddb.refusals(code="ResourceNotFoundException") == 1


def test_a_wait_sees_each_state_in_order_and_ends_the_window():
    with local_dynamodb("moto") as ddb:
        client = ddb.client(config=NO_RETRIES)
        client.create_table(
            TableName="waited", BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        # before any wait the rules hold: CREATING refuses data and updates
        assert outcome(lambda: client.put_item(TableName="waited", Item={"pk": {"S": "a"}})) == \
            "ResourceNotFoundException"
        assert outcome(lambda: client.update_table(TableName="waited", DeletionProtectionEnabled=True)) == \
            "ResourceInUseException"
        # a waiter's first look sees CREATING, its next ACTIVE: no need to sit out the whole window
        statuses = [client.describe_table(TableName="waited")["Table"]["TableStatus"] for _ in range(2)]
        assert statuses == ["CREATING", "ACTIVE"]
        assert outcome(lambda: client.put_item(TableName="waited", Item={"pk": {"S": "a"}})) == "ok"
        client.delete_table(TableName="waited")
        assert client.describe_table(TableName="waited")["Table"]["TableStatus"] == "DELETING"
        assert outcome(lambda: client.describe_table(TableName="waited")) == "ResourceNotFoundException"
