"""A process that imported cdk_ts freezes the garbage collector's objects at exit, after the program's own code."""

from __future__ import annotations

import subprocess
import sys

# registered before cdk_ts is imported, so atexit (last in, first out) runs it after cdk_ts's handler
PROBE = "import atexit, gc; atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0)); "


def exit_report(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", PROBE + code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_importing_cdk_ts_freezes_the_heap_at_exit() -> None:
    assert exit_report("import cdk_ts") == "frozen True"


def test_without_cdk_ts_nothing_is_frozen() -> None:
    assert exit_report("import json") == "frozen False"


def test_importing_twice_registers_one_handler() -> None:
    code = (
        "import atexit, cdk_ts._exit as e; before = atexit._ncallbacks(); e.freeze_heap_at_exit(); "
        "print(atexit._ncallbacks() - before)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "0"
