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
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cdk_ts.testing import start_moto_server
from examples.compaction_step import CompactionSteps, publish_stand_in_layer

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DATA = REPO / "tests" / "data" / "device_state_log.json"
ACCOUNT, REGION = "123456789012", "us-east-1"
STACK = "CdkTsSample"


def say(text: str = "") -> None:
    """Progress output a person can follow."""
    print(text, flush=True)


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


def cdk(env: dict[str, str], *args: str) -> None:
    """Run the pinned CDK CLI from node_modules; raise with its output when it fails."""
    npx = shutil.which("npx")
    if npx is None:
        raise RuntimeError("npx not found: Node 20+ and npm are needed (scripts/setup.sh installs the CLI)")
    command = [npx, "--no-install", "cdk", *args, "--app", f"{sys.executable} app.py", "--no-notices"]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"cdk {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


# ---- the scenario -----------------------------------------------------------------------------


def stack_outputs(cloudformation) -> dict[str, str]:
    """The stack's outputs; resolved from the synthesized template when the emulator returns none.

    moto_server leaves ``Outputs`` out of DescribeStacks for this stack, so each output's ``Ref``
    is looked up among the stack's resources instead (literal values are taken as they are).
    """
    stack = cloudformation.describe_stacks(StackName=STACK)["Stacks"][0]
    if stack.get("Outputs"):
        return {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
    template = json.loads((REPO / "cdk.out" / f"{STACK}.template.json").read_text())
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


class Scenario:
    """The steps run against the deployed stack; each records a check and the figure it produced."""

    def __init__(self) -> None:
        import boto3

        self.boto3 = boto3
        self.results: list[tuple[str, bool, str]] = []
        #: The stream records the archive step wrote, by the archiver's output name.
        self.archived: dict[str, list[dict]] = {}
        self.outputs = stack_outputs(boto3.client("cloudformation"))
        self.today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)

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

    # -- steps --

    def rotation(self) -> None:
        """Deploy-time reconcile, then three days of create_new/resize_old."""
        from cdk_ts_runtime.handlers import rotation

        prefix = self.outputs["TelemetryTablePrefix"]

        def on_time(event: dict) -> dict:
            # Three simulated days pass in seconds: the clock reads each event's scheduled time, as it
            # would when EventBridge delivers on time (the rotation refuses times far from its clock).
            rotation.now = lambda: datetime.fromisoformat(event["time"])
            return rotation.handler(event, None)

        say("\n1. Rotation: reconcile (what the deploy-time custom resource runs)")
        with self.deployed_environment("RotationFunctionName"):
            on_time({"Operation": "reconcile", "time": self.day(0).replace(hour=12).isoformat()})
            current = f"{prefix}_{self.day(0):%Y-%m-%d}"
            self.check("reconcile creates the current period's table", current in self.period_tables(), current)

            say("\n2. Rotation: three days of schedule (create_new at 23:45, its retry at 23:55, resize_old at 00:15)")
            for offset in range(3):
                for minute in (45, 55):  # the 23:55 run finds the table there: it only checks its settings
                    on_time({"Operation": "create_new",
                             "time": self.day(offset).replace(hour=23, minute=minute).isoformat()})
                on_time({"Operation": "resize_old", "time": self.day(offset + 1).replace(minute=15).isoformat()})
            tiers = {name: self.capacity(name) for name in self.period_tables()}
            for name, tier in tiers.items():
                say(f"     {name}  {tier}")
            # closed periods: on-demand Standard-IA (the emulator does not report the table class)
            expected = {
                f"{prefix}_{self.day(0):%Y-%m-%d}": "on-demand",
                f"{prefix}_{self.day(1):%Y-%m-%d}": "on-demand",
                f"{prefix}_{self.day(2):%Y-%m-%d}": "on-demand",
                f"{prefix}_{self.day(3):%Y-%m-%d}": "300/1000",
            }
            self.check(
                "tables sit in their tiers (closed periods on-demand Standard-IA, current 300/1000 RCU/WCU)",
                tiers == expected,
                f"{len(tiers)} tables",
            )

    def mappings(self) -> None:
        """Every stream has its mapping: CloudFormation made the device log's, the rotation the period tables'."""
        say("\n2b. Stream mappings: one per stream (the device log's from CloudFormation, the rest from the rotation)")
        lambda_client = self.boto3.client("lambda")
        dynamodb = self.boto3.client("dynamodb")
        mappings = []
        for page in lambda_client.get_paginator("list_event_source_mappings").paginate():
            mappings += page["EventSourceMappings"]
        period_streams = {
            dynamodb.describe_table(TableName=t)["Table"].get("LatestStreamArn") for t in self.period_tables()
        }
        mapped = {m["EventSourceArn"] for m in mappings}
        self.check(
            "every period table's stream is mapped to the telemetry archiver",
            bool(period_streams) and period_streams <= mapped,
            f"{len(period_streams & mapped)} of {len(period_streams)} period tables",
        )
        log_stream = dynamodb.describe_table(TableName=self.outputs["DeviceLogTableName"])["Table"]["LatestStreamArn"]
        self.check("the device log's stream is mapped to its archiver", log_stream in mapped, "1 mapping")

    def telemetry(self) -> None:
        """Batched multi-measure ingest and a range read across period tables."""
        from cdk_ts_runtime.router import PeriodRouter
        from examples.ingest.ingest import ingest

        say("\n3. Telemetry: batched multi-measure ingest through the router, a range read across tables")
        with self.deployed_environment("IngestFunctionName"):
            router = PeriodRouter.from_env(os.environ)
            readings = [
                {
                    "device_id": device,
                    "time": (self.day(0) + timedelta(hours=2 * step)).isoformat(),
                    "measures": {"temperature_c": f"{20 + step % 7}.{device}", "humidity_pct": "41.5"},
                }
                for device in (1, 2, 3)
                for step in range(48)
            ]
            result = ingest(router, readings)
            self.check(
                "ingest writes every reading",
                result["written"] == len(readings) and not result["unwritten"],
                f"{result['written']} readings into {len(router.tables_between(self.day(0), self.day(3)))} tables",
            )
            items = router.query(2, self.day(0), self.day(3) + timedelta(hours=23))
            ordered = [i["sk"] for i in items] == sorted(i["sk"] for i in items)
            self.check(
                "range read returns device 2's readings in time order",
                len(items) == 48 and ordered,
                f"{len(items)} items from {len({router.table_for(i['sk']) for i in items})} period tables",
            )

    def device_log(self) -> None:
        """The sample data and the seven access patterns."""
        from cdk_ts_runtime.device_log import DeviceLogRepository

        say("\n4. Device log: the use case's sample data and the seven access patterns")
        if not SAMPLE_DATA.exists():
            self.check("sample data present", False, f"{SAMPLE_DATA} missing")
            return
        logs = DeviceLogRepository(self.outputs["DeviceLogTableName"])
        for item in json.loads(SAMPLE_DATA.read_text())["items"]:
            logs.create_log_entry_for_specific_device(
                item["DeviceID"],
                item["State"],
                item["Date"],
                operator=item.get("Operator"),
                escalated_to=item.get("EscalatedTo"),
            )
        patterns: list[tuple[str, Callable[[], list], int]] = [
            ("2 d#12345 WARNING1", lambda: logs.get_logs_for_specific_device("d#12345", "WARNING1"), 3),
            ("3 d#54321 warnings", lambda: logs.get_warning_logs_for_specific_device("d#54321"), 3),
            (
                "4 Liz 2020-04-11..24",
                lambda: logs.get_logs_for_operator_between_two_dates("Liz", "2020-04-11", "2020-04-24"),
                6,
            ),
            ("5 Sara escalations", lambda: logs.get_escalated_logs_for_supervisor("Sara"), 1),
            (
                "6 Sara WARNING4",
                lambda: logs.get_escalated_logs_with_specific_status_for_supervisor("Sara", "WARNING4"),
                1,
            ),
            (
                "7 Sara WARNING4 2020-04-27",
                lambda: logs.get_escalated_logs_with_specific_status_for_supervisor_for_date(
                    "Sara", "WARNING4", "2020-04-27"
                ),
                1,
            ),
        ]
        for label, query, expected in patterns:
            found = len(query())
            self.check(f"pattern {label}", found == expected, f"{found} items (expected {expected})")

    def sharding(self) -> None:
        """A hot key through the sharded writer, read back from every shard."""
        from botocore.exceptions import ClientError

        from cdk_ts_runtime.sharding import ShardedTable

        say("\n5. Sharded audit log: a hot key over a partition limit injected at the client (the emulator has none)")
        client = self.boto3.client("dynamodb")
        # Simulated time: each write is a tenth of a second later and the writer's waits move the same clock,
        # so 20 s of a key offered 10 writes a second pass in the demo without a real wait.
        simulated = {"now": time.time()}
        per_second_limit = 4  # writes one partition key takes a simulated second (DynamoDB's is 1,000 WCU)
        taken: dict[str, list[float]] = {}

        def partition_limit(params, **_kwargs):
            if params.get("TableName") != self.outputs["AuditLogTableName"]:
                return
            now = simulated["now"]
            recent = [at for at in taken.get(params["Item"]["file_path"]["S"], []) if at > now - 1]
            if len(recent) >= per_second_limit:
                raise ClientError(
                    {
                        "Error": {"Code": "ProvisionedThroughputExceededException", "Message": "injected"},
                        "ThrottlingReasons": [{"reason": "TableWriteKeyRangeThroughputExceeded"}],
                    },
                    "PutItem",
                )
            taken[params["Item"]["file_path"]["S"]] = [*recent, now]

        client.meta.events.register("provide-client-params.dynamodb.PutItem", partition_limit)
        audit = ShardedTable(
            self.outputs["AuditLogTableName"],
            self.outputs["AuditLogShardsTableName"],
            partition_key="file_path",
            sort_key="timestamp",
            dynamodb_client=client,
            cooldown_seconds=1,
            growth="increment",
            clock=lambda: simulated["now"],
            sleep=lambda seconds: simulated.update(now=simulated["now"] + seconds),
        )
        start = int(time.time())
        for i in range(200):
            simulated["now"] += 0.1
            audit.put_item({"file_path": "/releases/viral.mp4", "timestamp": start * 1000 + i, "action": "GET"})
        count = audit.shard_count("/releases/viral.mp4")
        items = audit.query("/releases/viral.mp4")
        self.check("hot key grew past one shard on partition throttles", count > 1, f"{count} shards")
        self.check("every write read back across the shards", len(items) == 200, f"{len(items)} of 200 items")

    def stream_records(self, tables: list[str]) -> list[dict]:
        """Every record in the tables' streams, oldest first, as Lambda delivers them (with ``eventSourceARN``)."""
        streams = self.boto3.client("dynamodbstreams")
        dynamodb = self.boto3.client("dynamodb")
        records = []
        for table in tables:
            arn = dynamodb.describe_table(TableName=table)["Table"].get("LatestStreamArn")
            if not arn:
                continue
            for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
                iterator = streams.get_shard_iterator(
                    StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
                while iterator:
                    page = streams.get_records(ShardIterator=iterator, Limit=1000)
                    if not page["Records"]:
                        break
                    records += [{**r, "eventSourceARN": arn} for r in page["Records"]]
                    iterator = page.get("NextShardIterator")
        return records

    def archive(self) -> None:
        """Stream records through each archiver's code into the archive bucket."""
        from cdk_ts_runtime.archiver import StreamRecordArchiver

        say("\n6. Streams to S3: the emulator's stream records through each archiver's code")
        sources = [
            ("DeviceLogArchiverFunctionName", [self.outputs["DeviceLogTableName"]]),
            ("TelemetryArchiverFunctionName", self.period_tables()),
        ]
        total = 0
        for function_output, tables in sources:
            env = self.function_environment(function_output)
            archiver = StreamRecordArchiver(env["ARCHIVE_BUCKET"], env["ARCHIVE_PREFIX"])
            records = self.archived[function_output] = self.stream_records(tables)
            for start in range(0, len(records), 1000):
                with contextlib.redirect_stderr(io.StringIO()):  # the function's JSON log lines
                    response = archiver.archive(records[start : start + 1000])
                if response["batchItemFailures"]:
                    self.check("archive batch", False, str(response))
                    return
            total += len(records)
            self.check(
                f"{function_output.removesuffix('FunctionName')} archived its stream",
                bool(records),
                f"{len(records)} records",
            )
        s3 = self.boto3.client("s3")
        objects = s3.list_objects_v2(Bucket=self.outputs["ArchiveBucketName"], Prefix="cdc/").get("Contents", [])
        for obj in objects[:8]:
            say(f"     s3://{self.outputs['ArchiveBucketName']}/{obj['Key']}  {obj['Size']} B")
        if len(objects) > 8:
            say(f"     ... {len(objects) - 8} more")
        lines = 0
        import gzip

        for obj in objects:
            body = s3.get_object(Bucket=self.outputs["ArchiveBucketName"], Key=obj["Key"])["Body"].read()
            lines += len(gzip.decompress(body).splitlines())
        self.check(
            "every stream record is one archived line", lines == total, f"{lines} lines in {len(objects)} objects"
        )

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
    server = start_moto_server(port=args.port or None, keep_stream_records=True, url_host="localhost")
    say(f"emulator: moto_server pid {server.pid} at {server.endpoint_url}")
    scenario: Scenario | None = None
    destroyed = False
    results: list = []
    try:
        env = cli_environment(server.endpoint_url)
        os.environ.update({k: v for k, v in env.items() if k.startswith(("AWS_", "CDK_"))})
        started = time.monotonic()
        cdk(env, "bootstrap", f"aws://{ACCOUNT}/{REGION}")
        say(f"bootstrap: done ({time.monotonic() - started:.1f} s)")
        import boto3

        layer = ["-c", f"pandas_layer_arn={publish_stand_in_layer(boto3.client('lambda'))}"]
        say(f"layer: a stand-in for the AWS SDK for pandas layer published ({layer[1]})")
        started = time.monotonic()
        cdk(env, "deploy", "--require-approval", "never", *layer)
        say(f"deploy: {STACK} deployed ({time.monotonic() - started:.1f} s)")
        started = time.monotonic()
        cdk(env, "deploy", "--require-approval", "never", *layer)
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
                cdk(env, "destroy", "--force", *layer)
                destroyed = True
                say(f"destroy: {STACK} deleted (period tables and RETAIN resources stay, as they would in AWS)")
        results = scenario.results if scenario else []
        write_results(args.results, results, server.pid, destroyed=destroyed)
        if args.keep:
            say(reach_text(server.endpoint_url, env))
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


def reach_text(url: str, env: dict[str, str]) -> str:
    """What ``--keep`` prints: where the emulator is, the stack's name and what to export to use it."""
    exports = "\n".join(
        f"  export {name}={env[name]}"
        for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
    )
    return (
        f"\nkept: stack {STACK} stays deployed on the emulator at {url} (moto_server, account {ACCOUNT}, "
        f"Region {REGION}).\n"
        f"To reach it from another shell:\n{exports}\n"
        f"  aws cloudformation describe-stacks --stack-name {STACK}\n"
        f"  .venv/bin/cdk-ts status --function \"$(aws cloudformation describe-stacks --stack-name {STACK} "
        "--query \"Stacks[0].Outputs[?OutputKey=='RotationFunctionName'].OutputValue\" --output text)\"\n"
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
