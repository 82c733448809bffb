"""cdk_ts.testing's public face: ``local_dynamodb``, the pytest fixture, rules by name, counts, headers, clean exits."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from cdk_ts.testing import GUESSES, RULES, local_dynamodb, rule_named
from cdk_ts.testing._engines import free_port
from tests.support.processes import alive, descendants, still_alive
from tests.support.waiting import wait_until_active

ONE_ATTEMPT = Config(retries={"mode": "standard", "total_max_attempts": 1})
HOT = {"S": "device-1"}


def _create_on_demand(client, name: str) -> None:
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


# -- the call ---------------------------------------------------------------------------------------------------
def test_local_dynamodb_throttles_a_hot_key_and_counts_it_by_table_reason_and_key(unique_name):
    with local_dynamodb(write_units_per_second=5, partition_per_key_value=True) as ddb:
        client = ddb.client()
        _create_on_demand(client, unique_name)
        client.get_waiter("table_exists").wait(TableName=unique_name, WaiterConfig={"Delay": 1})
        hot = ddb.client(config=ONE_ATTEMPT)
        refused = []
        for n in range(12):
            try:
                hot.put_item(TableName=unique_name, Item={"pk": HOT, "n": {"N": str(n)}})
            except ClientError as error:
                refused.append(error)
        hot.put_item(TableName=unique_name, Item={"pk": {"S": "device-2"}})  # another key is not hot

        assert refused, "a key written 12 times in a second over 5 units/s must be throttled"
        assert {e.response["Error"]["Code"] for e in refused} == {"ThrottlingException"}
        assert refused[0].response["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
        assert ddb.throttles(table=unique_name, reason="TableWriteKeyRangeThroughputExceeded") == len(refused)
        assert ddb.throttles(table=unique_name, key=HOT) == len(refused)
        assert ddb.throttles(table=unique_name, key={"S": "device-2"}) == 0
        assert ddb.throttles(table="another-table") == 0
        assert ddb.refusals(code="ResourceInUseException") == 0
        engine, proxy = ddb.engine.pid, ddb.pid
    assert not alive(engine) and not alive(proxy)


def test_defaults_let_a_waiter_see_the_table_active_after_create_and_update(unique_name):
    with local_dynamodb() as ddb:
        client = ddb.client()
        _create_on_demand(client, unique_name)
        client.get_waiter("table_exists").wait(TableName=unique_name, WaiterConfig={"Delay": 1})
        client.update_table(TableName=unique_name, BillingMode="PROVISIONED",
                            ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
        assert client.describe_table(TableName=unique_name)["Table"]["TableStatus"] == "UPDATING"
        client.get_waiter("table_exists").wait(TableName=unique_name, WaiterConfig={"Delay": 1})
        assert client.describe_table(TableName=unique_name)["Table"]["TableStatus"] == "ACTIVE"


def test_a_rule_switched_off_by_name_lets_the_engine_answer(unique_name):
    with local_dynamodb(disabled_rules=["resource_in_use"], update_seconds=60) as ddb:
        client = ddb.client()
        _create_on_demand(client, unique_name)
        ddb.advance(60)  # takes control of the clock: the table is ACTIVE
        client.update_table(TableName=unique_name, BillingMode="PROVISIONED",
                            ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
        client.update_table(TableName=unique_name,  # UPDATING, and no ResourceInUseException: the rule is off
                            ProvisionedThroughput={"ReadCapacityUnits": 6, "WriteCapacityUnits": 6})
        assert "resource_in_use" not in {r.name for r in ddb.rules_in_force()}
        assert ddb.refusals() == 0


def test_documented_rules_only_by_default_and_guesses_on_request(unique_name):
    with local_dynamodb() as strict:
        assert set(strict.settings.disabled_rules) == set(GUESSES)
        assert {r.name for r in strict.rules_in_force()} == {r.name for r in RULES if not r.guess}
        client = strict.client()
        _create_on_demand(client, unique_name)
        wait_until_active(client, unique_name)
        # backups_after_create is a guess: off, so PITR is accepted right after ACTIVE
        client.update_continuous_backups(TableName=unique_name,
                                         PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    with local_dynamodb(guesses=True, start_time=None) as everything:
        assert everything.settings.disabled_rules == []
        client = everything.client()
        _create_on_demand(client, unique_name)
        wait_until_active(client, unique_name)
        with pytest.raises(ClientError) as refused:
            everything.client(config=ONE_ATTEMPT).update_continuous_backups(
                TableName=unique_name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
        assert refused.value.response["Error"]["Code"] == "ContinuousBackupsUnavailableException"


def test_unknown_rule_names_and_settings_are_refused_naming_the_known_ones():
    with (pytest.raises(ValueError, match="no rule named 'resource_in_uze'.*resource_in_use"),
          local_dynamodb(disabled_rules=["resource_in_uze"])):
        pass
    with pytest.raises(ValueError, match="unknown RulesSettings.*update_second"), local_dynamodb(update_second=3):
        pass
    assert rule_named("tag_lag").guess is True


# -- the fixture ------------------------------------------------------------------------------------------------
@pytest.mark.local_dynamodb(update_seconds=60, start_time=None)
def test_the_fixture_points_boto3_at_the_proxy_and_applies_the_marker(local_dynamodb, unique_name):
    import boto3

    assert os.environ["AWS_ENDPOINT_URL_DYNAMODB"] == local_dynamodb.endpoint_url
    client = boto3.client("dynamodb", config=ONE_ATTEMPT)  # no endpoint_url: the environment's
    _create_on_demand(client, unique_name)
    local_dynamodb.advance(60)
    client.update_table(TableName=unique_name, BillingMode="PROVISIONED",
                        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    with pytest.raises(ClientError) as second:
        client.update_table(TableName=unique_name, ProvisionedThroughput={"ReadCapacityUnits": 6,
                                                                           "WriteCapacityUnits": 6})
    assert second.value.response["Error"]["Code"] == "ResourceInUseException"
    assert local_dynamodb.settings.update_seconds == 60
    assert local_dynamodb.refusals(table=unique_name, code="ResourceInUseException", operation="UpdateTable") == 1


# -- HTTP header names are case-insensitive (RFC 9110) ----------------------------------------------------------
def _raw_call(ddb, spelling, operation: str, body: dict) -> tuple[int, dict]:
    """One DynamoDB call through ``http.client`` with the header names spelt by ``spelling``."""
    url = urlsplit(ddb.endpoint_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {
        spelling("X-Amz-Target"): f"DynamoDB_20120810.{operation}",
        spelling("Content-Type"): "application/x-amz-json-1.0",
        "x-amz-date": "20260101T000000Z",
        "authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/dynamodb/aws4_request, "
                         "SignedHeaders=host, Signature=0",
    }
    try:
        connection.request("POST", "/", body=json.dumps(body), headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


@pytest.mark.parametrize("engine", ["moto", "dynalite"])
@pytest.mark.parametrize("spelling", [str.lower, str.title])
def test_lower_case_target_and_content_type_are_one_header_for_the_engine(engine, spelling, unique_name):
    # The AWS SDK for JavaScript v3 sends x-amz-target and content-type in lower case. The proxy must not send
    # the engine the client's copy beside its own: dynalite (node) joins the two targets into one unknown
    # operation, and moto takes the client's, so the proxy's own DescribeTable/GetItem became the client's call
    # and no rule applied.
    with local_dynamodb(engine, write_units_per_second=1, partition_per_key_value=True) as ddb:
        status, answer = _raw_call(ddb, spelling, "CreateTable", {
            "TableName": unique_name, "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]})
        assert status == 200, answer
        assert answer["TableDescription"]["TableName"] == unique_name
        wait_until_active(ddb.client(), unique_name)
        answers = [_raw_call(ddb, spelling, "PutItem", {"TableName": unique_name, "Item": {"pk": HOT}})
                   for _ in range(3)]

        assert answers[0] == (200, {})
        assert [a[1].get("__type", "").rsplit("#", 1)[-1] for a in answers[1:]] == ["ThrottlingException"] * 2
        assert ddb.throttles(table=unique_name, key=HOT) == 2
        assert ddb.stats()["requests"].get("CreateTable") == 1


# -- processes ----------------------------------------------------------------------------------------------------
def test_the_proxy_server_imports_only_the_standard_library_and_boto3():
    # python -m cdk_ts.testing._server imports cdk_ts first: its constructs (aws_cdk, jsii) must stay unloaded
    code = ("import sys; before = set(sys.modules); import cdk_ts.testing._server, cdk_ts.testing; "
            "print(sorted({m.split('.')[0] for m in set(sys.modules) - before} - set(sys.stdlib_module_names)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = {name for name in json.loads(result.stdout.replace("'", '"')) if not name.startswith("_")}
    boto3_and_its_dependencies = {"boto3", "botocore", "s3transfer", "jmespath", "dateutil", "six", "urllib3",
                                  "certifi"}
    assert loaded - boto3_and_its_dependencies == {"cdk_ts", "cdk_ts_runtime"}


def test_cdk_ts_local_prints_the_endpoint_and_rules_and_stops_everything_on_ctrl_c():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cdk_ts.console", "local", "--json", "--port", str(port),
         "--disable", "tag_lag", "--set", "update_seconds=30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        info = json.loads(process.stdout.readline())
        children = descendants(process.pid)
        assert info["endpoint_url"] == f"http://127.0.0.1:{port}"
        assert info["export"] == f"export AWS_ENDPOINT_URL=http://127.0.0.1:{port}"
        names = [r["name"] for r in info["rules"]]
        assert "resource_in_use" in names and "tag_lag" not in names and "on_demand_peak" not in names
        assert len(children) >= 2  # the engine and the proxy
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert still_alive(children) == []


def test_servers_exit_when_the_process_that_started_them_is_killed():
    # A parent killed outright runs no clean-up: the servers watch their parent and exit on their own.
    code = ("import json, time; from cdk_ts.testing import start_local_dynamodb; d = start_local_dynamodb(); "
            "print(json.dumps([d.pid, d.engine.pid]), flush=True); time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pids = json.loads(parent.stdout.readline())
        assert all(alive(pid) for pid in pids)
        parent.kill()
        parent.wait(timeout=10)
        assert still_alive(pids) == []
    finally:
        if parent.poll() is None:
            parent.kill()
