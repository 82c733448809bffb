"""The garbage collector skips what a CDK app imported: once before cdk-ts's constructs load, once at exit.

CPython's cyclic collector walks every tracked object in each full collection. A CDK app's imports are most of
them (aws-cdk-lib's L2 modules, typeguard, jsii: about 100,000 objects before cdk-ts's constructs load, 130,000
after a synth), and they live until the process exits, so walking them finds nothing to free. Measured on the
sample app (validation off, fresh interpreters): loading cdk-ts's construct modules set off a full collection
over the app's imports (0.08-0.11 s), and the interpreter took 0.6-0.7 s to exit after ``app.synth()``
returned, against 0.05 s with the objects frozen first.

``gc.freeze()`` moves the objects that exist at that moment out of the collector's sight. The first freeze
runs when a construct-side name is first asked of the package (``cdk_ts.StreamArchiver``, ``from cdk_ts import
StreamArchiver``); a module imported directly (``from cdk_ts.archive import ...``) does not trigger it, and a later
name then freezes what that module loaded too. In a long-lived process (a notebook, a pytest run that builds
constructs) it freezes everything alive at that moment, not only imports. Frozen objects are still released by
reference counting; objects already in reference cycles when a freeze runs are never collected (the operating
system reclaims them at exit), and they no longer appear in ``gc.get_objects()`` or ``gc.get_referrers()``.
``gc.unfreeze()`` returns them to the collector. CPython does not promise to finalize objects that still exist
when the interpreter exits (the data model's note on ``__del__``). Handlers registered with :mod:`atexit` (log
flushing, jsii's node process, temporary directories) run as before. ``cdk_ts.plan``, ``cdk_ts.testing`` and
the runtime-side names (``cdk_ts.ShardStrategy``, ...) load no construct, so only the freeze at exit applies.
"""

from __future__ import annotations

import atexit
import gc

_registered = False
_imports_frozen = False


def freeze_heap_at_exit() -> None:
    """Freeze every object the garbage collector tracks when the interpreter exits (once per process)."""
    global _registered
    if not _registered:
        atexit.register(gc.freeze)
        _registered = True


def freeze_imports() -> None:
    """Freeze every object the garbage collector tracks now, once per process: before the constructs load."""
    global _imports_frozen
    if not _imports_frozen:
        gc.freeze()
        _imports_frozen = True
