"""The Timestream ingestion endpoint DescribeEndpoints names, and a write client for it, renewed when its TTL passes.

Timestream for LiveAnalytics serves each account from one cell of a Region. Its developer guide's endpoint
discovery pattern ("How the endpoint discovery pattern works", "Implementing the endpoint discovery pattern":
https://docs.aws.amazon.com/timestream/latest/developerguide/Using-API.endpoint-discovery.how-it-works.html) is:
call DescribeEndpoints, send requests to the ``Address`` it returns for ``CachePeriodInMinutes`` (any endpoint of
the list will do), then call DescribeEndpoints again, because an endpoint stops working once its TTL has passed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config

from cdk_ts_runtime._errors import CdkTsError


class EndpointDiscoveryError(CdkTsError, LookupError):
    """DescribeEndpoints answered without an endpoint (the guide says a successful answer holds at least one)."""


class DiscoveredEndpoint:
    """A ``timestream-write`` client for the endpoint DescribeEndpoints names, found again once its TTL has passed.

    Nothing is called until :meth:`client` is.

    :param discovery_client: the ``timestream-write`` client DescribeEndpoints is called on, or a function that
        makes it (called at the first discovery, so nothing is made before the caller's checks); the write
        client is made for its Region.
    :param client_config: the botocore ``Config`` of the write client.
    :param clock: seconds on a clock that never goes back.
        Default: ``time.monotonic``.
    """

    def __init__(
        self, discovery_client: Any, *, client_config: Config, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._discovery = discovery_client
        self._config = client_config
        self._clock = clock
        self._client: Any = None
        self._expires_at = 0.0
        #: ``https://{Address}`` of the endpoint in use (None before the first discovery).
        self.endpoint_url: str | None = None

    def client(self) -> Any:
        """The write client for an endpoint whose TTL has not passed; calls DescribeEndpoints when there is none."""
        if self._client is None or self._clock() >= self._expires_at:
            self._discover()
        return self._client

    def _discover(self) -> None:
        asked_at = self._clock()  # the TTL counts from the question, so the endpoint is never used past it
        if callable(self._discovery):
            self._discovery = self._discovery()
        endpoints = self._discovery.describe_endpoints().get("Endpoints") or []
        if not endpoints:
            raise EndpointDiscoveryError(
                "timestream-write DescribeEndpoints returned no endpoint; pass endpoint_url= (or client=) to "
                "TimestreamWriter.from_env to write to a known endpoint"
            )
        endpoint = endpoints[0]
        self.endpoint_url = f"https://{endpoint['Address']}"
        self._expires_at = asked_at + 60 * endpoint["CachePeriodInMinutes"]
        self._client = boto3.client(
            "timestream-write",
            endpoint_url=self.endpoint_url,
            region_name=self._discovery.meta.region_name,
            config=self._config,
        )
