"""Every code block on a docs page is included from a file under docs/snippets/, and every such file runs here.

How each kind of file is run:

- Python construct code (it imports ``aws_cdk``) runs as ``python app.py`` would, as ``__main__`` from its own
  file, in a folder where every folder it passes to ``lambda_.Code.from_asset("src/...")`` holds the docs' own
  handler (``runtime/user_handler.py``). All of them run in one long-lived process per test worker
  (``tests/support/synth_runner.py``), which pays Python's, jsii's and aws-cdk-lib's start-up once: it starts in
  a fixed folder, because jsii's Node process resolves relative asset paths against the folder it started in,
  and gives each ``App`` the snippet's own outdir, because Node read ``CDK_OUTDIR`` once at its start. A failing
  snippet fails its own test with its traceback. Every stack written must have resources; ``new-app/app.py``
  runs cdk-nag, so its synth fails on any finding.
- Other Python runs in-process inside ``moto.mock_aws()`` (unless it starts moto itself), after the setups
  :data:`PYTHON` names for it (tables, environment variables, an archive on disk).
- Shell files: each has a checker in :data:`SHELL` saying what it does (run for real, run against a local
  emulator, or its flags and names checked against the parsers and the sample app: see each checker).
- SQL: run in DuckDB on an archive the archiver wrote, or parsed as Athena SQL (no test runs Athena), or
  compared with the text the construct writes. Text files: compared with what the code they show produces.

``tests/docs/test_new_app.py`` runs the new-app files together, as a user would; ``runtime/user_handler.py`` is
run with the environment ``runtime/user_function_app.py``'s ``bind`` sets.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shlex
import signal
import subprocess
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
from cdk_ts_runtime._timestream import ENV_DATABASE_NAME as TIMESTREAM_DATABASE_ENV
from cdk_ts_runtime._timestream import ENV_TABLE_NAME as TIMESTREAM_TABLE_ENV
from tests.support.archive import write_archive, write_compacted
from tests.support.deprecations import removed_module
from tests.support.device_log import create_device_log_table
from tests.support.docs import ROOT, code, included, is_construct, page_blocks, pages, run, snippets
from tests.support.environment import REGION
from tests.support.processes import descendants, still_alive
from tests.support.router import create_tables as create_period_tables
from tests.support.sharding import create_tables as create_sharded_tables
from tests.support.synth_runner import SynthRunner

_ASSET = re.compile(r"""Code\.from_asset\(["']([^"']+)["']\)""")
HANDLER = "runtime/user_handler.py"
TIMESTREAM_HANDLER = "runtime/timestream_handler.py"


# ---- setups for Python snippets ------------------------------------------------------------------------


def setup_router(monkeypatch, tmp_path) -> None:
    """``CDK_TS_*`` for ``table_prefix="readings"`` (daily); tables readings_2026-01-01 and readings_2026-03-01."""
    layout = TableLayout(table_prefix="readings")
    for name, value in layout.to_env().items():
        monkeypatch.setenv(name, value)
    create_period_tables(boto3.client("dynamodb", region_name=REGION), layout,
                         ["readings_2026-01-01", "readings_2026-03-01"])


def setup_device_log(monkeypatch, tmp_path) -> None:
    """A device-log table (base keys, GSI1, GSI2) and ``DEVICE_LOG_TABLE_NAME``."""
    create_device_log_table(boto3.client("dynamodb", region_name=REGION), "device-log")
    monkeypatch.setenv(DEVICE_LOG_ENV, "device-log")


def setup_sharding(monkeypatch, tmp_path) -> None:
    """An audit table (``file_path``/``timestamp``), its shard-metadata table and the ``SHARDED_*`` variables."""
    main, metadata = create_sharded_tables(boto3.client("dynamodb", region_name=REGION), "docs")
    for name, value in ((ENV_TABLE, main), (ENV_METADATA_TABLE, metadata), (ENV_PARTITION_KEY, "file_path"),
                        (ENV_SORT_KEY, "timestamp"), (ENV_STRATEGY, "random")):
        monkeypatch.setenv(name, value)


def setup_timestream(monkeypatch, tmp_path) -> None:
    """The Timestream database ``fleet`` with its table ``telemetry``, and the names ``TimestreamTable.bind`` sets."""
    client = boto3.client("timestream-write", region_name=REGION)
    client.create_database(DatabaseName="fleet")
    client.create_table(DatabaseName="fleet", TableName="telemetry")
    monkeypatch.setenv(TIMESTREAM_DATABASE_ENV, "fleet")
    monkeypatch.setenv(TIMESTREAM_TABLE_ENV, "telemetry")


def setup_handler_module(monkeypatch, tmp_path) -> None:
    """The docs' handler importable as ``handler`` (what a user's ``pythonpath = ["src/ingest"]`` does)."""
    folder = tmp_path / "src" / "ingest"
    folder.mkdir(parents=True)
    (folder / "handler.py").write_text(code(HANDLER))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "handler", raising=False)


def setup_archive(monkeypatch, tmp_path) -> None:
    """A fresh folder holding ``archive/``: objects the real archiver wrote (INSERT, MODIFY, REMOVE)."""
    monkeypatch.chdir(tmp_path)
    write_archive(tmp_path / "archive")


def setup_compacted(monkeypatch, tmp_path) -> None:
    """The same, plus ``parquet/`` as the compaction wrote it (columns ``device_id``, ``sk``, ``v``)."""
    monkeypatch.chdir(tmp_path)
    write_compacted(tmp_path)


def setup_iceberg(monkeypatch, tmp_path) -> None:
    """The same rows in the Iceberg table ``archive.changes`` of a local SQL catalog, and ``COMPACTION_ICEBERG``."""
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/warehouse"}
    write_compacted(tmp_path, iceberg_catalog=catalog)
    monkeypatch.setenv(ENV_ICEBERG, json.dumps({"identifier": "archive.changes", "catalog": catalog}))


SETUPS: dict[str, Callable] = {
    "router": setup_router, "device_log": setup_device_log, "sharding": setup_sharding,
    "timestream": setup_timestream, "handler_module": setup_handler_module, "archive": setup_archive,
    "compacted": setup_compacted, "iceberg": setup_iceberg,
}
#: Python snippets that are no construct code, and the setups each runs after.
PYTHON: dict[str, list[str]] = {
    "runtime/router_query.py": ["router"],
    "runtime/router_batched.py": ["router"],
    "runtime/test_user_handler.py": ["handler_module"],
    "monitoring/emf_metrics.py": ["sharding"],
    "device-log/repository.py": ["device_log"],
    "sharding/writer.py": ["sharding"],
    "sharding/time_model.py": ["sharding"],
    "stream-archiver/read_duckdb.py": ["archive"],
    "stream-archiver/read_pandas.py": ["archive"],
    "stream-archiver/read_pyarrow.py": ["archive"],
    "compaction/read_duckdb.py": ["compacted"],
    "compaction/read_pyarrow.py": ["compacted"],
    "compaction/read_pandas.py": ["compacted"],
    "compaction/read_iceberg.py": ["iceberg"],
    "timestream/writer.py": ["timestream"],
    "rotating-tables/capacity_tiers.py": [],
    "planner/plan.py": [],
}
#: Python snippets run by a test of their own below (or in test_new_app.py).
OWN_TEST = {HANDLER, TIMESTREAM_HANDLER, "testing/one_call.py", "testing/one_fixture.py", "testing/handler.py",
            "testing/test_handler.py"}


# ---- every block is an include, every file is run ---------------------------------------------------------


def test_every_code_block_on_a_page_is_an_exact_copy_of_a_snippet_file():
    inline = [block.where() for page in pages() for block in page_blocks(page) if block.include is None]
    assert not inline, "code blocks written on the page, not copied from docs/snippets: " + ", ".join(inline)
    missing = [f"{blocks[0].where()}: {name}" for name, blocks in included().items()
               if not (ROOT / "docs" / "snippets" / name).is_file()]
    assert not missing, "copies of files that do not exist: " + ", ".join(missing)
    stale = [f"{block.where()}: {name}" for name, blocks in included().items() for block in blocks
             if list(block.body) != code(name).rstrip("\n").splitlines()]
    assert not stale, "copies that differ from their file (run python scripts/docs_snippets.py): " + ", ".join(stale)


def test_the_copy_checks_can_fail(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```python\nprint('written on the page')\n```\n\n"
                    "<!-- snippet: x.sh -->\n```sh\necho an old copy\n```\n")
    blocks = page_blocks(page)
    assert [(block.include, block.body) for block in blocks] == [(None, ("print('written on the page')",)),
                                                                  ("x.sh", ("echo an old copy",))]


def test_the_sync_script_finds_no_stale_copy_and_rewrites_one_that_is(tmp_path):
    # the script the message above names agrees with this file's check
    script = ROOT / "scripts" / "docs_snippets.py"
    result = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout
    namespace = runpy.run_path(str(script), run_name="docs_snippets")  # its synced(), on a page of our own
    name = "getting-started/install-wheel.sh"
    text, changed = namespace["synced"](f"Intro\n<!-- snippet: {name} -->\n```bash\necho stale\n```\nAfter\n")
    assert changed == [name]
    assert text == f"Intro\n<!-- snippet: {name} -->\n```bash\n{code(name).rstrip()}\n```\nAfter\n"


def test_every_snippet_file_is_on_a_page_and_is_run_here():
    files = set(snippets())
    assert files - set(included()) == set(), "snippet files no page includes"
    python = {name for name in files if name.endswith(".py")}
    construct = {name for name in python if is_construct(name)}
    assert python - construct == set(PYTHON) | OWN_TEST, "a Python snippet without a runner (or a stale entry)"
    others = files - python
    assert others == set(SHELL) | set(SQL) | set(TEXT), "a snippet without a checker (or a stale entry)"


# ---- Python ------------------------------------------------------------------------------------------------


def write_asset_folders(name: str, root: Path) -> None:
    """Every ``Code.from_asset("src/...")`` folder of the snippet, holding the docs' handler."""
    for path in _ASSET.findall(code(name)):
        folder = root / path
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "handler.py").write_text(code(HANDLER))


@pytest.fixture(scope="module")
def synth_runner(tmp_path_factory):
    """One synth process for this worker's construct snippets (module scope: with ``--dist load`` a worker gets
    this module's tests in collection order, so it starts once per worker)."""
    runner = SynthRunner(tmp_path_factory.mktemp("synth-runner"))
    yield runner
    runner.stop()


def synthesize(name: str, runner: SynthRunner, outdir: Path) -> dict[str, dict]:
    """Run a construct snippet as ``python app.py`` in the runner's folder; the templates it wrote, by stack name."""
    folder = runner.fresh_folder()
    write_asset_folders(name, folder)
    (folder / "app.py").write_text(code(name))
    out = runner.synth(outdir, what=f"docs/snippets/{name}")
    manifest = json.loads((out / "manifest.json").read_text())
    return {
        stack: json.loads((out / artifact["properties"]["templateFile"]).read_text())
        for stack, artifact in manifest["artifacts"].items()
        if artifact["type"] == "aws:cloudformation:stack"
    }


#: Run together with the page's shell steps, as a user would, by tests/docs/test_new_app.py (cdk-nag included).
NEW_APP = {"new-app/app.py"}
CONSTRUCTS = sorted(name for name in snippets() if name.endswith(".py") and is_construct(name) and name not in NEW_APP)


@pytest.mark.parametrize("name", CONSTRUCTS)
@pytest.mark.slow  # the first on a worker starts the synth process (~13 CPU s); then each synth takes 2-5 s
def test_construct_snippet_synthesizes(name, synth_runner, tmp_path):
    assert code(name).rstrip().endswith("app.synth()"), f"docs/snippets/{name} ends with app.synth()"
    templates = synthesize(name, synth_runner, tmp_path / "cdk.out")
    assert templates, f"docs/snippets/{name} wrote no stack"
    for stack, template in templates.items():
        assert template.get("Resources"), f"docs/snippets/{name}: stack {stack} has no resources"


FAILING_APP = '''\
import os
from aws_cdk import App, Stack
os.environ["LEFT_BY_THE_LAST_APP"] = "1"
Stack(App(), "Empty")
raise ValueError("the snippet's own error")
'''
ASSET_APP = '''\
import os
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_
assert "LEFT_BY_THE_LAST_APP" not in os.environ
app = App()
lambda_.Function(Stack(app, "One"), "Fn", runtime=lambda_.Runtime.PYTHON_3_12, handler="h.handler",
                 code=lambda_.Code.from_asset("src/one"))
app.synth()
'''


@pytest.mark.slow  # shares the synth process with the snippets (~13 CPU s if it is the first on its worker)
def test_the_synth_runner_fails_one_app_alone_and_runs_each_from_its_own_folder(synth_runner, tmp_path):
    # given an app that changes the environment, then fails
    (synth_runner.fresh_folder() / "app.py").write_text(FAILING_APP)
    with pytest.raises(AssertionError) as failed:
        synth_runner.synth(tmp_path / "failing.out", what="docs/snippets/failing.py")
    # then its call fails with its name, its traceback and its line
    assert "docs/snippets/failing.py failed" in str(failed.value)
    assert 'app.py", line 5' in str(failed.value) and "ValueError: the snippet's own error" in str(failed.value)

    # when the next app runs, with an asset folder relative to the runner's folder
    folder = synth_runner.fresh_folder()
    (folder / "src" / "one").mkdir(parents=True)
    (folder / "src" / "one" / "h.py").write_text("def handler(event, context):\n    return 'one'\n")
    (folder / "app.py").write_text(ASSET_APP)
    out = synth_runner.synth(tmp_path / "one.out")
    # then it ran without the last one's environment, wrote its own outdir, and staged that folder
    assert "One" in json.loads((out / "manifest.json").read_text())["artifacts"]
    assert [p.read_text() for p in out.glob("asset.*/h.py")] == ["def handler(event, context):\n    return 'one'\n"]

    # and an app naming a folder only an earlier app had does not find it
    (synth_runner.fresh_folder() / "app.py").write_text(ASSET_APP)
    with pytest.raises(AssertionError, match="Cannot find asset"):
        synth_runner.synth(tmp_path / "two.out")


KILLING_APP = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
SMALL_APP = '''\
from aws_cdk import App, CfnOutput, Stack
app = App()
CfnOutput(Stack(app, "Again"), "Out", value="again")
app.synth()
'''


@pytest.fixture
def own_synth_runner(tmp_path, monkeypatch):
    """A runner of this test's own, whose processes keep their temporary files under ``tmp_path``: a killed jsii
    Node process leaves its ``jsii-kernel-*`` folder behind, which must not pile up in the machine's /tmp."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))  # read by each process the runner starts, and by jsii's Node
    runner = SynthRunner(tmp_path / "runner")
    yield runner
    runner.stop()


@pytest.mark.slow  # starts the synth process three times
def test_a_dead_synth_process_fails_its_call_and_the_next_call_starts_another(own_synth_runner, tmp_path):
    synth_runner = own_synth_runner
    # given a running synth process
    (synth_runner.fresh_folder() / "app.py").write_text(SMALL_APP)
    synth_runner.synth(tmp_path / "first.out")
    killed = synth_runner._process
    first = killed.pid
    first_tree = [first, *descendants(first)]  # the runner and jsii's Node under it
    assert len(first_tree) > 1, "jsii's Node runs under the runner"
    # when an app kills the process in the middle of its call
    (synth_runner.fresh_folder() / "app.py").write_text(KILLING_APP)
    with pytest.raises(AssertionError, match="docs/snippets/killing.py: the synth process stopped or hung"):
        synth_runner.synth(tmp_path / "killed.out", what="docs/snippets/killing.py")
    # then that call failed, and nothing of the dead process is left: it was reaped, its pipe closed, and jsii's
    # Node went with it
    assert synth_runner._process is None
    assert killed.returncode == -signal.SIGKILL and killed.stdout.closed
    assert still_alive(first_tree) == []
    # and the next app runs in a new process
    (synth_runner.fresh_folder() / "app.py").write_text(SMALL_APP)
    out = synth_runner.synth(tmp_path / "again.out")
    assert "Again" in json.loads((out / "manifest.json").read_text())["artifacts"]
    second = synth_runner._process.pid
    assert second != first
    second_tree = [second, *descendants(second)]

    # when the process dies between two calls (it has ended before the next call: waited for here, as the runner
    # cannot tell a process that is still exiting from a live one)
    os.killpg(second, signal.SIGKILL)
    synth_runner._process.wait(timeout=30)
    assert still_alive(second_tree) == []
    out = synth_runner.synth(tmp_path / "third.out")
    # then the next call starts another process, and it serves the app
    assert "Again" in json.loads((out / "manifest.json").read_text())["artifacts"]
    assert synth_runner._process.pid not in (first, second) and synth_runner._process.poll() is None


@pytest.mark.parametrize("name", sorted(PYTHON))
def test_python_snippet_runs_against_moto(name, tmp_path, monkeypatch):
    if "mock_aws" in code(name):  # the snippet starts moto itself, as a user's test would
        for setup in PYTHON[name]:
            SETUPS[setup](monkeypatch, tmp_path)
        run(name)
        return
    with mock_aws():
        for setup in PYTHON[name]:
            SETUPS[setup](monkeypatch, tmp_path)
        run(name)


@pytest.mark.slow  # ~18 s measured on a shared 2-core machine
def test_the_user_handler_writes_and_reads_back_with_the_env_bind_sets(synth_runner, tmp_path, monkeypatch):
    from aws_cdk import App, Stack

    from cdk_ts import RotatingTimeSeriesTables

    env = RotatingTimeSeriesTables(Stack(App(), "Layout"), "Readings", table_prefix="readings").layout.to_env()
    # the page's construct code gives its function exactly these variables
    template = synthesize("runtime/user_function_app.py", synth_runner, tmp_path / "cdk.out")["Telemetry"]
    functions = [
        r["Properties"] for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("Handler") == "handler.handler"
    ]
    assert len(functions) == 1
    assert env.items() <= functions[0]["Environment"]["Variables"].items()

    handler = run(HANDLER)["handler"]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        create_period_tables(boto3.client("dynamodb", region_name=REGION), TableLayout.from_env(env),
                             ["readings_2026-03-01"])
        result = handler({"device_id": 7, "time": "2026-03-01T12:00:00+00:00", "temperature_c": "21.5"}, None)
    assert result == {"table": "readings_2026-03-01", "items": ["21.5"]}


def test_the_timestream_handler_writes_with_the_names_bind_sets(tmp_path, monkeypatch):
    from aws_cdk import App, Stack
    from moto.timestreamwrite.models import timestreamwrite_backends

    from cdk_ts import TimestreamTable

    bound = TimestreamTable.from_table_name(
        Stack(App(), "Fleet"), "Fleet", database_name="fleet", table_name="telemetry"
    ).binding_environment
    handler = run(TIMESTREAM_HANDLER)
    discoveries = []  # DescribeEndpoints calls of the clients made after the setup (the handler's)

    def discovered(**_kwargs):
        discoveries.append(1)

    with mock_aws():
        setup_timestream(monkeypatch, tmp_path)
        assert {name: os.environ[name] for name in bound} == bound  # the setup's variables are the construct's
        # a handler on boto3's default session reaches the clients made after it; mock_aws gives a session
        # of its own, dropped when it ends
        boto3._get_default_session().events.register(
            "provide-client-params.timestream-write.DescribeEndpoints", discovered
        )
        good = {"vin": "1FT000001", "fleet": "north", "time": "2026-03-01T12:00:00+00:00", "speed_kmh": 88.5}
        first = handler["handler"]({"readings": [good, {**good, "fleet": None}]}, None)
        writer = handler["_writer"]
        second = handler["handler"]({"readings": [{**good, "time": "2026-03-01T12:00:01+00:00"}]}, None)
        records = timestreamwrite_backends["123456789012"][REGION].databases["fleet"].tables["telemetry"].records
    assert first == {"ingested": 1, "rejected": ["dimension(s) ['fleet'] missing"]}
    assert second == {"ingested": 1, "rejected": []} and handler["_writer"] is writer
    assert len(discoveries) == 1  # the kept writer's client kept the endpoint it discovered
    assert len(records) == 2


@pytest.mark.slow  # starts moto_server and the rules proxy
def test_the_one_call_example_runs():
    namespace = run("testing/one_call.py")
    assert namespace["ddb"].endpoint_url.startswith("http://127.0.0.1:")


@pytest.mark.slow  # a pytest run in a subprocess, with the plugin the install registered
def test_the_fixture_example_passes_under_pytest_with_the_plugin(tmp_path):
    # testing/handler.py and testing/test_handler.py (the worked example) run in tests/e2e/test_testing_module.py,
    # from the built wheel in a project of their own
    (tmp_path / "test_one_fixture.py").write_text(code("testing/one_fixture.py"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


# ---- shell ---------------------------------------------------------------------------------------------------


def commands(name: str) -> list[list[str]]:
    """The snippet's commands, continuation lines joined and comments dropped, each split as the shell would."""
    text = code(name).replace("\\\n", " ")
    return [words for line in text.splitlines() if (words := shlex.split(line, comments=True))]


def check_bash_syntax(name: str, tmp_path: Path) -> None:
    done = subprocess.run(["bash", "-n", "-c", code(name)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"docs/snippets/{name}: {done.stderr}"


def check_two_commands(name: str, tmp_path: Path) -> None:
    """The two commands are the scripts CI runs (``.ci/run`` calls ``scripts/test.sh``); both exist and parse."""
    check_bash_syntax(name, tmp_path)
    assert [words[:2] for words in commands(name)] == [["bash", "scripts/main.sh"], ["bash", "scripts/test.sh"]]
    for script in ("scripts/main.sh", "scripts/test.sh"):
        assert subprocess.run(["bash", "-n", str(ROOT / script)], check=False).returncode == 0
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def check_context_keys(name: str, tmp_path: Path) -> None:
    """Each ``-c key=value`` of the deploy is a context key the sample app reads."""
    check_bash_syntax(name, tmp_path)
    keys = [word.split("=")[0] for words in commands(name)
            for flag, word in zip(words, words[1:], strict=False) if flag == "-c"]
    read = set(re.findall(r'context\("(\w+)"\)', (ROOT / "app.py").read_text()))
    assert keys and set(keys) <= read, f"{keys} against the app's {sorted(read)}"


def _version() -> str:
    return re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE).group(1)


def check_release_names(name: str, tmp_path: Path) -> None:
    """A wheel's file name carries the version pyproject.toml declares (the build itself: test_wheel); a git
    install pins a commit, or a release tag of the version being prepared (no ``.devN``)."""
    check_bash_syntax(name, tmp_path)
    wheels = set(re.findall(r"cdk_ts-([\w.]+)-py3-none-any\.whl", code(name)))
    tags = set(re.findall(r"@v([\w.]+)", code(name)))
    pins = re.findall(r"git\+\S+@(<commit>|v[\w.]+)", code(name))
    assert wheels or pins, f"{name} installs neither a wheel nor a pinned git URL"
    assert wheels <= {_version()}, f"{name} names wheels {wheels}, pyproject.toml says {_version()}"
    assert tags <= {re.sub(r"\.dev\d+$", "", _version())}, f"{name} names tags {tags}"


def check_extra(name: str, tmp_path: Path) -> None:
    """The install is of a wheel or a pinned git URL (check_release_names), and each extra it names is one
    pyproject.toml declares."""
    check_release_names(name, tmp_path)
    extras = re.findall(r"(?:cdk-ts|\.whl)\[(\w+)\]", code(name))
    assert extras and all(re.search(rf"^{extra} = \[", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
                          for extra in extras)


# `pip install cdk-ts`, `pip install 'cdk-ts[testing]'`: the name alone, which a package index would resolve
_BY_NAME = re.compile(r"pip install\s+(--\S+\s+)*(['\"]?)cdk-ts(\[[\w,]+\])?\2(?!\s*@)(\s|`|$)", re.MULTILINE)


def test_no_page_installs_cdk_ts_by_its_name_alone():
    # cdk-ts is on no package index: a stranger could register the name
    texts = {path: path.read_text() for path in [ROOT / "README.md", *pages()]}
    texts.update({ROOT / "docs" / "snippets" / name: code(name) for name in snippets() if name.endswith(".sh")})
    found = [f"{path.relative_to(ROOT)}: {match.group(0).strip()}" for path, text in texts.items()
             for match in _BY_NAME.finditer(text)]
    assert found == []
    assert _BY_NAME.search("run `pip install 'cdk-ts[testing]'` first")  # the check can fail
    assert _BY_NAME.search("pip install cdk-ts\n") and not _BY_NAME.search('pip install "cdk-ts[nag] @ git+x@v1"')


def console_help(command: str, capsys) -> str:
    from cdk_ts.console.__main__ import main

    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def check_console(name: str, tmp_path: Path, capsys=None) -> None:
    """Every ``cdk-ts`` line parses: ``status``/``rotate`` through the console's own parser; the delegated commands'
    flags each appear in that command's ``--help``. Nothing reaches AWS."""
    from cdk_ts.console.__main__ import DELEGATED, parser

    check_bash_syntax(name, tmp_path)
    lines = [words for words in commands(name) if words[0] == "cdk-ts"]
    assert lines
    for words in lines:
        if words[1] in DELEGATED:
            text = console_help(words[1], capsys)
            flags = [w.split("=")[0] for w in words[2:] if w.startswith("--")]
            assert all(flag in text for flag in flags), f"{words}: not in `cdk-ts {words[1]} --help`"
        else:
            parser().parse_args(words[1:])


def check_replay_runbook(name: str, tmp_path: Path, capsys=None) -> None:
    """The runbook's ``cdk-ts`` line parses, and every stack output it reads is one the sample app writes."""
    check_console(name, tmp_path, capsys)
    outputs = re.findall(r"^\w+=\$\(output (\w+)\)", code(name), re.MULTILINE)
    written = set(re.findall(r'\("(\w+)", self\.', (ROOT / "app.py").read_text()))
    assert outputs and set(outputs) <= written, f"{outputs} against the app's outputs {sorted(written)}"


def check_planner_runs(name: str, tmp_path: Path) -> None:
    """The command runs as written (from a folder with this environment as ``.venv``) and draws its plot."""
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    done = subprocess.run(["bash", "-e", "-c", code(name)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "provisioned+ia" in done.stdout and (tmp_path / "cost.png").stat().st_size > 0


def check_release_build(name: str, tmp_path: Path) -> None:
    """The commands' flags are the build's and twine's (tests/e2e/test_wheel.py runs the same build and check)."""
    check_bash_syntax(name, tmp_path)
    modules = []
    for words in commands(name):
        module = words[words.index("-m") + 1]
        modules.append(module)
        subcommand = words[words.index("-m") + 2:][:1] if module == "twine" else []  # twine check
        flags = [w for w in words if w.startswith("--")]
        usage = subprocess.run([sys.executable, "-m", module, *subcommand, "--help"],
                               capture_output=True, text=True, timeout=60, check=True).stdout
        assert flags and all(flag in usage for flag in flags), (words, usage)
    assert modules == ["build", "twine"]


def check_new_app_step(name: str, tmp_path: Path) -> None:
    """Run as written by tests/docs/test_new_app.py; here: they parse."""
    check_bash_syntax(name, tmp_path)


def check_archive_sync(name: str, tmp_path: Path) -> None:
    """Run for real by test_the_archive_sync_gets_the_objects_the_sample_app_writes (below)."""
    check_bash_syntax(name, tmp_path)


def check_stack_lookup(name: str, tmp_path: Path) -> None:
    """The lookup names the sample app's stack (app.py's STACK_NAME); the emulator answer it relies on is the
    scenario's (examples/scenario.py)."""
    from app import STACK_NAME

    check_bash_syntax(name, tmp_path)
    stacks = [words[words.index("--stack-name") + 1] for words in commands(name) if "--stack-name" in words]
    assert stacks == [STACK_NAME]


SHELL: dict[str, Callable] = {
    "getting-started/two-commands.sh": check_two_commands,
    "getting-started/find-rotation-function.sh": check_stack_lookup,
    "getting-started/deploy-real-account.sh": check_context_keys,
    "getting-started/install-from-git.sh": check_extra,
    "getting-started/install-wheel.sh": check_release_names,
    "new-app/setup.sh": check_new_app_step,
    "release/build.sh": check_release_build,
    "new-app/synth.sh": check_new_app_step,
    "console/commands.sh": check_console,
    "operations/replay.sh": check_replay_runbook,
    "planner/plan.sh": check_planner_runs,
    "testing/install.sh": check_extra,
    "testing/local.sh": check_console,
    "stream-archiver/sync.sh": check_archive_sync,
}


@pytest.mark.parametrize("name", sorted(SHELL))
def test_shell_snippet(name, tmp_path, capsys):
    check = SHELL[name]
    if "capsys" in check.__code__.co_varnames:
        check(name, tmp_path, capsys)
    else:
        check(name, tmp_path)


# ---- SQL and text ------------------------------------------------------------------------------------------


def check_view_text(name: str, tmp_path: Path) -> None:
    """The view is the text the construct writes (cdk_ts.deduplicated_view_sql), then a commented example."""
    from cdk_ts import deduplicated_view_sql

    assert code(name).startswith(deduplicated_view_sql('"<database>"."<table>"'))


def check_athena(name: str, tmp_path: Path) -> None:
    """Parses as Athena SQL (sqlglot); no test runs Athena itself."""
    import sqlglot

    statements = [s for s in sqlglot.parse(code(name), read="athena") if s is not None]
    assert statements and all(s.find(sqlglot.exp.Select) for s in statements)


def check_duckdb_on_archive(name: str, tmp_path: Path) -> None:
    """Run for real on the sample app's synced archive by the sync test below."""
    import sqlglot

    assert sqlglot.parse_one(code(name), read="duckdb") is not None


def check_construct_errors(name: str, tmp_path: Path) -> None:
    """The error text is what the construct raises for the props it names (a line ending ``...`` is a prefix)."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_dynamodb as dynamodb

    from cdk_ts import ShardMetadataTable

    stack = Stack(App(), "Audit")
    table = dynamodb.Table(stack, "AuditLog",
                           partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.NUMBER))
    with pytest.raises(ValueError) as raised:
        ShardMetadataTable(stack, "AuditShards", main_table=table, strategy="hash")
    actual = f"ValueError: {raised.value}".splitlines()
    shown = code(name).splitlines()
    assert len(actual) == len(shown)
    for mine, real in zip(shown, actual, strict=True):
        assert real.startswith(mine.removesuffix("...")) if mine.endswith("...") else real == mine


#: The packages whose every top-level module the folder map must name.
MAPPED_PACKAGES = ("cdk_ts", "lambdas/cdk_ts_runtime")
#: A folder map's line indented this far or further continues the description of the row above it.
DESCRIPTION_COLUMN = 20


def layout_problems(text: str, root: Path = ROOT) -> list[str]:
    """What a folder map names that does not exist, the modules of ``MAPPED_PACKAGES`` it leaves out, and the
    runtime's removed 0.2 module paths it names anywhere (``cdk_ts_runtime.router``).

    A row names paths before its first double space, one per word: at column 0 from ``root``, indented two
    spaces a level from the one folder the row a level up names (``name/`` a folder, ``name`` a module or file).
    """
    problems, named, folders = [], set(), [root]
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent >= DESCRIPTION_COLUMN:
            continue
        depth = indent // 2
        if indent % 2 or depth >= len(folders):
            problems.append(f"{line.strip()!r}: indented {indent} spaces, under no one folder")
            continue
        names = line.strip().split("  ")[0].split()
        paths = [_layout_path(folders[depth], name) for name in names]
        for name, path in zip(names, paths, strict=True):
            named.add(path)
            if not (path.is_dir() if name.endswith("/") else path.is_file()):
                problems.append(f"{folders[depth].relative_to(root) / name} does not exist")
        del folders[depth + 1 :]
        if len(names) == 1 and names[0].endswith("/"):
            folders.append(paths[0])
    problems += [
        f"{old} is a 0.2 path" for old in re.findall(r"\bcdk_ts_runtime(?:\.\w+)+", text) if removed_module(old)
    ]
    for package in MAPPED_PACKAGES:
        modules = [p for p in (root / package).iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()]
        problems += [f"{m.relative_to(root)} is left out" for m in sorted(modules) if m not in named]
    return problems


def _layout_path(folder: Path, name: str) -> Path:
    """The path a folder map's ``name`` means in ``folder``: a folder (``name/``), a module, or a file."""
    module = folder / f"{name}.py"
    return module if not name.endswith("/") and module.is_file() else folder / name.rstrip("/")


def check_layout(name: str, tmp_path: Path) -> None:
    """Every path the folder map names exists, and it names every module of cdk_ts/ and lambdas/cdk_ts_runtime/."""
    assert layout_problems(code(name)) == []


def test_the_layout_check_finds_a_moved_module_a_missing_one_and_a_stray_indent():
    old = (
        "lambdas/cdk_ts_runtime/   runtime: router, ...\n"
        "  router _deprecations    clients; the old names\n"
        "  rotation/               rotator\n"
        "    tiers                 capacity tiers\n"
        "   handlers/              odd indent\n"
        "  _aws                    see cdk_ts_runtime.sharding.table and cdk_ts_runtime.ShardedTable\n"
    )
    problems = layout_problems(old)
    assert problems[:4] == [
        "lambdas/cdk_ts_runtime/router does not exist",
        "lambdas/cdk_ts_runtime/rotation does not exist",
        "lambdas/cdk_ts_runtime/rotation/tiers does not exist",
        "'handlers/              odd indent': indented 3 spaces, under no one folder",
    ]
    assert "lambdas/cdk_ts_runtime/_environment.py is left out" in problems
    assert "lambdas/cdk_ts_runtime/_deprecations.py is left out" not in problems
    assert "cdk_ts/rotation is left out" in problems
    assert "cdk_ts_runtime.sharding.table is a 0.2 path" in problems
    assert not [p for p in problems if "ShardedTable" in p or "_aws" in p]


SQL: dict[str, Callable] = {
    "stream-archiver/deduplicated_view.sql": check_view_text,
    "stream-archiver/athena_attributes.sql": check_athena,
    "stream-archiver/duckdb_attributes.sql": check_duckdb_on_archive,
    "compaction/athena_all.sql": check_athena,
}
TEXT: dict[str, Callable] = {
    "constructs/errors.txt": check_construct_errors,
    "contributing/layout.txt": check_layout,
}


@pytest.mark.parametrize("name", sorted(SQL) + sorted(TEXT))
def test_sql_and_text_snippet(name, tmp_path):
    {**SQL, **TEXT}[name](name, tmp_path)


# ---- first hour: reading the archive the sample app wrote -----------------------------------------------------

# ``aws s3 sync s3://BUCKET/PREFIX DEST`` as the AWS CLI does it, through boto3 and AWS_ENDPOINT_URL (which the
# CLI honours too): the machine may have no AWS CLI, and the test is about the bucket and prefix the page names.
FAKE_AWS = '''#!{python}
import os, sys
import boto3
args = sys.argv[1:]
assert args[:2] == ["s3", "sync"] and args[2].startswith("s3://"), args
bucket, _, prefix = args[2][5:].partition("/")
s3 = boto3.client("s3")
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    for obj in page.get("Contents", []):
        target = os.path.join(args[3], obj["Key"][len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        s3.download_file(bucket, obj["Key"], target)
'''


@pytest.fixture(scope="module")
def sample_archivers():
    """The sample app's archivers (app.py): their prefixes and source tables' names, from the constructs."""
    from aws_cdk import App

    from app import STACK_NAME, build_app

    stack = build_app(App(), checks=False).node.find_child(STACK_NAME)
    return {"telemetry": stack.telemetry_archiver.prefix, "device-log": stack.device_log_archiver.prefix}


@pytest.mark.slow  # the sample app's constructs in-process (jsii), moto_server
def test_the_archive_sync_gets_the_objects_the_sample_app_writes(sample_archivers, moto_server, tmp_path,
                                                                  monkeypatch):
    # given the archive objects the sample app's telemetry archiver writes, under its own prefix, in a bucket
    written = tmp_path / "written"
    with mock_aws():
        sequences = write_archive(written, prefix=sample_archivers["telemetry"], table="telemetry_2026-03-01")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.endpoint_url)
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="sample-archive")
    keys = sorted(p.relative_to(written).as_posix() for p in written.rglob("*.jsonl.gz"))
    for key in keys:
        s3.upload_file(str(written / key), "sample-archive", key)
    assert keys and all(key.startswith(sample_archivers["telemetry"]) for key in keys)

    # when the page's sync runs in a fresh folder
    work = tmp_path / "work"
    (work / "bin").mkdir(parents=True)
    (work / "bin" / "aws").write_text(FAKE_AWS.format(python=sys.executable))
    (work / "bin" / "aws").chmod(0o755)
    env = {**os.environ, "ARCHIVE_BUCKET": "sample-archive", "PATH": f"{work / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", code("stream-archiver/sync.sh")], cwd=work, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr

    # then it copied every object and says how many, and the recipes read every record from them
    assert int(done.stdout.split()[-1]) == len(keys)
    # (the command the page gave before, the default prefix, copies nothing from the sample app's bucket)
    before = tmp_path / "before"
    (before / "archive").mkdir(parents=True)
    old = 'aws s3 sync "s3://$ARCHIVE_BUCKET/dynamodb/" archive/dynamodb/'
    subprocess.run(["bash", "-e", "-c", old], cwd=before, env=env, check=True, timeout=120)
    assert list(before.rglob("*.jsonl.gz")) == []
    monkeypatch.chdir(work)
    rows = run("stream-archiver/read_duckdb.py")["rows"]
    assert [row[0] for row in rows] == sequences
    import duckdb

    assert len(duckdb.sql(code("stream-archiver/duckdb_attributes.sql")).fetchall()) == len(sequences)
