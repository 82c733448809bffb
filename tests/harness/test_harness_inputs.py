"""The harness refuses settings and clock moves that would make it silently wrong (issue 40, items 1 and 3).

A NaN rate never throttles, a negative window never ends: every ``RulesSettings`` value is checked however it
arrives (keywords, ``configure``, ``cdk-ts local --set``), with a message naming the setting; and moving the clock
back never changes a table's state.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import asdict, fields
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdk_ts.testing import RulesSettings, local_dynamodb
from cdk_ts.testing._setting_checks import AT_LEAST_ONE, OPTIONAL_POSITIVE, POSITIVE
from cdk_ts_runtime._errors import ValidationError

NUMERIC = [f.name for f in fields(RulesSettings)
           if isinstance(asdict(RulesSettings())[f.name], int | float) and not isinstance(
               asdict(RulesSettings())[f.name], bool) or f.name in OPTIONAL_POSITIVE]
BOOLEAN = [f.name for f in fields(RulesSettings) if isinstance(asdict(RulesSettings())[f.name], bool)]
NOT_NUMBERS = st.one_of(st.text(max_size=5), st.booleans(), st.lists(st.integers(), max_size=2),
                        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))


def floor_of(name: str) -> float:
    """The smallest value ``name`` takes (exclusive for the settings that must be positive)."""
    return 1 if name in AT_LEAST_ONE else 0


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(NUMERIC), value=st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]), st.floats(max_value=-1e-9, allow_nan=False), NOT_NUMBERS))
def test_every_numeric_setting_refuses_what_is_no_finite_number_in_range_and_names_itself(name, value):
    with pytest.raises(ValidationError, match=rf"\b{name}="):
        RulesSettings().updated(**{name: value})


@pytest.mark.parametrize("name", sorted(POSITIVE | OPTIONAL_POSITIVE | AT_LEAST_ONE))
def test_zero_is_refused_where_it_means_nothing(name):
    with pytest.raises(ValidationError, match=rf"{name}=0"):
        RulesSettings().updated(**{name: 0})


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NUMERIC), value=st.floats(min_value=1.0, max_value=1e6))
def test_ordinary_values_are_accepted(name, value):
    value = int(value) if isinstance(asdict(RulesSettings())[name], int) and name not in OPTIONAL_POSITIVE else value
    assert getattr(RulesSettings().updated(**{name: value}), name) == value


@pytest.mark.parametrize("name", BOOLEAN)
def test_switches_take_only_true_or_false(name):
    for value in ("false", 0, 1, None):
        with pytest.raises(ValidationError, match=rf"{name}=.*true or false"):
            RulesSettings().updated(**{name: value})


@pytest.mark.parametrize("start", [datetime(2026, 3, 10), "2026-03-10T00:00:00Z", 1773100800])
def test_a_start_time_must_be_an_aware_datetime_and_nothing_starts_otherwise(start):
    with pytest.raises(ValueError, match="start_time.*(aware|time zone)"), local_dynamodb(start_time=start):
        pass  # pragma: no cover - never reached


def test_a_bad_setting_refuses_before_any_server_starts():
    with pytest.raises(ValidationError, match="read_units_per_second=inf"), \
            local_dynamodb(read_units_per_second=math.inf):
        pass  # pragma: no cover - never reached


def test_cdk_ts_local_names_a_bad_set_value_and_exits_2():
    result = subprocess.run([sys.executable, "-m", "cdk_ts.console", "local", "--json", "--set",
                             "write_units_per_second=NaN"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "write_units_per_second=nan" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""  # a --json reader gets no banner for a server that never started


@pytest.mark.server
def test_the_running_proxy_refuses_bad_settings_and_clock_moves_and_keeps_its_own():
    with local_dynamodb(start_time=datetime(2026, 3, 10, tzinfo=UTC)) as ddb:
        for change in ({"update_seconds": -5}, {"write_units_per_second": "fast"}):
            with pytest.raises(ValidationError, match=next(iter(change))):
                ddb.configure(**change)
        for seconds in (math.nan, math.inf, -1, 1e13):
            with pytest.raises(ValidationError, match="advance"):
                ddb.advance(seconds)
        assert ddb.settings.update_seconds == RulesSettings().update_seconds
        assert ddb.now() == datetime(2026, 3, 10, tzinfo=UTC)


@pytest.mark.server
def test_moving_the_clock_back_never_changes_an_active_table():
    start = datetime(2026, 3, 10, tzinfo=UTC)
    with local_dynamodb(start_time=start, create_seconds=10, windows_end_at_first_wait=False) as ddb:
        client = ddb.client()
        client.create_table(TableName="monotonic", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        ddb.advance(11)  # the window is over, though nobody has looked
        ddb.set_time(start - timedelta(hours=1))  # back before the table was created
        assert client.describe_table(TableName="monotonic")["Table"]["TableStatus"] == "ACTIVE"
        client.put_item(TableName="monotonic", Item={"pk": {"S": "a"}})
        assert json.dumps(ddb.stats()["refusals"]) == "{}"


# -- the wire: any body a client can send ---------------------------------------------------------------------------
HEADERS = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Date": "20260101T000000Z",
           "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/dynamodb/aws4_request, "
                            "SignedHeaders=host, Signature=0"}
OPERATIONS = ["PutItem", "GetItem", "UpdateItem", "Query", "BatchWriteItem", "BatchGetItem", "CreateTable",
              "UpdateTable", "DeleteTable", "DescribeTable", "ListTables", "DescribeTimeToLive", "TagResource"]
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
                        ["TableName", "Item", "Key", "RequestItems", "S", "N", "pk", "Keys", "PutRequest"]),
                        inner, max_size=3), max_leaves=12)


@pytest.fixture(scope="module")
def wire():
    with local_dynamodb("moto") as ddb:
        yield ddb


def post(endpoint_url: str, operation: str, body: bytes) -> tuple[int, bytes]:
    """One raw POST of ``body``; a dropped connection raises."""
    import http.client
    from urllib.parse import urlsplit

    url = urlsplit(endpoint_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        target = {"X-Amz-Target": f"DynamoDB_20120810.{operation}"}
        connection.request("POST", "/", body=body, headers={**HEADERS, **target})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.server
@settings(max_examples=80, deadline=None)
@given(operation=st.sampled_from(OPERATIONS), body=st.one_of(
    st.binary(max_size=40), st.just(b"{" * 3000), JSON.map(lambda v: json.dumps(v).encode())))
def test_any_body_gets_an_answer_in_dynamodbs_shape_never_a_harness_fault(wire, operation, body):
    status, data = post(wire.endpoint_url, operation, body)
    try:
        parsed = json.loads(data)
    except ValueError:
        parsed = None
    is_object = isinstance(parsed, dict)
    try:
        sent = json.loads(body or b"{}")  # no body at all is an empty request, as the engines read it
    except (ValueError, RecursionError):
        sent = None
    if sent is None or not isinstance(sent, dict):  # not a JSON object: DynamoDB's SerializationException or ours
        assert status == 400 and is_object, (status, data[:200])
    if status >= 400 and is_object:
        assert "HarnessFault" not in str(parsed.get("__type")), parsed


@pytest.mark.server
def test_a_body_that_is_not_json_is_dynamodbs_serialization_exception(wire):
    for body in (b"hi", b"\xff\xfe", b"{" * 5000):
        assert post(wire.endpoint_url, "PutItem", body) == (
            400, b'{"__type":"com.amazon.coral.service#SerializationException"}')
