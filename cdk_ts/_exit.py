"""A CDK app's process exits without the garbage collector walking aws-cdk-lib's modules once more.

At exit CPython clears every module and runs the cyclic garbage collector over what is left. A synth leaves
about 130,000 tracked objects (aws-cdk-lib's L2 modules, typeguard, the constructs): measured on the sample app,
the interpreter took 0.6-0.7 s to exit after ``app.synth()`` returned, against 0.05 s with the objects frozen
first. ``gc.freeze()`` at exit moves them out of the collector's sight. Objects are still released by
reference counting; only objects in reference cycles are left for the operating system to reclaim, and CPython
does not promise to finalize objects that still exist when the interpreter exits (the data model's note on
``__del__``). Handlers registered with :mod:`atexit` (log flushing, jsii's node process, temporary
directories) run as before.
"""

from __future__ import annotations

import atexit
import gc

_registered = False


def freeze_heap_at_exit() -> None:
    """Freeze every object the garbage collector tracks when the interpreter exits (once per process)."""
    global _registered
    if not _registered:
        atexit.register(gc.freeze)
        _registered = True
