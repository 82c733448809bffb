"""The scenario's progress output, shared by its entry point and its step modules."""

from __future__ import annotations


def say(text: str = "") -> None:
    """Progress output a person can follow."""
    print(text, flush=True)
