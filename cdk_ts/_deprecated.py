"""Old module paths that still import for one release, with a ``DeprecationWarning`` naming the new one."""

from __future__ import annotations

import warnings


def warn_moved(old: str, new: str) -> None:
    """Warn, once per import of ``old``, that it moved to ``new`` and goes away in the next minor release."""
    warnings.warn(
        f"{old} is deprecated and will be removed in 0.3.0; import from {new} (or from cdk_ts) instead",
        DeprecationWarning,
        stacklevel=3,
    )
