"""End to end: deploy the sample app to moto_server, run the scenario, destroy, leave no process behind.

One deploy serves every assertion (a deploy and its scenario cost minutes of CPU): the scenario runs with
``--keep``, its steps and output are checked, the kept stack is reached from another shell as printed, then
destroyed with the scenario's own ``cdk destroy`` call (the one the run without ``--keep`` makes), and SIGTERM
stops the emulator.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

# End to end, and each test takes tens of seconds: `-m "not e2e and not slow"` leaves them out.
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
STACK = "CdkTsSample"
STEPS = {
    "reconcile creates the current period's table",
    "ingest writes every reading",
    "every write read back across the shards",
    "every stream record is one archived line",
    "compaction rewrites the closed hours as Parquet, each redelivered record once",
    "the union view counts every stream record written once, before and after compaction",
    "a late record is counted once: after the next run when its hour was compacted",
}


def test_the_sample_app_deploys_runs_the_scenario_is_kept_until_sigterm_and_destroys(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    results_file = tmp_path / "results.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "examples.scenario", "--keep", "--results", str(results_file)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        output = output_until_kept(process)
        assert "Stop with Ctrl-C" in output, output[-6000:]
        results = json.loads(results_file.read_text())
        every_step_passed(results, output)
        url = re.search(r"on the emulator at (http://localhost:\d+)", output).group(1)
        assert f"  export AWS_ENDPOINT_URL={url}\n" in output
        assert "  export AWS_ACCESS_KEY_ID=testing\n" in output and "  export AWS_DEFAULT_REGION=us-east-1\n" in output
        assert results["destroyed"] is False
        time.sleep(3)  # still there a while later: the stack answers at the printed endpoint
        assert process.poll() is None
        cloudformation = boto3.client(
            "cloudformation", endpoint_url=url, region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="testing",
        )
        (stack,) = cloudformation.describe_stacks(StackName=STACK)["Stacks"]
        assert stack["StackStatus"].endswith("_COMPLETE")
        looked_up = commands_from_another_shell_work(output, env)
        the_stack_destroys(output, url, cloudformation)
        process.send_signal(signal.SIGTERM)
        rest = process.communicate(timeout=60)[0]
    finally:
        if process.poll() is None:
            process.kill()
    assert "emulator: stopped pid" in rest
    assert process.returncode == 0, output[-3000:] + rest
    assert not Path(f"/proc/{results['emulator_pid']}").exists(), "the emulator process is still running"
    if not looked_up:
        pytest.skip("no aws CLI here to run the printed lookup; everything else, cdk-ts status included, passed")


def output_until_kept(process: subprocess.Popen) -> str:
    """The scenario's output up to its "Stop with Ctrl-C" line (or 15 minutes, or its end)."""
    lines = []
    deadline = time.monotonic() + 900
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Stop with Ctrl-C") or time.monotonic() > deadline:
            break
    return "".join(lines)


def every_step_passed(results: dict, output: str) -> None:
    """Every step's result is right, the named ones ran, and the output holds no EMF line."""
    failed = [s for s in results["steps"] if not s["ok"]]
    assert failed == [], output[-6000:]
    assert {s["step"] for s in results["steps"]} >= STEPS
    assert len(results["steps"]) >= 20
    # the output is the steps: the handlers' EMF metric lines went to build/scenario-logs/, as Lambda's to its logs
    emf = [line for line in output.splitlines() if line.startswith("{") and '"_aws"' in line]
    assert emf == [], emf[:3]


def the_stack_destroys(output: str, url: str, cloudformation) -> None:
    """The kept stack is deleted by the scenario's own ``cdk destroy`` call, from the cloud assembly it deployed."""
    from examples.scenario import ASSEMBLY, cdk, cli_environment  # imports cdk_ts (jsii): here, not at collection

    assert re.search(r"^layer: .*\(pandas_layer_arn=\S+\)$", output, re.MULTILINE), output[-3000:]
    cdk(cli_environment(url), "destroy", "--force", app=ASSEMBLY)
    with pytest.raises(ClientError, match="does not exist"):
        cloudformation.describe_stacks(StackName=STACK)


def commands_from_another_shell_work(output: str, env: dict[str, str]) -> bool:
    """Each command ``--keep`` prints runs, in bash with the printed exports, as a user pastes it into a shell.

    The rotation function's name comes from the printed lookup (``aws cloudformation ...``), which must answer
    the name ``cdk-ts status --function`` is given, and ``cdk-ts status`` must report that rotation. False when
    there is no aws CLI to run the lookup with (``cdk-ts status`` was checked all the same).
    """
    exports = dict(re.findall(r"^  export (\w+)=(\S+)$", output, re.MULTILINE))
    shell_env = {**env, **exports}
    lines = [line.strip() for line in output.splitlines() if line.startswith("  ")]
    (status_line,) = [line for line in lines if "cdk-ts status --function" in line]
    status = subprocess.run(["bash", "-c", status_line], cwd=REPO, env=shell_env, capture_output=True, text=True,
                            timeout=300, check=False)
    assert status.returncode in (0, 1), f"{status_line}\n{status.stdout}{status.stderr}"
    assert re.search(r"^Rotation \S+ \(daily\)", status.stdout, re.MULTILINE), status.stdout
    (lookup_line,) = [line for line in lines if line.startswith("aws cloudformation list-stack-resources")]
    function = status_line.split("--function", 1)[1].split()[0].strip("'\"")
    if shutil.which("aws", path=shell_env.get("PATH")) is None:
        return False
    lookup = subprocess.run(["bash", "-c", lookup_line], cwd=REPO, env=shell_env, capture_output=True, text=True,
                            timeout=120, check=False)
    assert lookup.returncode == 0, lookup.stderr
    assert lookup.stdout.strip() == function, (lookup_line, lookup.stdout)
    return True
