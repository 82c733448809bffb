"""How an unknown keyword is reported wherever ``**options`` takes keywords: runtime factories and constructs."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def unknown_keyword(name: str, valid: Iterable[str]) -> str:
    """``unknown keyword argument 'x'; did you mean 'y'?``, or the valid keywords when none is close.

    A ``**options`` parameter accepts any keyword at run time, so a misspelt one must be named with
    the way out, as Python itself does for a signature without ``**``.
    """
    choices = sorted(valid)
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"the keywords are {', '.join(choices)}"
    return f"unknown keyword argument {name!r}; {hint}"
