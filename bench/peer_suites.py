"""Differential runs of test suites other people wrote against DynamoDB: the engine alone, then behind `cdk-ts local`.

Run: .venv/bin/python -m bench.peer_suites --peer-dir DIR [--suite dynalite]
     [--suite connect-dynamodb] [--files putItem.js ...] [--json out.json]

Each suite runs twice on the same commit, on fresh servers: against dynalite alone on 127.0.0.1, and against
``cdk-ts local --engine dynalite`` (the rules layer in front of a fresh dynalite) with its defaults, as a user
starts it. The two runs are compared test by test. A *regression* passes alone and fails behind the layer; a *fix*
fails alone and passes behind it. A regression is explained only when ``EXPLAINED`` lists it with the DynamoDB rule
that makes the layer answer otherwise and that rule's public source. The script exits 1 on any unexplained
regression, and prints the tallies and the time ratio (behind / alone) that docs/testing.md and bench/README.md quote.

The suites:

- ``dynalite``: architect/dynalite's own mocha suite (Apache-2.0), which its authors run against DynamoDB itself
  with ``REMOTE=1`` (fixed tables created at 10 read / 5 write units, throttled calls retried). It is not part of
  this repository: ``--peer-dir`` names a copy of its ``test/`` folder. The suite is copied to a scratch folder and
  its remote request options are pointed at the endpoint under test (``PEER_HOST``/``PEER_PORT``): that is the only
  change made to it.
- ``connect-dynamodb``: connect-dynamodb's own mocha suite (AWS SDK for JavaScript v3), installed by npm from this
  repository's package.json, pointed at the endpoint through its ``ENDPOINT`` variable, unmodified.

The pytest run never reads ``--peer-dir`` (a lone clone has none); tests/harness/test_says_yes.py keeps the cases
where DynamoDB says yes in the ordinary test command.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from cdk_ts.testing import start_dynalite

REPO = Path(__file__).resolve().parents[1]
NODE_MODULES = REPO / "node_modules"
MOCHA = NODE_MODULES / ".bin" / "mocha"

# The remote request options of the dynalite suite's helpers (test/helpers.js), as written for DynamoDB itself;
# each is replaced by the endpoint under test. The count is checked, so a changed suite fails loudly.
_REMOTE_HOSTS = (
    "{ host: 'dynamodb.' + helper.awsRegion + '.amazonaws.com', method: 'POST' }",
    "{ host: 'dynamodb.' + awsRegion + '.amazonaws.com', method: 'POST' }",
)
_LOCAL_ENDPOINT = "{ host: process.env.PEER_HOST, port: Number(process.env.PEER_PORT), method: 'POST' }"


@dataclass(frozen=True)
class Explained:
    """A test that passes on the engine alone and fails behind the layer because DynamoDB answers otherwise."""

    title: str  # mocha's full title
    rule: str  # the rule's name in cdk_ts.testing.RULES, or a short name of the DynamoDB behaviour
    source: str  # the public source of DynamoDB's answer


_API = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/"
# The suite compares CreateTable's whole TableDescription with what DynamoDB answered when it was recorded, before
# deletion protection (2023). DynamoDB's TableDescription has carried DeletionProtectionEnabled since, and CreateTable
# answers users recorded in 2023 and 2024 show "DeletionProtectionEnabled": false; dynalite 4.0 leaves it out.
_DESCRIPTION_SINCE_2023 = Explained(
    "", "TableDescription.DeletionProtectionEnabled (newer than the recording)", _API + "API_TableDescription.html")

#: Regressions the layer causes on purpose: each is DynamoDB's documented answer where the engine answers otherwise.
EXPLAINED: tuple[Explained, ...] = tuple(
    Explained(f"createTable functionality should succeed for {case}", _DESCRIPTION_SINCE_2023.rule,
              _DESCRIPTION_SINCE_2023.source)
    for case in ("basic", "basic PAY_PER_REQUEST", "LocalSecondaryIndexes", "PAY_PER_REQUEST GlobalSecondaryIndexes",
                 "multiple GlobalSecondaryIndexes")
)


@dataclass
class Run:
    """One run of a suite against one endpoint: each test's outcome by mocha's full title, and the time it took."""

    outcomes: dict[str, str]  # "passed", or the first line of the failure
    seconds: float
    refusals: dict[str, int] = field(default_factory=dict)  # the layer's refusals by Operation:Code (behind only)

    def passed(self, title: str) -> bool:
        """Whether ``title`` passed in this run."""
        return self.outcomes.get(title) == "passed"

    @property
    def passes(self) -> int:
        """How many tests passed."""
        return sum(1 for outcome in self.outcomes.values() if outcome == "passed")


# -- suites ---------------------------------------------------------------------------------------------------------
def prepare_dynalite_suite(peer_dir: Path, scratch: Path) -> Path:
    """A copy of the dynalite suite whose remote requests go to ``PEER_HOST``:``PEER_PORT``; its folder."""
    source = peer_dir / "test"
    if not (source / "helpers.js").is_file():
        raise SystemExit(f"peer_suites: {source} has no helpers.js; pass --peer-dir (the dynalite suite's folder)")
    suite = scratch / "dynalite-suite"
    shutil.copytree(source, suite / "test")
    helpers = suite / "test" / "helpers.js"
    text = helpers.read_text()
    for host in _REMOTE_HOSTS:
        if text.count(host) != 1:
            raise SystemExit(f"peer_suites: helpers.js no longer has {host!r} once; adapt _REMOTE_HOSTS")
        text = text.replace(host, _LOCAL_ENDPOINT)
    helpers.write_text(text)
    # helpers.js requires '..' (dynalite's index.js) even in remote mode, where it starts no server, and
    # batchWriteItem.js requires '../db' for dynalite's item sizes: both come from the installed package.
    (suite / "index.js").write_text("module.exports = require('dynalite')\n")
    (suite / "db.js").write_text("module.exports = require('dynalite/db')\n")
    return suite


def run_mocha(suite: Path, files: list[str], endpoint_url: str, report: Path, env_extra: dict[str, str],
              timeout: float) -> Run:
    """Run mocha over ``files`` of ``suite`` with the JSON reporter; each test's outcome by full title."""
    host, port = re.match(r"https?://([^:/]+):(\d+)", endpoint_url).groups()
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.update(NODE_PATH=str(NODE_MODULES), PEER_HOST=host, PEER_PORT=port, ENDPOINT=endpoint_url,
               AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",  # noqa: S105
               **env_extra)
    started = time.monotonic()
    result = subprocess.run(
        [str(MOCHA), "--require", "should", "--reporter", "json", "--reporter-option", f"output={report}",
         *files], cwd=suite, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )
    seconds = time.monotonic() - started
    if not report.exists():
        raise SystemExit(f"peer_suites: mocha wrote no report for {suite.name} against {endpoint_url}:\n"
                         f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
    data = json.loads(report.read_text())
    outcomes = {case["fullTitle"]: "passed" for case in data["passes"]}
    for case in data["failures"]:
        message = (case.get("err") or {}).get("message") or "failed"
        outcomes[case["fullTitle"]] = message.splitlines()[0][:300] if message else "failed"
    return Run(outcomes, seconds)


@dataclass(frozen=True)
class Suite:
    """How to run one suite: its folder, the files and mocha options, extra environment, a time limit."""

    name: str
    folder: Path
    files: list[str]
    env: dict[str, str]
    timeout: float


def dynalite_suite(peer_dir: Path, scratch: Path, only: list[str]) -> Suite:
    """The dynalite suite in remote mode (as recorded against DynamoDB), 30 s per test as its package.json says."""
    folder = prepare_dynalite_suite(peer_dir, scratch)
    files = sorted(p.name for p in (folder / "test").glob("*.js") if p.name != "helpers.js")
    if only:
        files = [f for f in files if f in only]
    return Suite("dynalite", folder, ["-t", "30s", *[f"test/{f}" for f in files]], {"REMOTE": "1"}, 3600)


def connect_dynamodb_suite() -> Suite:
    """connect-dynamodb's own suite, with the options of its package.json ``test`` script."""
    folder = NODE_MODULES / "connect-dynamodb"
    script = json.loads((folder / "package.json").read_text())["scripts"]["test"].split()
    if script[0] != "mocha":
        raise SystemExit(f"peer_suites: connect-dynamodb's test script is {script}, not mocha")
    return Suite("connect-dynamodb", folder, script[1:], {}, 600)


# -- targets --------------------------------------------------------------------------------------------------------
def on_engine_alone(suite: Suite, report: Path) -> Run:
    """``suite`` against a fresh dynalite alone."""
    engine = start_dynalite()
    try:
        return run_mocha(suite.folder, suite.files, engine.endpoint_url, report, suite.env, suite.timeout)
    finally:
        engine.stop()


def behind_cdk_ts_local(suite: Suite, report: Path, settings: list[str]) -> Run:
    """``suite`` against ``cdk-ts local --engine dynalite`` (its defaults, plus ``--set`` ``settings``)."""
    command = [sys.executable, "-m", "cdk_ts.console", "local", "--engine", "dynalite", "--json",
               *[f"--set={setting}" for setting in settings]]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = json.loads(process.stdout.readline())
        run = run_mocha(suite.folder, suite.files, info["endpoint_url"], report, suite.env, suite.timeout)
        with urllib.request.urlopen(f"{info['endpoint_url']}/_rules/stats", timeout=10) as answer:  # noqa: S310
            run.refusals = json.loads(answer.read())["refusals"]
        return run
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# -- comparison -----------------------------------------------------------------------------------------------------
@dataclass
class Comparison:
    """The two runs of one suite, test by test."""

    suite: str
    alone: Run
    behind: Run
    explained: dict[str, Explained]

    @property
    def regressions(self) -> list[str]:
        """Tests that pass alone and fail behind the layer."""
        return sorted(t for t in self.alone.outcomes if self.alone.passed(t) and not self.behind.passed(t))

    @property
    def fixes(self) -> list[str]:
        """Tests that fail alone and pass behind the layer."""
        return sorted(t for t in self.behind.outcomes if self.behind.passed(t) and not self.alone.passed(t))

    @property
    def unexplained(self) -> list[str]:
        """Regressions no ``EXPLAINED`` entry accounts for."""
        return [t for t in self.regressions if t not in self.explained]

    def summary(self) -> dict:
        """The tallies docs/testing.md and bench/README.md quote."""
        return {
            "suite": self.suite,
            "tests": len(self.alone.outcomes.keys() | self.behind.outcomes.keys()),
            "passed_alone": self.alone.passes,
            "passed_behind": self.behind.passes,
            "regressions": len(self.regressions),
            "explained": len(self.regressions) - len(self.unexplained),
            "unexplained": len(self.unexplained),
            "fixes": len(self.fixes),
            "seconds_alone": round(self.alone.seconds, 1),
            "seconds_behind": round(self.behind.seconds, 1),
            "time_ratio": round(self.behind.seconds / max(self.alone.seconds, 0.001), 2),
            "layer_refusals": self.behind.refusals,
        }

    def text(self) -> str:
        """The comparison for a terminal."""
        s = self.summary()
        lines = [f"{s['suite']}: {s['tests']} tests; passed {s['passed_alone']} alone, {s['passed_behind']} behind "
                 f"cdk-ts local; regressions {s['regressions']} ({s['explained']} explained, {s['unexplained']} "
                 f"unexplained); fixes {s['fixes']}; {s['seconds_alone']} s alone, {s['seconds_behind']} s behind "
                 f"({s['time_ratio']}x)",
                 f"  the layer's refusals: {s['layer_refusals']}"]
        for title in self.regressions:
            entry = self.explained.get(title)
            why = f"explained: {entry.rule} ({entry.source})" if entry else "UNEXPLAINED"
            lines.append(f"  regression: {title}\n      behind: {self.behind.outcomes.get(title, 'not run')}\n"
                         f"      {why}")
        lines += [f"  fix: {title}\n      alone: {self.alone.outcomes.get(title)}" for title in self.fixes]
        return "\n".join(lines)


def compare(suite: Suite, scratch: Path, settings: list[str]) -> Comparison:
    """Run ``suite`` alone and behind the layer, and compare."""
    alone = on_engine_alone(suite, scratch / f"{suite.name}-alone.json")
    behind = behind_cdk_ts_local(suite, scratch / f"{suite.name}-behind.json", settings)
    explained = {entry.title: entry for entry in EXPLAINED}
    return Comparison(suite.name, alone, behind, explained)


def main(argv: list[str] | None = None) -> int:
    """Run the differential; exit 1 on an unexplained regression."""
    parser = argparse.ArgumentParser(prog="python -m bench.peer_suites", description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer-dir", type=Path, default=None,
                        help="a copy of the dynalite suite's folder (with test/); needed for --suite dynalite")
    parser.add_argument("--suite", action="append", choices=["dynalite", "connect-dynamodb"], default=[],
                        help="a suite to run (repeatable); default: both")
    parser.add_argument("--files", nargs="*", default=[], help="only these files of the dynalite suite")
    parser.add_argument("--set", action="append", default=[], dest="settings", metavar="NAME=VALUE",
                        help="a cdk-ts local setting for the run behind the layer (default: none, its defaults)")
    parser.add_argument("--json", type=Path, default=None, help="also write the tallies here")
    args = parser.parse_args(argv)
    if not MOCHA.exists():
        raise SystemExit("peer_suites: node_modules has no mocha; run scripts/setup.sh first")
    suites = args.suite or ["dynalite", "connect-dynamodb"]
    if "dynalite" in suites and args.peer_dir is None:
        parser.error("--peer-dir DIR is needed for the dynalite suite (a copy of its test/ folder; the repository "
                     "ships none)")
    results = []
    with tempfile.TemporaryDirectory(prefix="peer-suites-") as tmp:
        scratch = Path(tmp)
        for name in suites:
            suite = (dynalite_suite(args.peer_dir.resolve(), scratch, args.files) if name == "dynalite"
                     else connect_dynamodb_suite())
            comparison = compare(suite, scratch, args.settings)
            print(comparison.text(), flush=True)
            results.append(comparison)
    if args.json:
        args.json.write_text(json.dumps([c.summary() for c in results], indent=2) + "\n")
    return 1 if any(c.unexplained for c in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
