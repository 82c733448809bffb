"""Fixtures of the whole-app synth tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_cli_environment(monkeypatch):
    """Synthesize as `cdk synth` does with no account or Region: the CLI's env must not leak in."""
    monkeypatch.delenv("CDK_DEFAULT_ACCOUNT", raising=False)
    monkeypatch.delenv("CDK_DEFAULT_REGION", raising=False)
