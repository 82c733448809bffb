"""Count and fail AWS API calls at the boto3 client with botocore's event hooks (no mocks of our code)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from botocore.exceptions import ClientError


class RequestCounter:
    """Counts every API call a boto3 client makes, by operation name (thread-safe)."""

    def __init__(self, client) -> None:
        self.calls: Counter[str] = Counter()
        self.params: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        client.meta.events.register("provide-client-params.*.*", self._record)

    def _record(self, params, model, **_kwargs) -> None:
        with self._lock:
            self.calls[model.name] += 1
            self.params.append((model.name, dict(params)))

    def reset(self) -> None:
        """Forget the calls counted so far."""
        with self._lock:
            self.calls.clear()
            self.params.clear()


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
