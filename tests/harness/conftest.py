"""The rules proxy over each engine, and a client of it that never retries: what the harness tests talk to."""

from __future__ import annotations

import pytest

from tests.support.conformance import NO_RETRIES


@pytest.fixture(params=["rules_proxy", "rules_proxy_dynalite"])
def proxy(request):
    """The rules proxy over moto_server, then over dynalite: the rules must not depend on the engine."""
    return request.getfixturevalue(request.param)


@pytest.fixture
def ddb(proxy):
    """A client of the proxy that does not retry, so each refusal or throttle is seen as DynamoDB sends it."""
    return proxy.client(config=NO_RETRIES)
