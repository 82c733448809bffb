"""The sample app synthesizes, cdk-nag clean, on the oldest dependency versions pyproject.toml allows.

A fresh venv gets exactly the floors: each ``>=X`` of ``[project].dependencies`` and of the ``nag`` extra
installed as ``==X`` (the installer refuses floors that contradict each other). This checkout is put on its
``PYTHONPATH``, the way the wheel lays it out (``cdk_ts`` from the root, ``cdk_ts_runtime`` from
``lambdas/``). There the sample app is synthesized as ``cdk synth`` runs it (cdk.json's context,
``CDK_OUTDIR``), with cdk-nag's AwsSolutions pack, and the runtime builds every client it creates and
validates its fullest CreateTable and UpdateTable requests against that botocore's DynamoDB model, and reads
the reasons of an on-demand throttle parsed by it. A floor below a version that works fails one of these.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support.nag import reported_findings
from tests.support.processes import json_report, run_captured

# End to end (installs from the package index), about a minute: `-m "not e2e and not slow"` leaves it out.
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
STACK = "CdkTsSample"

# Run in the floors venv: every client the runtime creates, with its retry Config, and the requests that
# carry the newest DynamoDB parameters the runtime sends (WarmThroughput, OnDemandThroughput, TableClass),
# checked by botocore's own parameter validation, as the client does before sending. Prints the versions.
RUNTIME_CHECK = """
import json, importlib.metadata as metadata
import boto3
from botocore.validate import validate_parameters
from cdk_ts_runtime import _retries
from cdk_ts_runtime._rotation.tiers import capacity_request, tier_steps
from cdk_ts_runtime._rotation.config import CapacityTier

session = boto3.Session(region_name="eu-west-1", aws_access_key_id="floor", aws_secret_access_key="floor")
clients = {
    "dynamodb": _retries.CONTROL_PLANE, "application-autoscaling": _retries.CONTROL_PLANE,
    "lambda": _retries.CONTROL_PLANE, "cloudformation": _retries.CONTROL_PLANE, "cloudwatch": _retries.METRICS,
    "timestream-write": _retries.TIMESTREAM_WRITE, "s3": _retries.DATA_PATH,
}
made = {service: session.client(service, config=config) for service, config in clients.items()}
model = made["dynamodb"].meta.service_model
tier = CapacityTier.on_demand(
    max_read_request_units=20000, max_write_request_units=8000, warm_read_units_per_second=15000,
    warm_write_units_per_second=5000, table_class="STANDARD_INFREQUENT_ACCESS",
)
create = {
    "TableName": "readings_2026-03-10",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "DeletionProtectionEnabled": True,
    **capacity_request(tier),
}
validate_parameters(create, model.operation_model("CreateTable").input_shape)
steps = tier_steps({"BillingModeSummary": {"BillingMode": "PROVISIONED"}}, tier)
assert len(steps) == 3, steps  # billing with on-demand caps, then warm throughput, then table class
for step in steps:
    request = {"TableName": "readings_2026-03-10", **{k: v for k, v in step.items() if not k.startswith("_")}}
    validate_parameters(request, model.operation_model("UpdateTable").input_shape)
# The floor botocore parses an on-demand table's throttle (ThrottlingException, throttlingReasons): the writers
# see a hot partition, not a throttle without reasons.
from cdk_ts_runtime import classify_throttle
from tests.support.wire import on_demand_throttle, parse_error
hot = classify_throttle(parse_error(on_demand_throttle("t", "TableWriteKeyRangeThroughputExceeded")))
assert hot.scope == "partition", hot
names = ("aws-cdk-lib", "constructs", "boto3", "botocore", "cdk-nag")
print(json.dumps({name: metadata.version(name) for name in names}))
"""


def floor_pins(pyproject: Path) -> dict[str, str]:
    """Each dependency of ``[project]`` and of the ``nag`` extra with the version its ``>=`` floor names."""
    project = tomllib.loads(pyproject.read_text())["project"]
    pins = {}
    for text in [*project["dependencies"], *project["optional-dependencies"]["nag"]]:
        requirement = Requirement(text)
        floors = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        assert len(floors) == 1, f"{text!r} in pyproject.toml names no single >= floor"
        pins[requirement.name] = floors[0]
    return pins


def floors_venv(path: Path, pins: dict[str, str]) -> Path:
    """A new venv at ``path`` holding exactly ``pins`` (and what they need); its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    python = path / "bin" / "python"
    # uv (the dev extra's installer): exactly what pip installs for these pins, without byte-compiling, in a
    # fraction of its time
    install = run_captured(
        [sys.executable, "-m", "uv", "pip", "install", "--quiet", "--python", python,
         *(f"{name}=={version}" for name, version in pins.items())],
        cwd=path, timeout=900,
    )
    assert install.returncode == 0, f"the floors {pins} were refused:\n{install.stderr[-3000:]}"
    return python


def checkout_env(outdir: Path) -> dict[str, str]:
    """This checkout's packages on the path, and what ``cdk synth`` hands an app: cdk.json's context, an outdir."""
    context = json.loads((REPO / "cdk.json").read_text())["context"]
    dropped = {"PYTHONPATH", "CDK_DEFAULT_ACCOUNT", "CDK_DEFAULT_REGION"}
    inherited = {k: v for k, v in os.environ.items() if k not in dropped}
    return {
        **inherited,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "lambdas")]),
        "CDK_CONTEXT_JSON": json.dumps(context),
        "CDK_OUTDIR": str(outdir),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }


def synthesize_sample_app(python: Path, outdir: Path) -> subprocess.CompletedProcess:
    """``python app.py`` in this checkout, as ``cdk synth`` runs it, writing the assembly to ``outdir``."""
    return run_captured([python, "app.py"], cwd=REPO, env=checkout_env(outdir), timeout=600)


def check_runtime(python: Path, cwd: Path) -> subprocess.CompletedProcess:
    """:data:`RUNTIME_CHECK` run by ``python``, with this checkout's runtime on the path."""
    return run_captured([python, "-c", RUNTIME_CHECK], cwd=cwd, env=checkout_env(cwd / "cdk.out"), timeout=300)


@pytest.fixture(scope="module")
def pins() -> dict[str, str]:
    return floor_pins(REPO / "pyproject.toml")


def test_every_dependency_the_sample_app_needs_has_a_floor(pins):
    assert {"aws-cdk-lib", "constructs", "boto3", "botocore", "cdk-nag"} <= set(pins), pins


# One test for both checks: the venv is the minute this costs, and CI's workers would each build their own.
def test_on_the_floors_the_sample_app_synthesizes_cdk_nag_clean_and_the_runtime_requests_validate(pins, tmp_path):
    # given a fresh venv holding exactly the floors
    python = floors_venv(tmp_path / "venv", pins)
    outdir = tmp_path / "cdk.out"

    # when the sample app is synthesized there (cdk-nag's AwsSolutions pack included), and the runtime
    # makes its clients and validates its newest DynamoDB requests there
    synth = synthesize_sample_app(python, outdir)
    runtime = check_runtime(python, tmp_path)

    # then the app synthesizes with no finding left unacknowledged and its template written
    findings = reported_findings(outdir) if (outdir / "validation-report.json").exists() else []
    assert (synth.returncode, findings) == (0, []), "\n".join(findings) or synth.stderr[-3000:]
    resources = json.loads((outdir / f"{STACK}.template.json").read_text())["Resources"]
    by_type = [resource["Type"] for resource in resources.values()]
    assert by_type.count("AWS::Lambda::Function") >= 4, sorted(set(by_type))  # rotation, two archivers, ingest
    # and botocore accepts the runtime's requests, the versions that ran being the floors themselves
    assert json_report(runtime) == pins
