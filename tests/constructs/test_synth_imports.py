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


def test_the_sample_app_imports_neither_boto3_nor_botocores_client_config() -> None:
    # botocore.config brings urllib3 and http.client: about 0.16 s of every synth, for settings only clients use
    code = (
        "import sys, app, cdk_ts; [getattr(cdk_ts, name) for name in cdk_ts.__all__]; "
        "print(sorted(m for m in ('boto3', 'botocore.config', 'urllib3') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


def test_client_settings_are_botocore_configs_built_once() -> None:
    from botocore.config import Config

    from cdk_ts_runtime import _retries

    assert isinstance(_retries.DATA_PATH, Config)
    assert _retries.DATA_PATH is _retries.DATA_PATH
    assert _retries.DATA_PATH.retries == {"mode": "standard", "total_max_attempts": 3}
    assert (_retries.METRICS.connect_timeout, _retries.METRICS.read_timeout) == (2, 5)
    assert _retries.WRITE_PATH.retries["total_max_attempts"] == 1
