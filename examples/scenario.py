#!/usr/bin/env python3
"""Deploy the sample app to a local AWS emulator (moto_server), run a scenario through it, tear it down.

The emulator accepts the CloudFormation deployment but cannot run Lambda code (that needs Docker),
so each step runs the deployed function's own handler code on this host, with the environment
read back from the deployed function. Exit code 0 only when every step's result is right.

Usage: .venv/bin/python -m examples.scenario [--port N] [--keep] [--results FILE]

``--keep`` leaves the stack deployed and the emulator running after the scenario, prints how to reach
them (endpoint URL, stack name, the variables to export) and waits until it is stopped (Ctrl-C or
SIGTERM), then stops the emulator.

Each step records ``(step, ok, figure)``; ``--results`` writes them as JSON (what the e2e test asserts
on), along with the emulator's PID and whether the stack was destroyed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cdk_ts.testing import start_moto_server
from examples import archive_step, device_log_step, rotation_step, sharding_step, telemetry_step
from examples.compaction_step import CompactionSteps, publish_stand_in_layer
from examples.progress import LOG_DIR, say

REPO = Path(__file__).resolve().parents[1]
ACCOUNT, REGION = "123456789012", "us-east-1"
STACK = "CdkTsSample"


# ---- emulator and CDK CLI ---------------------------------------------------------------------


def cli_environment(url: str) -> dict[str, str]:
    """Environment for the CDK CLI and boto3: the emulator endpoint, dummy credentials, fixed account."""
    return {
        **os.environ,
        "AWS_ENDPOINT_URL": url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "CDK_DEFAULT_ACCOUNT": ACCOUNT,
        "CDK_DEFAULT_REGION": REGION,
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_DISABLE_VERSION_CHECK": "1",
    }


def cdk(env: dict[str, str], *args: str, app: str | None = None) -> None:
    """Run the pinned CDK CLI from node_modules; raise with its output when it fails.

    ``app`` is the CLI's ``--app``: the sample app's command, or a synthesized cloud assembly (``cdk.out``) to deploy
    or destroy without running the app again. Without one the CLI runs in an empty folder, where it finds no
    ``cdk.json`` and so synthesizes nothing (``cdk bootstrap`` needs only the environment it is given).
    """
    cli = REPO / "node_modules" / ".bin" / "cdk"
    if not cli.exists():
        raise RuntimeError(f"{cli} not found: scripts/setup.sh installs the pinned CDK CLI (Node 20+ and npm needed)")
    command = [str(cli), *args, *(["--app", app] if app else []), "--no-notices"]
    with contextlib.ExitStack() as stack:
        cwd = REPO if app else stack.enter_context(tempfile.TemporaryDirectory(prefix="cdk-ts-cli-"))
        result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"cdk {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


# The sample app's command, and the cloud assembly its first deploy synthesized: later calls reuse the assembly, as
# `cdk deploy --app cdk.out` does, rather than paying a synth (about 20 CPU s of Python and Node) each time.
APP = f"{sys.executable} app.py"
ASSEMBLY = "cdk.out"


def stack_outputs(cloudformation) -> dict[str, str]:
    """The stack's outputs; resolved from the synthesized template when the emulator returns none.

    moto_server leaves ``Outputs`` out of DescribeStacks for this stack, so each output's ``Ref``
    is looked up among the stack's resources instead (literal values are taken as they are).
    """
    stack = cloudformation.describe_stacks(StackName=STACK)["Stacks"][0]
    if stack.get("Outputs"):
        return {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
    template = synthesized_template()
    paginator = cloudformation.get_paginator("list_stack_resources")
    physical = {
        r["LogicalResourceId"]: r.get("PhysicalResourceId", "")
        for page in paginator.paginate(StackName=STACK)
        for r in page["StackResourceSummaries"]
    }
    outputs = {}
    for key, output in template.get("Outputs", {}).items():
        value = output["Value"]
        if isinstance(value, str):
            outputs[key] = value
        elif isinstance(value, dict) and "Ref" in value and value["Ref"] in physical:
            outputs[key] = physical[value["Ref"]]
    return outputs


def synthesized_template() -> dict:
    """The stack's template as ``cdk deploy`` synthesized it (``cdk.out``)."""
    return json.loads((REPO / "cdk.out" / f"{STACK}.template.json").read_text())


def output_logical_id(key: str) -> str:
    """The logical ID of the resource the stack output ``key`` names (its ``Ref``), from the synthesized template."""
    return synthesized_template()["Outputs"][key]["Value"]["Ref"]


class Scenario:
    """The steps run against the deployed stack; each records a check and the figure it produced.

    A table of contents: each step names the module that holds it (one per group of steps), and the class keeps
    only what the steps share (the stack's outputs, the deployed functions' environments, the period tables and
    the results).
    """

    def __init__(self) -> None:
        import boto3

        self.boto3 = boto3
        self.results: list[tuple[str, bool, str]] = []
        #: The stream records the archive step wrote, by the archiver's output name.
        self.archived: dict[str, list[dict]] = {}
        self.outputs = stack_outputs(boto3.client("cloudformation"))
        self.today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)

    # -- steps --

    def rotation(self) -> None:
        """1-2. Deploy-time reconcile, then three days of create_new/resize_old (``examples/rotation_step.py``)."""
        rotation_step.rotation(self)

    def mappings(self) -> None:
        """2b. Every stream has its event source mapping (``examples/rotation_step.py``)."""
        rotation_step.mappings(self)

    def telemetry(self) -> None:
        """3. Batched multi-measure ingest and a range read across period tables (``examples/telemetry_step.py``)."""
        telemetry_step.telemetry(self)

    def device_log(self) -> None:
        """4. The sample data and the seven access patterns (``examples/device_log_step.py``)."""
        device_log_step.device_log(self)

    def sharding(self) -> None:
        """5. A hot key through the sharded writer, read back from every shard (``examples/sharding_step.py``)."""
        sharding_step.sharding(self)

    def archive(self) -> None:
        """6. Stream records through each archiver's code into the archive bucket (``examples/archive_step.py``)."""
        archive_step.archive(self)

    # Step 7, the compaction, is ``examples/compaction_step.py``'s ``CompactionSteps.compaction``.

    # -- what the steps share --

    def check(self, step: str, ok: bool, figure: str) -> None:
        """Record one result and print it."""
        self.results.append((step, ok, figure))
        say(f"  {'ok  ' if ok else 'FAIL'} {step}: {figure}")

    def function_environment(self, output: str) -> dict[str, str]:
        """The deployed function's environment, read back from the emulator."""
        name = self.outputs[output]
        config = self.boto3.client("lambda").get_function_configuration(FunctionName=name)
        return config.get("Environment", {}).get("Variables", {})

    @contextlib.contextmanager
    def deployed_environment(self, output: str) -> Iterator[dict[str, str]]:
        """Run host code with a deployed function's environment, as Lambda would, then restore ours."""
        env = self.function_environment(output)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield env
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def tables(self) -> list[str]:
        """Every table name in the emulator (all pages)."""
        client, names, kwargs = self.boto3.client("dynamodb"), [], {}
        while True:
            page = client.list_tables(**kwargs)
            names += page["TableNames"]
            if not page.get("LastEvaluatedTableName"):
                return names
            kwargs["ExclusiveStartTableName"] = page["LastEvaluatedTableName"]

    def period_tables(self) -> list[str]:
        """The telemetry period tables, oldest first."""
        prefix = self.outputs["TelemetryTablePrefix"] + "_"
        return sorted(t for t in self.tables() if t.startswith(prefix))

    def capacity(self, name: str) -> str:
        """``read/write`` capacity of one table, or ``on-demand``."""
        table = self.boto3.client("dynamodb").describe_table(TableName=name)["Table"]
        if table.get("BillingModeSummary", {}).get("BillingMode") == "PAY_PER_REQUEST":
            return "on-demand"
        throughput = table["ProvisionedThroughput"]
        return f"{throughput['ReadCapacityUnits']}/{throughput['WriteCapacityUnits']}"

    def day(self, offset: int) -> datetime:
        """UTC midnight ``offset`` days from today."""
        return self.today + timedelta(days=offset)

    def stream_records(self, tables: list[str]) -> list[dict]:
        """Every record in the tables' streams, oldest first, as Lambda delivers them (with ``eventSourceARN``)."""
        return archive_step.stream_records(self.boto3.client("dynamodb"), self.boto3.client("dynamodbstreams"), tables)

    def summary(self) -> bool:
        """Print the summary table; True when every check passed."""
        say("\nSummary")
        width = max(len(step) for step, _ok, _figure in self.results)
        for step, ok, figure in self.results:
            say(f"  {'ok  ' if ok else 'FAIL'}  {step.ljust(width)}  {figure}")
        passed = sum(ok for _step, ok, _figure in self.results)
        say(f"\n{passed} passed, {len(self.results) - passed} failed")
        return passed == len(self.results)


def main(argv: list[str] | None = None) -> int:
    """Deploy, run the scenario, destroy; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="emulator port (default: a free one)")
    parser.add_argument(
        "--keep", action="store_true",
        help="keep the stack and the emulator running until Ctrl-C or SIGTERM, and print how to reach them",
    )
    parser.add_argument("--results", type=Path, help="write every step's result to this JSON file")
    args = parser.parse_args(argv)
    say("cdk-ts sample: deploy to a local emulator, run the scenario, tear down")
    say("note: moto_server deploys the CloudFormation stack but cannot execute Lambda code (that needs Docker);")
    say("      each step runs the deployed function's handler code on this host with its deployed environment.")
    say("      What a handler writes (EMF metric lines, JSON logs), which Lambda would send to CloudWatch Logs,")
    say(f"      goes to {LOG_DIR.relative_to(REPO)}/<function>.log.")
    server = start_moto_server(port=args.port or None, keep_stream_records=True, url_host="localhost")
    say(f"emulator: moto_server pid {server.pid} at {server.endpoint_url}")
    scenario: Scenario | None = None
    destroyed = False
    results: list = []
    try:
        env = cli_environment(server.endpoint_url)
        os.environ.update({k: v for k, v in env.items() if k.startswith(("AWS_", "CDK_"))})
        started = time.monotonic()
        cdk(env, "bootstrap", f"aws://{ACCOUNT}/{REGION}")  # no app: nothing to synthesize
        say(f"bootstrap: done ({time.monotonic() - started:.1f} s)")
        import boto3

        layer = ["-c", f"pandas_layer_arn={publish_stand_in_layer(boto3.client('lambda'))}"]
        say(f"layer: a stand-in for the AWS SDK for pandas layer published ({layer[1]})")
        started = time.monotonic()
        cdk(env, "deploy", "--require-approval", "never", *layer, app=APP)
        say(f"deploy: {STACK} deployed ({time.monotonic() - started:.1f} s)")
        started = time.monotonic()
        cdk(env, "deploy", "--require-approval", "never", app=ASSEMBLY)
        say(f"deploy again: no-op update accepted ({time.monotonic() - started:.1f} s)")
        try:
            scenario = Scenario()
            for step in (
                scenario.rotation,
                scenario.mappings,
                scenario.telemetry,
                scenario.device_log,
                scenario.sharding,
                scenario.archive,
                CompactionSteps(scenario, json.loads((REPO / "cdk.out" / f"{STACK}.template.json").read_text()),
                                STACK, ACCOUNT).compaction,
            ):
                try:
                    step()
                except Exception as error:  # noqa: BLE001 - report the step and go on to the summary
                    scenario.check(step.__name__, False, f"{type(error).__name__}: {error}")
            scenario.summary()
        finally:
            if not args.keep:
                cdk(env, "destroy", "--force", app=ASSEMBLY)
                destroyed = True
                say(f"destroy: {STACK} deleted (period tables and RETAIN resources stay, as they would in AWS)")
        results = scenario.results if scenario else []
        write_results(args.results, results, server.pid, destroyed=destroyed)
        if args.keep:
            function = scenario.outputs.get("RotationFunctionName") if scenario else None
            say(reach_text(server.endpoint_url, env, function, output_logical_id("RotationFunctionName")))
            wait_until_stopped(server)
    finally:
        server.stop()
        say(f"emulator: stopped pid {server.pid}")
    return 0 if results and all(ok for _step, ok, _figure in results) else 1


def write_results(path: Path | None, results: list, pid: int, *, destroyed: bool) -> None:
    """``--results``: every step's result, the emulator's PID and whether the stack was destroyed."""
    if path:
        path.write_text(json.dumps({
            "steps": [{"step": step, "ok": ok, "figure": figure} for step, ok, figure in results],
            "emulator_pid": pid,
            "destroyed": destroyed,
        }, indent=2))


def reach_text(url: str, env: dict[str, str], rotation_function: str | None, rotation_logical_id: str) -> str:
    """What ``--keep`` prints: where the emulator is, the stack's name, what to export, and commands that work.

    The rotation function's name is printed as it is, with the lookup that finds it on the emulator and on AWS
    alike: moto_server leaves ``Outputs`` out of DescribeStacks, so a ``describe-stacks`` query of the
    ``RotationFunctionName`` output answers ``None`` there (and moto_server answers DescribeStackResource with an
    HTTP 500); ListStackResources filtered to the output's logical ID answers the name on both.
    """
    lookup = (
        f"aws cloudformation list-stack-resources --stack-name {STACK} --query \"StackResourceSummaries"
        f"[?LogicalResourceId=='{rotation_logical_id}'].PhysicalResourceId\" --output text"
    )
    status = (
        f"  .venv/bin/cdk-ts status --function {rotation_function}\n" if rotation_function
        else f"  .venv/bin/cdk-ts status --function \"$({lookup})\"\n"
    )
    exports = "\n".join(
        f"  export {name}={env[name]}"
        for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
    )
    return (
        f"\nkept: stack {STACK} stays deployed on the emulator at {url} (moto_server, account {ACCOUNT}, "
        f"Region {REGION}).\n"
        f"To reach it from another shell:\n{exports}\n"
        f"  aws cloudformation describe-stacks --stack-name {STACK}\n"
        "The rotation's state (its function's name; the lookup after it finds the name here and on AWS):\n"
        f"{status}"
        f"  {lookup}\n"
        "Stop with Ctrl-C (or SIGTERM): the emulator and everything in it go with it."
    )


def wait_until_stopped(server) -> None:
    """Block until SIGINT or SIGTERM arrives (or the emulator exits by itself)."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(1.0):
            if server.process.poll() is not None:
                say(f"emulator: pid {server.pid} exited by itself")
                return
        say("stopping: signal received")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
