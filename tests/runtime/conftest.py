"""Fixtures shared by the runtime tests of the custom-resource handlers."""

from __future__ import annotations

import pytest

from cdk_ts_runtime.handlers import custom_resource
from tests.support.cloudformation import CloudFormationReplies


@pytest.fixture
def cloudformation(monkeypatch):
    """A local https server standing in for CloudFormation's pre-signed ResponseURL; the handlers trust it."""
    replies = CloudFormationReplies()
    monkeypatch.setattr(custom_resource, "SSL_CONTEXT", replies.client_context)
    yield replies
    replies.close()
