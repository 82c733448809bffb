"""AWS plumbing written once: error codes of a ``ClientError``, throttle tests, lazy clients."""

from __future__ import annotations

import threading
from typing import Any

from botocore.exceptions import ClientError

#: Error codes DynamoDB (and most AWS APIs) use when a request was throttled; retrying later helps.
THROTTLE_CODES = frozenset({
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
})


def error_code(error: BaseException) -> str:
    """The AWS error code of a ``ClientError`` (``""`` for any other exception)."""
    if not isinstance(error, ClientError):
        return ""
    return error.response.get("Error", {}).get("Code", "") or ""


def error_message(error: BaseException) -> str:
    """The AWS error message of a ``ClientError``, or the exception's text."""
    if isinstance(error, ClientError):
        return error.response.get("Error", {}).get("Message") or str(error)
    return str(error)


def is_throttle(error: BaseException) -> bool:
    """True when ``error`` is a ``ClientError`` whose code says the request was throttled."""
    return error_code(error) in THROTTLE_CODES


class LazyClient:
    """A boto3 client created on first use (never at import time), or the one passed in.

    Use as ``self._dynamodb = LazyClient("dynamodb", client)`` and call ``self._dynamodb.get()``, or expose it
    with :func:`client_property`.
    """

    def __init__(self, service: str, client: Any = None, **client_kwargs: Any) -> None:
        self.service = service
        self._client = client
        self._kwargs = client_kwargs
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The client, created now if it was not passed in or made before."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    # Here: importing boto3 (0.4 s) would slow every synth, which imports this module
                    import boto3

                    self._client = boto3.client(self.service, **self._kwargs)
        return self._client


def client_property(attribute: str, doc: str) -> property:
    """A read-only property that returns the client of the :class:`LazyClient` at ``self.<attribute>``.

    The client is created on the first read (a new instance makes no AWS call); ``doc`` is the property's
    docstring, which the API reference shows.
    """

    def client(self):
        return getattr(self, attribute).get()

    client.__doc__ = doc
    return property(client)
