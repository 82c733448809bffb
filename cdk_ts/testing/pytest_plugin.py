"""pytest plugin (entry point ``pytest11``, name ``cdk_ts``): the ``local_dynamodb`` fixture, with no conftest code.

```python
import pytest

@pytest.mark.local_dynamodb(write_units_per_second=10, update_seconds=60)
def test_hot_key(local_dynamodb):
    client = local_dynamodb.client()
    ...
    assert local_dynamodb.throttles(reason="TableWriteKeyRangeThroughputExceeded") > 0
```

Each test that asks for the fixture gets its own engine and proxy (``cdk_ts.testing.LocalDynamoDB``), stopped
when the test ends, whether it passed, failed or was interrupted. While the test runs, ``AWS_ENDPOINT_URL_DYNAMODB``
points boto3 at it (so code that builds its own client, a Lambda handler for instance, talks to it) with dummy
credentials and ``us-east-1`` if none are set. The marker's arguments are ``local_dynamodb``'s (``engine``,
``guesses``, ``disabled_rules``, ``start_time`` and ``RulesSettings`` fields); ``--cdk-ts-engine`` and
``--cdk-ts-guesses`` set the defaults for a run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from cdk_ts.testing._local import LocalDynamoDB, start_local_dynamodb

MARKER = "local_dynamodb"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--cdk-ts-engine`` and ``--cdk-ts-guesses``: the fixture's defaults for this run."""
    group = parser.getgroup("cdk_ts", "cdk-ts local DynamoDB")
    group.addoption("--cdk-ts-engine", choices=["moto", "dynalite"], default="moto",
                    help="the engine behind the rules proxy (default: moto)")
    group.addoption("--cdk-ts-guesses", action="store_true", default=False,
                    help="also apply the rules whose numbers are guesses (default: documented rules only)")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker, so ``--strict-markers`` accepts it."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(engine='moto', guesses=False, disabled_rules=(), start_time=None, **settings): "
        "settings of the local_dynamodb fixture (cdk_ts.testing)",
    )


def _options(request: pytest.FixtureRequest) -> dict[str, Any]:
    options: dict[str, Any] = {
        "engine": request.config.getoption("--cdk-ts-engine"),
        "guesses": request.config.getoption("--cdk-ts-guesses"),
    }
    for marker in reversed(list(request.node.iter_markers(MARKER))):  # the closest marker wins
        if marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only, not {marker.args}")
        options.update(marker.kwargs)
    return options


@pytest.fixture(name="local_dynamodb")
def local_dynamodb_fixture(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalDynamoDB]:
    """A local DynamoDB that throttles and refuses as DynamoDB does, for this test (see the module's docstring)."""
    local = start_local_dynamodb(**_options(request))
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", local.endpoint_url)
        for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                            ("AWS_DEFAULT_REGION", "us-east-1")):
            if name not in os.environ:
                monkeypatch.setenv(name, value)
        yield local
    finally:
        local.stop()
