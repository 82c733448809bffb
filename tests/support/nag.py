"""Run cdk-nag (v3, a CDK validation plugin) over an app and list the findings nobody acknowledged."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

from aws_cdk import App, Stack, Validations
from cdk_nag import AwsSolutionsChecks


def new_app(**kwargs) -> App:
    """An App writing to a fresh temporary outdir (removed at exit), so each synth has its own report."""
    outdir = tempfile.mkdtemp(prefix="cdk-ts-test-")
    atexit.register(shutil.rmtree, outdir, ignore_errors=True)
    return App(outdir=outdir, **kwargs)


def new_stack(**kwargs) -> tuple[App, Stack]:
    """``(app, stack)``: the stack ``Test`` in a ``new_app(**kwargs)``; construct paths read ``Test/...``."""
    app = new_app(**kwargs)
    return app, Stack(app, "Test")


def unacknowledged_findings(app: App, pack: type = AwsSolutionsChecks) -> list[str]:
    """Synthesize ``app`` with a cdk-nag rule pack; return ``"RuleId at path: ..."`` for every finding left.

    cdk-nag v3 fails synthesis on any unacknowledged error or warning and writes the details to
    ``validation-report.json``; an empty list means the app is clean.
    """
    Validations.of(app).add_plugins(pack(app))
    try:
        app.synth()
        return []
    except RuntimeError as error:
        if "ValidationFailed" not in str(error) and "Validation failed" not in str(error):
            raise
    return reported_findings(Path(app.outdir))


def reported_findings(outdir: Path) -> list[str]:
    """``"RuleId at path: ..."`` for every violation in the ``validation-report.json`` a failed synth left in outdir."""
    report = json.loads((outdir / "validation-report.json").read_text())
    return [
        f"{violation['ruleName']} at {construct['constructPath']}: {violation['description']}"
        for plugin in report["pluginReports"]
        for violation in plugin["violations"]
        for construct in violation["violatingConstructs"]
    ]
