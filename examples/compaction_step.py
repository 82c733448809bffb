"""The scenario's compaction steps: the telemetry archive's closed hours compacted to Parquet, and the union view
``<table>_all`` counted against the stream records written.

The emulator cannot run Lambda code, so the compaction function's own handler runs on this host with the
deployed environment (pyarrow from the venv stands in for the AWS SDK for pandas layer). The view is read as
DuckDB runs it: its Athena SQL read back from the emulator's Glue catalog, transpiled by sqlglot, over local
copies of the raw JSON Lines and of the Parquet files the Glue partitions point at.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import tempfile
import time
import zipfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from examples.progress import function_output

#: The AWS SDK for pandas layer's name in ``app.PANDAS_LAYER``: the construct reads the function's Python
#: version and architecture from it.
PANDAS_LAYER_NAME = "AWSSDKPandas-Python314-Arm64"
#: DuckDB's types for the Glue column types the compacted table uses.
_DUCKDB_TYPES = {"string": "VARCHAR", "bigint": "BIGINT", "double": "DOUBLE", "boolean": "BOOLEAN",
                 "timestamp": "TIMESTAMPTZ"}


def publish_stand_in_layer(lambda_client) -> str:
    """Publish a stand-in for the AWS-managed pandas layer in the emulator; its version ARN for ``pandas_layer_arn``.

    moto refuses a function whose layer it does not hold, and cannot run the function anyway: the stand-in
    holds a note only, under the managed layer's name.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("python/CDK_TS_STAND_IN.txt",
                         "Stand-in for the AWS SDK for pandas layer on a local emulator; it holds no code.\n")
    return lambda_client.publish_layer_version(
        LayerName=PANDAS_LAYER_NAME,
        Description="cdk-ts scenario: stand-in for the AWS-managed AWS SDK for pandas layer",
        Content={"ZipFile": buffer.getvalue()},
        CompatibleRuntimes=["python3.14"],
        CompatibleArchitectures=["arm64"],
    )["LayerVersionArn"]


def create_glue_catalog(glue, cloudformation, template: dict[str, Any], stack: str, account: str) -> list[str]:
    """Create the stack's Glue databases and tables in the emulator, as CloudFormation does in AWS; their names.

    moto_server's CloudFormation accepts ``AWS::Glue::*`` resources but creates nothing in its Glue (it has
    no CloudFormation model for them), so they are created here from the synthesized template, their
    ``Ref`` and ``Fn::Join`` resolved against the deployed stack. One that exists already is left as it is.
    """
    physical = {
        r["LogicalResourceId"]: r.get("PhysicalResourceId", "")
        for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack)
        for r in page["StackResourceSummaries"]
    }
    pseudo = {"AWS::AccountId": account, "AWS::Region": cloudformation.meta.region_name, "AWS::Partition": "aws"}

    def resolve(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"Ref"}:
            return pseudo.get(value["Ref"]) or physical[value["Ref"]]
        if isinstance(value, dict) and set(value) == {"Fn::Join"}:
            separator, parts = value["Fn::Join"]
            return separator.join(str(resolve(part)) for part in parts)
        if isinstance(value, dict):
            return {key: resolve(item) for key, item in value.items()}
        if isinstance(value, list):
            return [resolve(item) for item in value]
        return value

    resources = template["Resources"].values()
    created = []
    for resource in (r for r in resources if r["Type"] == "AWS::Glue::Database"):
        database = resolve(resource["Properties"]["DatabaseInput"])
        with contextlib.suppress(glue.exceptions.AlreadyExistsException):
            glue.create_database(DatabaseInput=database)
            created.append(database["Name"])
    for resource in (r for r in resources if r["Type"] == "AWS::Glue::Table"):
        properties = resolve(resource["Properties"])
        with contextlib.suppress(glue.exceptions.AlreadyExistsException):
            glue.create_table(DatabaseName=properties["DatabaseName"], TableInput=properties["TableInput"])
            created.append(f'{properties["DatabaseName"]}.{properties["TableInput"]["Name"]}')
    return created


class UnionView:
    """The deployed ``<raw>_all`` view as DuckDB runs it, over the archive's current objects in the emulator.

    :param s3: the S3 client; :param glue: the Glue client.
    :param bucket: the archive bucket; :param settings: the compaction function's ``CompactionSettings``.
    """

    def __init__(self, s3, glue, bucket: str, settings) -> None:
        self.s3, self.glue, self.bucket, self.settings = s3, glue, bucket, settings
        self.database = settings.glue_database
        self.compacted = settings.glue_table
        self.raw = self.compacted.removesuffix("_compacted")

    def event_ids(self) -> list[str]:
        """Every ``eventid`` the view returns, one per row."""
        import duckdb

        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            connection = duckdb.connect()
            connection.execute("SET TimeZone = 'UTC'")
            self._relations(connection, root)
            return [row[0] for row in connection.execute(f'SELECT eventid FROM "{self.raw}_all"').fetchall()]

    def _relations(self, connection, root: Path) -> None:
        from examples.archive_duckdb import create_raw_view

        raw_keys = self._keys(self.settings.prefix)
        self._download(raw_keys, root / "raw")
        create_raw_view(connection, root / "raw", name=f'"{self.raw}"')
        connection.execute(f'CREATE VIEW "{self.raw}_deduplicated" AS {self._view_sql(f"{self.raw}_deduplicated")}')
        table = self.glue.get_table(DatabaseName=self.database, Name=self.compacted)["Table"]
        keys = [k["Name"] for k in table["PartitionKeys"]]
        partitions = self.partitions()
        key_columns = ", ".join(f'"{k}" VARCHAR' for k in keys)
        connection.execute(f'CREATE TABLE "{self.compacted}$partitions" ({key_columns})')
        files = []
        for values, location in partitions:
            connection.execute(f'INSERT INTO "{self.compacted}$partitions" VALUES ({", ".join("?" * len(keys))})',
                               values)
            prefix = location.removeprefix(f"s3://{self.bucket}/")
            files += self._download(self._keys(prefix), root / "parquet")
        columns = table["StorageDescriptor"]["Columns"] + table["PartitionKeys"]
        typed = ", ".join(f'"{c["Name"]}"' for c in columns)
        if files:
            hive_types = ", ".join(f"'{k}': 'VARCHAR'" for k in keys)
            source = (f"SELECT {typed} FROM read_parquet({[str(f) for f in files]!r}, hive_partitioning = true,"
                      f" hive_types = {{{hive_types}}})")
        else:
            nulls = ", ".join(f'NULL::{_duckdb_type(c["Type"])} AS "{c["Name"]}"' for c in columns)
            source = f"SELECT {nulls} WHERE false"
        connection.execute(f'CREATE VIEW "{self.compacted}" AS {source}')
        connection.execute(f'CREATE VIEW "{self.raw}_all" AS {self._view_sql(f"{self.raw}_all")}')

    def _view_sql(self, name: str) -> str:
        """A Glue view's Athena SQL, as the emulator's catalog holds it, in DuckDB's dialect and relation names."""
        import sqlglot

        text = self.glue.get_table(DatabaseName=self.database, Name=name)["Table"]["ViewOriginalText"]
        presto = json.loads(base64.b64decode(text.removeprefix("/* Presto View: ").removesuffix(" */")))
        duck = sqlglot.transpile(presto["originalSql"], read="athena", write="duckdb")[0]
        return duck.replace(f'"{self.database}".', "")

    def partitions(self) -> list[tuple[list[str], str]]:
        """The compacted table's Glue partitions: values and the location the compaction switched them to."""
        found, kwargs = [], {}
        while True:
            page = self.glue.get_partitions(DatabaseName=self.database, TableName=self.compacted, **kwargs)
            found += [(p["Values"], p["StorageDescriptor"]["Location"]) for p in page["Partitions"]]
            if not page.get("NextToken"):
                return found
            kwargs["NextToken"] = page["NextToken"]

    def _keys(self, prefix: str) -> list[str]:
        keys = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            keys += [o["Key"] for o in page.get("Contents", [])]
        return keys

    def _download(self, keys: list[str], root: Path) -> list[Path]:
        paths = []
        for key in keys:
            path = root / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())
            paths.append(path)
        return paths


def _duckdb_type(glue_type: str) -> str:
    return _DUCKDB_TYPES.get(glue_type, glue_type.upper())


class CompactionSteps:
    """Compact the telemetry archive the archive step wrote, and count the union view at each stage.

    :param scenario: the running ``examples.scenario.Scenario`` (outputs, checks, deployed environments,
        and the stream records its archive step wrote).
    :param template: the stack's synthesized template (the Glue resources the emulator did not create).
    :param stack: the stack's name; :param account: the emulator's account.
    """

    def __init__(self, scenario, template: dict[str, Any], stack: str, account: str) -> None:
        self.scenario, self.template, self.stack, self.account = scenario, template, stack, account
        self.s3 = scenario.boto3.client("s3")
        self.glue = scenario.boto3.client("glue")

    def compaction(self) -> None:
        """Redeliver some records, compact, write a late record, compact again; the view counts each event once."""
        # the compaction function's reader of its settings (the view's Glue names, the raw prefix): no public face
        from cdk_ts_runtime._compaction_plan import CompactionSettings

        scenario = self.scenario
        print("\n7. Compaction: closed hours of the telemetry archive to Parquet; the union view counted", flush=True)
        started = time.monotonic()
        created = create_glue_catalog(self.glue, scenario.boto3.client("cloudformation"), self.template, self.stack,
                                      self.account)
        print(f"     Glue (moto's CloudFormation makes none; created from the template): {', '.join(created)}",
              flush=True)
        records = scenario.archived["TelemetryArchiverFunctionName"]
        written = {r["eventID"] for r in records}
        # at least once: a retried, bisected batch writes records 1-3 again, in another object
        self._archive(records[1:4])
        with scenario.deployed_environment("TelemetryCompactionFunctionName") as env:
            view = UnionView(self.s3, self.glue, scenario.outputs["ArchiveBucketName"],
                             CompactionSettings.from_env(env))
            before = view.event_ids()
            # as the schedule would run hours later: every hour written so far has closed and its grace passed
            scheduled = (datetime.now(UTC) + timedelta(hours=3)).replace(minute=20, second=0, microsecond=0)
            report = _run_handler(scheduled)
            after = view.event_ids()
            rows = sum(c["rows"] for c in report["compacted"])
            duplicates = sum(c["duplicates"] for c in report["compacted"])
            scenario.check(
                "compaction rewrites the closed hours as Parquet, each redelivered record once",
                bool(report["compacted"]) and rows == len(written) and duplicates == 3 and not report["failed"],
                f"{len(report['compacted'])} partitions, {rows} rows, {duplicates} redeliveries dropped",
            )
            scenario.check(
                "the union view counts every stream record written once, before and after compaction",
                sorted(before) == sorted(after) == sorted(written),
                f"{len(before)} then {len(after)} rows for {len(written)} records",
            )
            late, partition = self._late_record(written)
            pending = view.event_ids()
            # its hour compacted already: the view reads that hour from Parquet, so the record waits for the
            # next run (were its hour new, the view would read it from the raw layer at once)
            waits = partition in {tuple(values) for values, _location in view.partitions()}
            _run_handler(scheduled + timedelta(hours=1))
            merged = view.event_ids()
            scenario.check(
                "a late record is counted once: after the next run when its hour was compacted",
                sorted(pending) == sorted(written if waits else written | {late})
                and sorted(merged) == sorted(written | {late}),
                f"{len(pending)} rows while pending ({'compacted' if waits else 'new'} hour), "
                f"{len(merged)} after the next run",
            )
        print(f"     (step 7 took {time.monotonic() - started:.1f} s)", flush=True)

    def _late_record(self, written: set[str]) -> tuple[str, tuple[str, str, str]]:
        """One more reading, archived after the first compaction; its eventID and partition (table, dt, hour)."""
        from cdk_ts_runtime import PeriodRouter

        scenario = self.scenario
        with scenario.deployed_environment("IngestFunctionName"):
            router = PeriodRouter.from_env(os.environ)
            router.put_measurements(9, scenario.day(0) + timedelta(hours=1), {"temperature_c": Decimal("19.25")})
        (record,) = [r for r in scenario.stream_records(scenario.period_tables()) if r["eventID"] not in written]
        self._archive([record])
        table = record["eventSourceARN"].split(":table/", 1)[1].split("/", 1)[0]
        created = record["dynamodb"]["ApproximateCreationDateTime"].astimezone(UTC)
        return record["eventID"], (table, f"{created:%Y-%m-%d}", f"{created:%H}")

    def _archive(self, records: list[dict[str, Any]]) -> None:
        from examples.archive_step import run_archiver

        response = run_archiver(self.scenario, "TelemetryArchiverFunctionName", records)
        if response["batchItemFailures"]:
            raise RuntimeError(f"archive batch failed: {response}")


def _run_handler(scheduled: datetime) -> dict[str, Any]:
    """The compaction function's handler, invoked as its schedule would at ``scheduled``; its report."""
    from cdk_ts_runtime.handlers import compaction

    with function_output("compaction"):  # its EMF metric lines and JSON log lines
        return compaction.handler({"time": scheduled.isoformat()}, None)
