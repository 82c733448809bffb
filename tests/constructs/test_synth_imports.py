"""What a synth imports: the construct side reads the rotation's contracts without importing the run itself."""

from __future__ import annotations

import subprocess
import sys


def test_rule_texts_do_not_import_the_rotation_run() -> None:
    # the rules' descriptions need OPERATIONS; importing rotator brought the run's 8 modules into every synth
    code = (
        "import sys, cdk_ts.rotation._texts as texts; "
        "print(texts.OPERATIONS, 'cdk_ts_runtime._rotation.rotator' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split(") ")[-1].strip() == "False", result.stdout


def test_rotator_still_exports_operations() -> None:
    from cdk_ts_runtime._rotation import config, rotator

    assert rotator.OPERATIONS is config.OPERATIONS == ("create_new", "resize_old", "reconcile")
