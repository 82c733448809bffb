"""Old module paths that still import for one release, with a ``DeprecationWarning`` naming the new one."""

from __future__ import annotations

import warnings


def warn_moved(old: str, new: str) -> None:
    """Warn, once per import of ``old``, that it moved to ``new`` and goes away in the next release."""
    warnings.warn(
        f"{old} is deprecated and goes in the next release; import from {new} (or from cdk_ts) instead",
        DeprecationWarning,
        stacklevel=3,
    )
