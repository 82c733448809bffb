"""Fail AWS API calls at the boto3 client with botocore's event hooks (no mocks of our code); counting is in
``cdk_ts.testing._engines.RequestCounter`` and re-exported here for the tests.

A service's refusal (an error code and message) goes in as the service's bytes on the wire instead, parsed by
botocore: ``tests.support.wire.answer_error``. The hook here is for failures that are no answer of a service.
"""

from __future__ import annotations

from collections.abc import Callable

from cdk_ts.testing import RequestCounter

__all__ = ["RequestCounter", "inject_failure"]


def inject_failure(client, operation: str, make_error: Callable[[dict], Exception | None]) -> None:
    """Make ``client`` raise ``make_error(params)`` for ``operation`` whenever it returns an exception.

    ``params`` are the API parameters as the caller passed them (``{"TableName": ...}``). The hook
    runs before the request is built, so a failed call reaches no server.
    """

    def hook(params, **_kwargs):
        error = make_error(params)
        if error is not None:
            raise error

    client.meta.events.register(f"provide-client-params.*.{operation}", hook)
