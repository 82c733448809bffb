"""The built wheel installs only ``cdk_ts`` and ``cdk_ts_runtime``, and works in an app with its own ``lambdas/``.

A common CDK layout keeps the app's function code in a top-level ``lambdas/`` package. The library
must not claim that name: these tests build the wheel, install it into a fresh venv, and synthesize
all four constructs from such an app folder.
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.assembly import asset_files
from tests.support.processes import json_report, run_captured

# End to end, and each test takes tens of seconds: `-m "not e2e and not slow"` leaves them out.
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
TOP_LEVEL_PACKAGES = {"cdk_ts", "cdk_ts_runtime"}

# The user's own package: the name the library must leave free.
USER_PACKAGE = {
    "__init__.py": '"""The app\'s own Lambda code."""\n',
    "handler.py": (
        '"""The app\'s own handler; cdk_ts_runtime comes from the cdk-ts runtime layer at run time."""\n'
        "\n"
        'GREETING = "hello from the app\'s own lambdas package"\n'
        "\n"
        "\n"
        "def handler(event, context):\n"
        '    return {"greeting": GREETING}\n'
    ),
}

USER_APP = """
import json, sys

from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from lambdas.handler import GREETING  # the app's own package, beside this file
from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, ShardMetadataTable, StreamArchiver

app = App(outdir=sys.argv[1])
stack = Stack(app, "UserStack")
tables = RotatingTimeSeriesTables(stack, "Readings", table_prefix="readings", retain_periods=3)
device_log = DeviceLogTable(stack, "DeviceLog", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
audit = dynamodb.Table(
    stack,
    "Audit",
    partition_key=dynamodb.Attribute(name="file_path", type=dynamodb.AttributeType.STRING),
    sort_key=dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER),
)
ShardMetadataTable(stack, "AuditShards", main_table=audit)
# two archivers sharing one new Glue database, each with its own table and view
StreamArchiver(stack, "DeviceLogArchiver", source=device_log, glue_database="archive", create_glue_database=True)
events = dynamodb.Table(
    stack,
    "Events",
    partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
    stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
)
StreamArchiver(stack, "EventsArchiver", source=events, glue_database="archive", create_glue_database=True)
# a function another app deployed: bind grants on its role and lists the variables to set by hand
imported = lambda_.Function.from_function_attributes(
    stack, "Imported", function_arn="arn:aws:lambda:eu-west-1:123456789012:function:imported",
    role=iam.Role.from_role_arn(stack, "ImportedRole", "arn:aws:iam::123456789012:role/imported"),
)
try:
    device_log.bind(imported)
    raise SystemExit("bind on an imported function did not list what to set by hand")
except TypeError as error:
    assert "UserStack/DeviceLog.bind(UserStack/Imported)" in str(error)
    assert "CDK_TS_DEVICE_LOG_TABLE_NAME=" in str(error)
device_log.bind(imported, environment=False, add_runtime_layer=False)
fn = lambda_.Function(
    stack,
    "UserFunction",
    runtime=lambda_.Runtime.PYTHON_3_12,
    handler="handler.handler",
    code=lambda_.Code.from_asset("lambdas"),
)
tables.bind(fn)
app.synth()
print(json.dumps({
    "greeting": GREETING,
    "cdk_ts": sys.modules["cdk_ts"].__file__,
    "cdk_ts_runtime": sys.modules["cdk_ts_runtime"].__file__,
}))
"""


def test_wheel_holds_only_the_cdk_ts_and_cdk_ts_runtime_packages(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top_level == TOP_LEVEL_PACKAGES
    assert "cdk_ts/rotation/tables.py" in names
    assert "cdk_ts_runtime/handlers/rotation.py" in names
    assert "cdk_ts_runtime/_router.py" in names and "cdk_ts_runtime/_sharding/table.py" in names
    assert "cdk_ts_runtime/_rotation/config.py" in names
    assert {"cdk_ts/py.typed", "cdk_ts_runtime/py.typed"} <= set(names)  # PEP 561: typed packages
    strays = [n for n in names if {"lambdas", "tests", "examples"} & set(n.split("/"))]
    assert strays == []


def test_an_app_with_its_own_lambdas_package_synthesizes_all_four_constructs_from_the_wheel(
    venv_python, venv_env, tmp_path
):
    # given an app folder with its own lambdas/ package and handler, and cdk-ts installed from the wheel
    app_dir = tmp_path / "app"
    (app_dir / "lambdas").mkdir(parents=True)
    for name, text in USER_PACKAGE.items():
        (app_dir / "lambdas" / name).write_text(text)
    (app_dir / "app.py").write_text(USER_APP)
    outdir = app_dir / "cdk.out"

    # when the app imports its own handler module and synthesizes a stack with every construct
    result = run_captured([venv_python, "app.py", outdir], cwd=app_dir, env=venv_env, timeout=600)

    # then it synthesizes, with both the user's module and cdk-ts's packages where they belong
    report = json_report(result)
    assert report["greeting"] == "hello from the app's own lambdas package"
    venv = str(venv_python.parents[1])
    assert report["cdk_ts"].startswith(venv), report
    assert report["cdk_ts_runtime"].startswith(venv), report

    resources = json.loads((outdir / "UserStack.template.json").read_text())["Resources"]
    functions = {
        name: r["Properties"] for name, r in resources.items() if r["Type"] == "AWS::Lambda::Function"
    }
    library_functions = {n: p for n, p in functions.items() if p["Handler"].startswith("cdk_ts_runtime.")}
    assert len(library_functions) == 3, sorted(functions)  # rotation and two archivers
    for props in library_functions.values():
        files = asset_files(outdir, "UserStack", props["Code"]["S3Key"])
        assert "cdk_ts_runtime/handlers/rotation.py" in files
        assert [f for f in files if not f.startswith("cdk_ts_runtime/")] == []

    by_type = [r["Type"] for r in resources.values()]
    assert (by_type.count("AWS::Glue::Database"), by_type.count("AWS::Glue::Table")) == (1, 4)
    imported_policies = [
        r for r in resources.values()
        if r["Type"] == "AWS::IAM::Policy" and r["Properties"].get("Roles") == ["imported"]
    ]
    assert len(imported_policies) == 1  # the imported function's role got the device log grant

    (layer_name,) = [n for n, r in resources.items() if r["Type"] == "AWS::Lambda::LayerVersion"]
    layer_files = asset_files(outdir, "UserStack", resources[layer_name]["Properties"]["Content"]["S3Key"])
    assert "python/cdk_ts_runtime/_router.py" in layer_files
    assert [f for f in layer_files if not f.startswith("python/cdk_ts_runtime/")] == []

    (user_function,) = [p for p in functions.values() if p["Handler"] == "handler.handler"]
    assert user_function["Layers"] == [{"Ref": layer_name}]
    user_files = asset_files(outdir, "UserStack", user_function["Code"]["S3Key"])
    # (the app imported lambdas.handler before synth, so Python may have written lambdas/__pycache__)
    assert [f for f in user_files if "__pycache__" not in f] == ["__init__.py", "handler.py"]


def test_nothing_named_lambdas_is_importable_after_installing_the_wheel(venv_python, venv_env, tmp_path):
    # given a folder without a lambdas/ directory
    assert not (tmp_path / "lambdas").exists()
    # when the venv's interpreter imports lambdas, then nothing provides it
    result = run_captured([venv_python, "-c", "import lambdas"], cwd=tmp_path, env=venv_env)
    assert result.returncode == 1
    assert "ModuleNotFoundError: No module named 'lambdas'" in result.stderr
    # while the wheel's own packages are there
    imported = run_captured(
        [venv_python, "-c", "import cdk_ts_runtime, cdk_ts; print(cdk_ts_runtime.__file__)"],
        cwd=tmp_path, env=venv_env, check=True,
    )
    assert imported.stdout.startswith(str(venv_python.parents[1]))


# cdk_ts_runtime alone: mypy over aws-cdk-lib costs about three minutes of CPU, so the wheel's cdk_ts annotations
# are read once, by the new app of docs/new-app.md (tests/docs/test_new_app.py: mypy --strict on a venv installed
# from a freshly built wheel, its app importing cdk_ts and its tests cdk_ts.testing).
CONSUMER = """
from cdk_ts_runtime import PeriodRouter, TableLayout

router: PeriodRouter = PeriodRouter("readings", period="daily")
layout: TableLayout = TableLayout("readings")
"""


def test_type_checkers_read_the_installed_runtime_wheels_annotations(venv_python, venv_env, tmp_path):
    # given a consumer of the runtime type-checked against the wheel installed in its venv (mypy from this environment)
    (tmp_path / "consumer.py").write_text(CONSUMER)
    # when mypy resolves cdk_ts_runtime through that interpreter
    result = run_captured(
        [sys.executable, "-m", "mypy", "--python-executable", venv_python, "--no-incremental",
         "--follow-imports=silent", "consumer.py"],
        cwd=tmp_path, env=venv_env, timeout=600,
    )
    # then the package is typed (no import-untyped) and the consumer checks clean
    assert "import-untyped" not in result.stdout, result.stdout[-3000:]
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_the_version_is_the_package_metadata(venv_python, venv_env, tmp_path):
    result = run_captured(
        [venv_python, "-c", "import cdk_ts, importlib.metadata as m; print(cdk_ts.__version__, m.version('cdk-ts'))"],
        cwd=tmp_path, env=venv_env, check=True,
    )
    mine, installed = result.stdout.split()
    assert mine == installed and mine != "0+unknown"


def test_the_sdist_and_wheel_pass_twine_check_strict_and_carry_the_declared_version(distributions):
    # given the sdist and the wheel one `python -m build` made (the release page's build step)
    built = sorted(p.name for p in distributions.iterdir())
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.MULTILINE).group(1)
    assert built == [f"cdk_ts-{version}-py3-none-any.whl", f"cdk_ts-{version}.tar.gz"]
    # when twine checks them as an upload would, warnings counted as failures
    result = run_captured(
        [sys.executable, "-m", "twine", "check", "--strict", *sorted(distributions.iterdir())], cwd=distributions
    )
    # then both pass (metadata complete, README renders as the long description)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert result.stdout.count("PASSED") == 2, result.stdout
