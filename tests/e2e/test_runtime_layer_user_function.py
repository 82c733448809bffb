"""A user's function written only from the docs runs with the RuntimeLayer and the environment ``bind`` set.

The app is docs/snippets/runtime/user_function_app.py, synthesized as ``cdk synth`` would; the handler
is docs/snippets/runtime/user_handler.py (both on the "Runtime clients" page). Both run as in Lambda: the
handler's folder first on ``sys.path`` (``/var/task``), then the layer's ``python/`` folder (``/opt/python``),
in an interpreter where ``cdk_ts_runtime`` can come from nowhere else; DynamoDB is moto.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
from pathlib import Path

import pytest

from bench.synth import zipped_size
from tests.support.assembly import asset_dir, synth_app
from tests.support.docs import code
from tests.support.processes import json_report, run_captured

# End to end, and each test takes tens of seconds: `-m "not e2e and not slow"` leaves them out.
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

STACK = "Telemetry"  # the README block's stack
LAYER_ZIP_LIMIT = 100 * 1024

# Runs the README handler the way Lambda would, against moto, and reports what happened as JSON.
RUN_HANDLER = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]  # /var/task (the function's code), then /opt/python (layers)
import boto3
from moto import mock_aws

with mock_aws():
    dynamodb = boto3.client("dynamodb")
    dynamodb.create_table(
        TableName="readings_2026-03-01",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "N"}, {"AttributeName": "sk", "AttributeType": "N"}
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    import cdk_ts_runtime
    import handler
    result = handler.handler({"device_id": 7, "time": "2026-03-01T12:00:00+00:00", "temperature_c": "21.5"}, None)
    stored = dynamodb.scan(TableName="readings_2026-03-01")["Items"]
print(json.dumps({
    "result": result,
    "stored": stored,
    "cdk_ts_runtime": cdk_ts_runtime.__file__,
    "handler": handler.__file__,
}))
"""


def isolated_env(pythonpath: list[Path], variables: dict[str, str]) -> dict[str, str]:
    """A Lambda-like environment: dummy credentials, a Region, the function's variables, nothing else of ours."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        **variables,
    }


@pytest.fixture(scope="module")
def readme_app(tmp_path_factory):
    """The README's construct block synthesized in an app folder holding the README's handler."""
    app_dir = tmp_path_factory.mktemp("readme-app")
    (app_dir / "src" / "ingest").mkdir(parents=True)
    (app_dir / "src" / "ingest" / "handler.py").write_text(code("runtime/user_handler.py"))
    (app_dir / "app.py").write_text(code("runtime/user_function_app.py"))
    return app_dir, synth_app(app_dir, what="README.md's user-handler: construct block")


@pytest.fixture(scope="module")
def deployed_shape(readme_app):
    """What Lambda would get: the layer's staged directory, the user function's code folder and variables."""
    _, outdir = readme_app
    resources = json.loads((outdir / f"{STACK}.template.json").read_text())["Resources"]
    (layer_id,) = [n for n, r in resources.items() if r["Type"] == "AWS::Lambda::LayerVersion"]
    layer = asset_dir(outdir, STACK, resources[layer_id]["Properties"]["Content"]["S3Key"])
    (function,) = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == "handler.handler"
    ]
    assert function["Layers"] == [{"Ref": layer_id}]
    variables = function["Environment"]["Variables"]
    unresolved = {k: v for k, v in variables.items() if not isinstance(v, str)}
    assert unresolved == {}, "a variable is only known at deploy time; this test needs literal values"
    return layer, asset_dir(outdir, STACK, function["Code"]["S3Key"]), variables


def test_readme_handler_writes_and_reads_back_through_the_layer_with_the_bound_environment(deployed_shape, tmp_path):
    # given the layer's python/ folder, the function's code and the variables bind() set
    layer, code, variables = deployed_shape
    # -S: no site, so the .pth of this checkout's editable install does not run; boto3 and moto come
    # from this venv's site-packages as a plain PYTHONPATH entry, cdk_ts_runtime only from the layer
    env = isolated_env([Path(sysconfig.get_paths()["purelib"])], variables)

    # when the README handler is called as Lambda would call it, against moto
    result = run_captured(
        [sys.executable, "-S", "-P", "-c", RUN_HANDLER, code, layer / "python"], cwd=tmp_path, env=env, timeout=300
    )

    # then it wrote the reading to the day's table and read it back
    report = json_report(result)
    assert report["cdk_ts_runtime"].startswith(str(layer / "python" / "cdk_ts_runtime")), report
    assert report["handler"].startswith(str(code)), report
    assert report["result"] == {"table": "readings_2026-03-01", "items": ["21.5"]}
    assert len(report["stored"]) == 1
    assert report["stored"][0]["temperature_c"] == {"N": "21.5"}
    assert report["stored"][0]["pk"] == {"N": "7"}


def test_without_the_layer_the_handler_interpreter_cannot_import_cdk_ts_runtime(deployed_shape, tmp_path):
    # given the same interpreter and path, minus the layer: the layer is the only source of cdk_ts_runtime
    _, code, variables = deployed_shape
    env = isolated_env([code, Path(sysconfig.get_paths()["purelib"])], variables)
    importing = "import boto3, moto; import cdk_ts_runtime"
    result = run_captured([sys.executable, "-S", "-P", "-c", importing], cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert "No module named 'cdk_ts_runtime'" in result.stderr


def test_runtime_layer_zips_to_at_most_100_kb(deployed_shape):
    layer, _, _ = deployed_shape
    assert sorted({p.relative_to(layer).parts[0] for p in layer.rglob("*") if p.is_file()}) == ["python"]
    assert zipped_size(layer) <= LAYER_ZIP_LIMIT
