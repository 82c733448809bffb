"""Fail AWS API calls at the boto3 client with botocore's event hooks (no mocks of our code); counting is in
``cdk_ts.testing._engines.RequestCounter`` and re-exported here for the tests."""

from __future__ import annotations

from collections.abc import Callable

from botocore.exceptions import ClientError

from cdk_ts.testing import RequestCounter

__all__ = ["RequestCounter", "client_error", "fail_on_table", "inject_failure"]


def client_error(operation: str, code: str, message: str = "injected", **extra) -> ClientError:
    """A ``ClientError`` as botocore would raise it for ``operation``."""
    return ClientError({"Error": {"Code": code, "Message": message, **extra}}, operation)


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


def fail_on_table(client, operation: str, table: str, code: str, message: str = "injected") -> None:
    """Make every ``operation`` on ``table`` (and only on it) raise ``client_error(operation, code, message)``."""

    def error_for(params: dict) -> ClientError | None:
        return client_error(operation, code, message) if params["TableName"] == table else None

    inject_failure(client, operation, error_for)
