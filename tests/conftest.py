"""Fixtures shared by every test level: AWS credentials, moto, and local servers on 127.0.0.1."""

from __future__ import annotations

import itertools
import os

# Set before anything imports aws_cdk (jsii reads it when its Node runtime starts).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
# aws-cdk-lib's built-in CloudFormation Validate (defaultValidationEnabled in core/lib/private/synthesis-validation.js)
# starts a WebAssembly engine in every process that synthesizes: the sample app's synth took 20.9 CPU s with it and
# 6.5 s without. Without the @aws-cdk/core:validateAgainstDefaultRules flag its findings are warnings that fail no
# synth. The suite's processes and their subprocesses skip it; tests/constructs/test_cloudformation_validate.py runs
# it on the sample app and asserts it finds nothing (cfn-lint and cdk-nag judge the templates elsewhere).
os.environ.setdefault("CDK_VALIDATION", "false")

import boto3
import pytest
from moto import mock_aws

from cdk_ts.testing import LocalServer, server_client_for, start_dynalite, start_moto_server, start_rules_proxy
from tests.support.botocore_models import share_parsed_models
from tests.support.environment import REGION, RULES_START_TIME
from tests.support.examples import register_profiles
from tests.support.sharding import create_tables
from tests.support.streams import create_stream_table
from tests.support.throttling import ROUTER_START, SHARDING_START

share_parsed_models()
register_profiles()  # before Hypothesis's plugin loads --hypothesis-profile (pytest_configure)
_counter = itertools.count()
#: Windows longer than the proxy's defaults (a few seconds), lasting their whole seconds even after a DescribeTable
#: has seen them: tests on a frozen clock see UPDATING and CREATING until they move the clock.
LONG_WINDOWS = {"update_seconds": 60.0, "create_seconds": 20.0, "windows_end_at_first_wait": False}


#: Fixtures that start or use a server process on 127.0.0.1, and the parameter values that pick one.
_SERVER_FIXTURES = frozenset({"moto_server", "dynalite", "server_dynamodb", "rules_proxy", "rules_proxy_dynalite",
                              "limited", "router_proxy"})
_SERVER_PARAMS = frozenset({"moto_server", "dynalite"})


def pytest_collection_modifyitems(items):
    """Mark every test that needs a local server ``server``, so ``scripts/test.sh --quick`` can leave them out."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        picked = {value for value in params.values() if isinstance(value, str)}
        if _SERVER_FIXTURES.intersection(item.fixturenames) or _SERVER_PARAMS.intersection(picked):
            item.add_marker(pytest.mark.server)


@pytest.fixture(autouse=True)
def fake_aws_environment(monkeypatch):
    """No test reaches real AWS: dummy credentials, a fixed region, no endpoint overrides."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)


@pytest.fixture
def aws():
    """An in-process moto mock of every AWS service, fresh for each test."""
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(aws):
    """A moto-backed DynamoDB client."""
    return boto3.client("dynamodb", region_name=REGION)


@pytest.fixture(scope="session")
def moto_server():
    """``moto_server`` running as a separate process on 127.0.0.1 for the whole session."""
    server = start_moto_server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def dynalite():
    """dynalite (npm) running on 127.0.0.1 for the whole session: an independent DynamoDB implementation."""
    server = start_dynalite()
    yield server
    server.stop()


@pytest.fixture(params=["moto_server", "dynalite"])
def server_dynamodb(request):
    """A DynamoDB client for each local server in turn: behaviour must hold on both."""
    server: LocalServer = request.getfixturevalue(request.param)
    return server_client_for(server, region=REGION)


@pytest.fixture(params=["moto", "moto_server", "dynalite"])
def any_dynamodb(request):
    """A DynamoDB client for in-process moto, then moto_server, then dynalite."""
    if request.param == "moto":
        with mock_aws():
            yield boto3.client("dynamodb", region_name=REGION)
        return
    server: LocalServer = request.getfixturevalue(request.param)
    yield server_client_for(server, region=REGION)


@pytest.fixture
def unique_name():
    """A fresh name prefix, so tests sharing a session-wide server never see each other's tables."""
    return f"t{os.getpid()}x{next(_counter)}"


@pytest.fixture
def rules_proxy(moto_server):
    """DynamoDB's rules in front of the session's moto_server, on a frozen clock at ``RULES_START_TIME``.

    Default ``RulesSettings`` but for long windows (:data:`LONG_WINDOWS`: UPDATING 60 s, CREATING 20 s), so a
    test sees the transitional states; ``rules_proxy.configure(...)`` changes them. Table names must still be
    unique (``unique_name``): the engine is shared by the session.
    """
    proxy = start_rules_proxy(moto_server, start_time=RULES_START_TIME, **LONG_WINDOWS)
    yield proxy
    proxy.stop()


@pytest.fixture
def rules_proxy_dynalite(dynalite):
    """``rules_proxy`` over the session's dynalite."""
    proxy = start_rules_proxy(dynalite, start_time=RULES_START_TIME, **LONG_WINDOWS)
    yield proxy
    proxy.stop()


@pytest.fixture
def limited(request, unique_name):
    """``(proxy, main, metadata)``: a rules proxy (frozen clock, 10 write units/s per partition key) in front of
    dynalite, with a ShardedTable's tables (a test may lower or raise the limit with ``proxy.configure``).

    dynalite, because it applies a conditional update atomically as DynamoDB does (moto_server does not).
    Each key value is its own partition (``partition_per_key_value``): the writers are tested against one
    key's limit, as on a table whose hot keys adaptive capacity has isolated, not against hash collisions.
    """
    engine = request.getfixturevalue("dynalite")
    proxy = start_rules_proxy(engine, start_time=SHARDING_START, create_seconds=0, write_units_per_second=10,
                              partition_per_key_value=True)
    main, metadata = create_tables(proxy.client(), unique_name)
    yield proxy, main, metadata
    proxy.stop()


@pytest.fixture
def router_proxy(moto_server):
    """A rules proxy (frozen clock at ``ROUTER_START``, 10 write units/s per partition key) in front of moto_server.

    Each key value is its own partition (``partition_per_key_value``), as in ``limited``.
    """
    proxy = start_rules_proxy(moto_server, start_time=ROUTER_START, create_seconds=0, write_units_per_second=10,
                              partition_per_key_value=True)
    yield proxy
    proxy.stop()


@pytest.fixture
def sharded_tables(any_dynamodb, unique_name):
    """``(client, main, metadata)``: a ShardedTable's two tables, ACTIVE, on moto, moto_server and dynalite in turn."""
    return (any_dynamodb, *create_tables(any_dynamodb, unique_name))


@pytest.fixture
def stream_table(aws):
    """``(client, stream_arn)``: moto table ``readings`` with a NEW_AND_OLD_IMAGES stream, and the archive bucket."""
    return create_stream_table()
