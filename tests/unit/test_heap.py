"""cdk_ts keeps the garbage collector off what a CDK app imported: before its constructs load, and at exit."""

from __future__ import annotations

import subprocess
import sys

# registered before cdk_ts is imported, so atexit (last in, first out) runs it after cdk_ts's handler
PROBE = "import atexit, gc; atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0)); "
# counts gc.freeze calls in ``calls``, each as the construct-side modules loaded when it was made
COUNTING = (
    "import gc, sys; calls = []; freeze = gc.freeze; "
    "loaded = lambda: sorted(m for m in sys.modules if m.startswith('cdk_ts.') and m != 'cdk_ts._heap'); "
    "gc.freeze = lambda: (calls.append(loaded()), freeze())[1]; "
)


def run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def exit_report(code: str) -> str:
    return run(PROBE + code)


def test_importing_cdk_ts_freezes_the_heap_at_exit() -> None:
    assert exit_report("import cdk_ts") == "frozen True"


def test_without_cdk_ts_nothing_is_frozen() -> None:
    assert exit_report("import json") == "frozen False"


def test_importing_twice_registers_one_handler() -> None:
    code = (
        "import atexit, cdk_ts._heap as h; before = atexit._ncallbacks(); h.freeze_heap_at_exit(); "
        "print(atexit._ncallbacks() - before)"
    )
    assert run(code) == "0"


def freeze_report(code: str, report: str) -> str:
    """``report`` printed after ``code`` runs in a fresh interpreter where ``calls`` counts ``gc.freeze()`` calls."""
    return run(COUNTING + code + f"; print({report})")


def test_the_first_construct_freezes_what_the_app_imported_before_it_loads() -> None:
    code = "import cdk_ts; marker = [object()]; before = gc.get_freeze_count(); cdk_ts.StreamArchiver"
    report = "before, calls, gc.get_freeze_count() > 0, any(o is marker for o in gc.get_objects())"
    # one freeze, while no construct-side module was loaded; the list made before is out of the collector's sight
    assert freeze_report(code, report) == "0 [[]] True False"


def test_later_constructs_freeze_nothing_more() -> None:
    code = "import cdk_ts; cdk_ts.StreamArchiver; cdk_ts.RotatingTimeSeriesTables; cdk_ts.secure_bucket"
    assert freeze_report(code, "len(calls)") == "1"


def test_names_that_load_no_construct_freeze_nothing() -> None:
    code = "import cdk_ts, cdk_ts.plan, cdk_ts.testing; cdk_ts.ShardStrategy; cdk_ts.ColumnSpec; cdk_ts.SinkMode"
    assert freeze_report(code, "len(calls), gc.get_freeze_count()") == "0 0"
