"""Counting AWS API calls at the boto3 client: ``cdk_ts.testing._engines.RequestCounter``, re-exported for the tests.

A service's refusal (an error code and message) goes in as the service's bytes on the wire, parsed by botocore:
``tests.support.wire.answer_error``.
"""

from __future__ import annotations

from cdk_ts.testing import RequestCounter

__all__ = ["RequestCounter"]
