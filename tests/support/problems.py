"""A construct's validation error: every problem at once, under the construct's path."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def raises_problems(build: Callable[[], object], path: str, *problems: str) -> str:
    """``build()`` raises one ValueError, ``{path}: N problems: ...``, naming each of ``problems``; its message.

    ``problems`` are fragments of the message, one per problem the construct must report.
    """
    with pytest.raises(ValueError) as raised:
        build()
    message = str(raised.value)
    assert message.startswith(f"{path}: {len(problems)} problems:"), message
    missing = [problem for problem in problems if problem not in message]
    assert not missing, f"{missing} not in {message!r}"
    return message
