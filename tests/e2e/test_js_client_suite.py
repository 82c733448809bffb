"""An independent JavaScript client suite passes through ``cdk-ts local`` wherever it passes on the engine alone.

The suite is connect-dynamodb's own test file (``test/test.js`` in its npm package, pinned in package.json), written
by its authors for the AWS SDK for JavaScript v3 (``@aws-sdk/client-dynamodb``) and pointed at any endpoint through
``ENDPOINT``. It runs unmodified, with its own runner and options (its package.json ``test`` script: mocha), from
the folder npm installed it in; its devDependencies (mocha, should, sinon, express-session) are pinned beside it.
Only the environment is ours: ``ENDPOINT``, a region and dummy credentials. Nothing is downloaded at test time.

The suite runs on fresh servers each time:

1. moto_server alone on 127.0.0.1 (the engine);
2. ``cdk-ts local`` as a user starts it (documented rules only) -- the proof;
3. ``cdk-ts local`` with every rule disabled: the proxy itself changes no answer;
4. for each error code the layer answered in run 2, ``cdk-ts local`` with each rule in force that answers that
   code disabled alone: a case (or hook) lost in run 2 that passes here is explained by that rule.

Every case that passes on the engine alone must pass through the layer or be explained by one documented rule.
The figures are printed (``pytest -s``) for the README.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from cdk_ts.testing import rule_named, start_moto_server
from tests.support.processes import descendants, run_captured, still_alive

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "node_modules" / "connect-dynamodb"
MOCHA = REPO / "node_modules" / ".bin" / "mocha"
#: connect-dynamodb 3.0.5's test/test.js has 14 cases (``it``); all pass on moto_server.
CASES = 14
PASSED = "passed"
NOT_RUN = "not run"  # a case mocha skipped because a "before all" hook of its suite failed
_HOOK = re.compile(r'"(before|after) (all|each)" hook')  # mocha reports a failed hook under a title of this form


@dataclass
class SuiteRun:
    """One run of the suite: each case's and each failed hook's outcome by mocha's full title."""

    outcomes: dict[str, str]  # "passed", or the failure's error name (e.g. "ResourceNotFoundException")
    stats: dict | None = None  # the layer's /_rules/stats after the run (None on the engine alone)
    rules: tuple[str, ...] = ()  # the rules in force, as ``cdk-ts local --json`` listed them

    @property
    def hooks(self) -> set[str]:
        """The hooks that failed (mocha lists a hook only when it fails)."""
        return {title for title in self.outcomes if _HOOK.search(title)}

    def passed(self, title: str) -> bool:
        """Whether case ``title`` passed, or hook ``title`` did not fail."""
        return self.outcomes.get(title, PASSED if _HOOK.search(title) else NOT_RUN) == PASSED


def _error_name(err: dict) -> str:
    first_line = (err.get("stack") or err.get("message") or "").splitlines()[:1]
    match = re.match(r"(\w+)(:|$)", first_line[0]) if first_line else None
    return match.group(1) if match else "Error"


def run_suite(endpoint_url: str, report: Path) -> SuiteRun:
    """Run connect-dynamodb's own tests with its own ``npm test`` options against ``endpoint_url``."""
    script = json.loads((SUITE / "package.json").read_text())["scripts"]["test"].split()
    assert script[0] == "mocha", script  # its runner: mocha, options after it
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(ENDPOINT=endpoint_url, AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="testing",
               AWS_SECRET_ACCESS_KEY="testing")  # noqa: S105 - a dummy for a local server
    result = run_captured([MOCHA, *script[1:], "--reporter", "json", "--reporter-option", f"output={report}"],
                          cwd=SUITE, env=env, timeout=120)
    assert report.exists(), result.stdout[-2000:] + result.stderr[-2000:]
    data = json.loads(report.read_text())
    outcomes: dict[str, str] = {case["fullTitle"]: PASSED for case in data["passes"]}
    outcomes |= {case["fullTitle"]: _error_name(case["err"]) for case in data["failures"]}
    return SuiteRun(outcomes)


def cases(run: SuiteRun) -> list[str]:
    """The suite's cases (hooks left out) a run saw."""
    return [title for title in run.outcomes if title not in run.hooks]


def on_engine_alone(report: Path) -> SuiteRun:
    """The suite against moto_server alone, started here and stopped after."""
    engine = start_moto_server()
    try:
        return run_suite(engine.endpoint_url, report)
    finally:
        engine.stop()
        assert still_alive([engine.pid]) == []


def through_cdk_ts_local(report: Path, disable: Sequence[str] = ()) -> SuiteRun:
    """The suite through ``cdk-ts local`` (documented rules, less ``disable``), which is stopped with Ctrl-C after."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cdk_ts.console", "local", "--json", *[f"--disable={rule}" for rule in disable]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    children: list[int] = []
    try:
        info = json.loads(process.stdout.readline())
        children = descendants(process.pid)
        run = run_suite(info["endpoint_url"], report)
        with urllib.request.urlopen(f"{info['endpoint_url']}/_rules/stats", timeout=10) as answer:  # noqa: S310
            run.stats = json.loads(answer.read())
        run.rules = tuple(rule["name"] for rule in info["rules"])
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0, process.stderr.read()[-2000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert children and still_alive([process.pid, *children]) == []
    return run


def refused_codes(run: SuiteRun) -> set[str]:
    """The error codes the layer answered in ``run`` (its refusals, ``Operation:Code``)."""
    return {key.split(":", 1)[1] for key in run.stats["refusals"]}


def rules_answering(code: str, rules_in_force: Sequence[str]) -> list[str]:
    """The rules in force whose answer is ``code``."""
    return [name for name in rules_in_force if re.search(rf"\b{code}\b", rule_named(name).answer)]


def lost(engine: SuiteRun, layer: SuiteRun) -> list[str]:
    """Cases that passed on the engine alone and not through the layer, and hooks that failed only there."""
    return ([title for title in cases(engine) if engine.passed(title) and not layer.passed(title)]
            + sorted(hook for hook in layer.hooks if engine.passed(hook)))


def figures(engine: SuiteRun, layer: SuiteRun, explained: dict[str, str]) -> str:
    """The comparison as text, for the README's figures."""
    lines = [f"connect-dynamodb {json.loads((SUITE / 'package.json').read_text())['version']} (mocha), "
             f"{len(cases(engine))} cases: {sum(map(engine.passed, cases(engine)))} passed on moto_server alone, "
             f"{sum(map(layer.passed, cases(engine)))} through cdk-ts local"]
    lines += [f"  {title}: {layer.outcomes.get(title, NOT_RUN)} -> rule {explained.get(title)}"
              for title in lost(engine, layer)]
    lines.append(f"  the layer's refusals: {layer.stats['refusals']}")
    return "\n".join(lines)


def test_the_suite_and_its_runner_are_installed_from_package_json():
    pinned = json.loads((REPO / "package.json").read_text())["devDependencies"]
    installed = json.loads((SUITE / "package.json").read_text()) if SUITE.exists() else {}
    assert installed.get("version") == pinned["connect-dynamodb"], "run scripts/setup.sh (npm ci installs it)"
    assert MOCHA.exists() and shutil.which("node"), "the suite needs node and `npm ci` (scripts/setup.sh)"
    # the suite's own client is the AWS SDK for JavaScript v3, and its endpoint comes from the environment
    suite_source = (SUITE / "test" / "test.js").read_text()
    assert 'require("@aws-sdk/client-dynamodb")' in suite_source and "endpoint: process.env.ENDPOINT" in suite_source


def test_connect_dynamodbs_suite_passes_through_cdk_ts_local_wherever_it_passes_on_moto_server_alone(tmp_path):
    # given the suite's outcomes on the engine alone: every case passes there
    engine = on_engine_alone(tmp_path / "engine.json")
    assert len(cases(engine)) == CASES and all(map(engine.passed, cases(engine))), engine.outcomes

    # when it runs through cdk-ts local, and through it again with every rule disabled
    layer = through_cdk_ts_local(tmp_path / "layer.json")
    bare = through_cdk_ts_local(tmp_path / "bare.json", disable=layer.rules)

    # then the proxy alone changes no answer: with no rule in force, every outcome is the engine's
    assert bare.rules == () and bare.stats["refusals"] == {} and bare.stats["requests"].get("PutItem")
    assert bare.outcomes == engine.outcomes

    # and every case (or hook) lost through the layer passes when one documented rule alone is disabled
    differences = lost(engine, layer)
    explained: dict[str, str] = {}
    for code in sorted(refused_codes(layer)):
        for rule in rules_answering(code, layer.rules):
            without = through_cdk_ts_local(tmp_path / f"without-{rule}.json", disable=[rule])
            explained |= {title: rule for title in differences if title not in explained and without.passed(title)}
    report = figures(engine, layer, explained)
    print(report)
    assert [title for title in differences if title not in explained] == [], report
    assert all(not rule_named(rule).guess for rule in explained.values()), report
    # and each error the SDK raised there is the answer of a rule that explains a difference
    raised = {layer.outcomes[title] for title in differences if title in layer.outcomes}
    answers = {code for code in refused_codes(layer) if rules_answering(code, list(set(explained.values())))}
    assert raised <= answers, report
    # a table created and written at once is refused while CREATING, as DynamoDB does (the proof is not empty)
    assert explained.get("DynamoDBStore Setting should store data correctly") == "no_data_while_creating", report
