"""The sample scenario's output is the steps a person follows: a handler's EMF and log lines go to its own log.

In Lambda a function's stdout (where ``EmfWriter`` writes) and stderr go to CloudWatch Logs; the scenario runs the
deployed handlers on this host, so ``examples.progress.function_output`` sends them to a file of the function's own.
tests/e2e/test_deploy_scenario.py checks the whole run's output holds no EMF line.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from cdk_ts_runtime import EmfWriter
from examples.progress import function_output, say

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_handlers_emf_and_log_lines_go_to_its_log_file_not_the_scenarios_output(tmp_path, capsys):
    # given a handler that writes an EMF metric line to stdout and a log line to stderr, as in Lambda
    def handler() -> None:
        EmfWriter("cdk-ts").publish({"RunsStarted": 1})
        print("a log line", file=sys.stderr)

    # when the scenario runs it between two progress lines
    say("1. Rotation")
    with function_output("rotation", tmp_path) as log:
        handler()
    with function_output("rotation", tmp_path):
        handler()
    say("  ok")

    # then the scenario's output holds the progress only, and the function's log both runs' lines
    out = capsys.readouterr()
    assert (out.out, out.err) == ("1. Rotation\n  ok\n", "")
    lines = log.read_text().splitlines()
    metrics = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(metrics) == 2 and all("_aws" in m and m["RunsStarted"] == 1 for m in metrics)
    assert lines.count("a log line") == 2


def _handler_calls_outside_function_output(tree: ast.AST) -> list[int]:
    """Lines of ``<module>.handler(...)`` calls not inside a ``with function_output(...)`` block."""
    def routed(node: ast.With) -> bool:
        return any(isinstance(item.context_expr, ast.Call) and "function_output" in ast.unparse(item.context_expr.func)
                   for item in node.items)

    found: list[int] = []

    def visit(node: ast.AST, inside: bool) -> None:
        call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "handler"
        if call and not inside:
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, inside or (isinstance(node, ast.With) and routed(node)))

    visit(tree, False)
    return found


def test_every_deployed_handler_the_scenario_runs_writes_to_its_own_log():
    stray = {path.name: lines for path in sorted(EXAMPLES.glob("*.py"))
             if (lines := _handler_calls_outside_function_output(ast.parse(path.read_text())))}
    assert stray == {}
    # the check can fail
    assert _handler_calls_outside_function_output(ast.parse("rotation.handler({}, None)\n")) == [1]
