"""Every ```python block of README.md runs, each in a fresh namespace, and fails its own test when it breaks.

Blocks are told apart by what they import:

- construct blocks (``aws_cdk``) run as ``python app.py`` in a temporary folder, where every folder a
  block passes to ``lambda_.Code.from_asset("src/...")`` exists with the README's own handler in it.
  A subprocess, not ``exec``: jsii's Node process resolves relative asset paths against its own
  working directory, fixed when it started, so ``os.chdir`` in this process would not reach it. The
  blocks call ``app.synth()`` themselves (``CDK_OUTDIR`` points it into the folder); every stack
  written must have resources;
- every other block runs inside ``moto.mock_aws()`` (unless it starts moto itself), with the fake
  credentials of ``tests/conftest.py``.

Blocks that need tables or environment variables first are preceded in README.md by a marker
``<!-- readme-test: setup=NAME -->`` naming a function in ``SETUPS``:

- ``router``: ``CDK_TS_*`` variables for ``table_prefix="readings"`` (daily) and the period tables
  ``readings_2026-01-01`` and ``readings_2026-03-01`` (pk Number, sk Number);
- ``device_log``: a device-log table (base keys, GSI1, GSI2) and ``CDK_TS_DEVICE_LOG_TABLE_NAME``;
- ``sharding``: an audit table (``file_path``/``timestamp``), its shard-metadata table and the
  ``CDK_TS_SHARDED_*`` / ``CDK_TS_SHARDING_STRATEGY`` variables;
- ``timestream``: the Timestream database ``fleet`` with table ``telemetry``;
- ``handler_module``: the ``user-handler: code`` block importable as ``handler`` (what a user's
  pytest ``pythonpath = ["src/ingest"]`` does);
- ``archive``: the block runs in a fresh folder holding ``archive/``, objects the real archiver wrote
  (``tests/support/archive.py``: INSERT, MODIFY and REMOVE records, DynamoDB-sized sequence numbers);
- ``compacted``: the same, plus ``parquet/`` as the compaction wrote it (``write_compacted``: columns
  ``device_id``, ``sk``, ``v``);
- ``iceberg``: the same rows compacted into the Iceberg table ``archive.changes`` of a local pyiceberg SQL
  catalog, and ``CDK_TS_COMPACTION_ICEBERG`` describing it as the function's environment would.

The block marked ``<!-- user-handler: code -->`` only defines ``handler``; its test calls it with the
environment the ``user-handler: construct`` block's ``bind`` sets, against moto.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from cdk_ts_runtime import TableLayout
from cdk_ts_runtime._compaction_iceberg import ENV_ICEBERG
from cdk_ts_runtime._device_log import ENV_TABLE_NAME as DEVICE_LOG_ENV
from cdk_ts_runtime._sharding import ENV_METADATA_TABLE, ENV_PARTITION_KEY, ENV_SORT_KEY, ENV_STRATEGY, ENV_TABLE
from tests.support.archive import write_archive, write_compacted
from tests.support.assembly import synth_app
from tests.support.device_log import create_device_log_table
from tests.support.environment import REGION
from tests.support.readme import BLOCKS, Block, marked, run
from tests.support.router import create_tables as create_period_tables
from tests.support.sharding import create_tables as create_sharded_tables

_ASSET = re.compile(r"""Code\.from_asset\(["']([^"']+)["']\)""")


# ---- setups named by <!-- readme-test: setup=NAME --> -----------------------------------------------


def setup_router(monkeypatch, tmp_path) -> None:
    layout = TableLayout(table_prefix="readings")
    for name, value in layout.to_env().items():
        monkeypatch.setenv(name, value)
    client = boto3.client("dynamodb", region_name=REGION)
    create_period_tables(client, layout, ["readings_2026-01-01", "readings_2026-03-01"])


def setup_device_log(monkeypatch, tmp_path) -> None:
    create_device_log_table(boto3.client("dynamodb", region_name=REGION), "device-log")
    monkeypatch.setenv(DEVICE_LOG_ENV, "device-log")


def setup_sharding(monkeypatch, tmp_path) -> None:
    main, metadata = create_sharded_tables(boto3.client("dynamodb", region_name=REGION), "readme")
    for name, value in (
        (ENV_TABLE, main),
        (ENV_METADATA_TABLE, metadata),
        (ENV_PARTITION_KEY, "file_path"),
        (ENV_SORT_KEY, "timestamp"),
        (ENV_STRATEGY, "random"),
    ):
        monkeypatch.setenv(name, value)


def setup_timestream(monkeypatch, tmp_path) -> None:
    client = boto3.client("timestream-write", region_name=REGION)
    client.create_database(DatabaseName="fleet")
    client.create_table(DatabaseName="fleet", TableName="telemetry")


def setup_handler_module(monkeypatch, tmp_path) -> None:
    folder = tmp_path / "src" / "ingest"
    folder.mkdir(parents=True)
    (folder / "handler.py").write_text(marked("code").code)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "handler", raising=False)


def setup_archive(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    write_archive(tmp_path / "archive")


def setup_compacted(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    write_compacted(tmp_path)


def setup_iceberg(monkeypatch, tmp_path) -> None:
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/warehouse"}
    write_compacted(tmp_path, iceberg_catalog=catalog)
    monkeypatch.setenv(ENV_ICEBERG, json.dumps({"identifier": "archive.changes", "catalog": catalog}))


SETUPS: dict[str, Callable] = {
    "router": setup_router,
    "device_log": setup_device_log,
    "sharding": setup_sharding,
    "timestream": setup_timestream,
    "handler_module": setup_handler_module,
    "archive": setup_archive,
    "compacted": setup_compacted,
    "iceberg": setup_iceberg,
}


def write_asset_folders(block: Block, root: Path) -> list[Path]:
    """Every ``Code.from_asset("src/...")`` folder of ``block``, holding the README's handler."""
    folders = []
    for path in _ASSET.findall(block.code):
        folder = root / path
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "handler.py").write_text(marked("code").code)
        folders.append(folder)
    return folders


def synthesize(block: Block, folder: Path) -> dict[str, dict]:
    """Run a construct block as ``python app.py`` in ``folder``; returns the templates it wrote, by stack name."""
    write_asset_folders(block, folder)
    (folder / "app.py").write_text(block.code)
    out = synth_app(folder, what=f"README.md:{block.line}")
    manifest = json.loads((out / "manifest.json").read_text())
    return {
        name: json.loads((out / artifact["properties"]["templateFile"]).read_text())
        for name, artifact in manifest["artifacts"].items()
        if artifact["type"] == "aws:cloudformation:stack"
    }


# ---- tests ----------------------------------------------------------------------------------------


def test_the_readme_has_python_blocks_and_known_markers():
    assert len(BLOCKS) >= 10, f"found only {len(BLOCKS)} ```python blocks in README.md: is the parser broken?"
    for block in BLOCKS:
        unknown = [name for name in block.setups() if name not in SETUPS]
        assert not unknown, f"README.md:{block.line} names unknown setup(s) {unknown}; known: {sorted(SETUPS)}"
    assert marked("construct").is_construct
    assert not marked("code").is_construct


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.is_construct], ids=lambda b: b.test_id)
@pytest.mark.slow  # each block synthesizes an app in a subprocess: 15-30 s
def test_construct_block_synthesizes(block, tmp_path):
    assert "app.synth()" in block.code, f"README.md:{block.line}: a construct block ends with app.synth()"
    templates = synthesize(block, tmp_path)
    assert templates, f"README.md:{block.line} wrote no stack"
    for name, template in templates.items():
        assert template.get("Resources"), f"README.md:{block.line}: stack {name} has no resources"


@pytest.mark.parametrize(
    "block",
    [b for b in BLOCKS if not b.is_construct and b.markers.get("user-handler") != "code"],
    ids=lambda b: b.test_id,
)
def test_runtime_block_runs_against_moto(block, tmp_path, monkeypatch):
    if "mock_aws" in block.code:  # the block starts moto itself, as a user's test would
        for name in block.setups():
            SETUPS[name](monkeypatch, tmp_path)
        run(block)
        return
    with mock_aws():
        for name in block.setups():
            SETUPS[name](monkeypatch, tmp_path)
        run(block)


@pytest.mark.slow  # ~18 s measured on a shared 2-core machine
def test_user_handler_code_block_writes_and_reads_back_with_the_env_bind_sets(tmp_path, monkeypatch):
    from aws_cdk import App, Stack

    from cdk_ts import RotatingTimeSeriesTables

    env = RotatingTimeSeriesTables(Stack(App(), "Layout"), "Readings", table_prefix="readings").layout.to_env()
    # the README's construct block gives its function exactly these variables
    template = synthesize(marked("construct"), tmp_path)["Telemetry"]
    functions = [
        r["Properties"] for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("Handler") == "handler.handler"
    ]
    assert len(functions) == 1
    assert env.items() <= functions[0]["Environment"]["Variables"].items()

    handler = run(marked("code"))["handler"]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_period_tables(client, TableLayout.from_env(env), ["readings_2026-03-01"])
        result = handler({"device_id": 7, "time": "2026-03-01T12:00:00+00:00", "temperature_c": "21.5"}, None)
    assert result == {"table": "readings_2026-03-01", "items": ["21.5"]}
