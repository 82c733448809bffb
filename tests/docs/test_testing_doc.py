"""docs/testing.md's rules table is the rule registry's (``cdk_ts.testing.RULES``); regenerate it with
``python -m tests.docs.test_testing_doc``."""

from __future__ import annotations

import re
from pathlib import Path

from cdk_ts.testing import RULES, rules_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
_TABLE = re.compile(r"(<!-- rules-table:start -->\n)(.*?)(\n<!-- rules-table:end -->)", re.DOTALL)


def with_table(text: str, table: str) -> str:
    """``text`` with the Markdown between the rules-table markers replaced by ``table``."""
    replaced, count = _TABLE.subn(lambda m: m.group(1) + table + m.group(3), text)
    assert count == 1, "docs/testing.md needs exactly one <!-- rules-table:start/end --> pair"
    return replaced


def test_the_docs_rules_table_is_the_registry():
    text = DOC.read_text()
    assert with_table(text, rules_table()) == text, "run `python -m tests.docs.test_testing_doc` to regenerate it"


def test_every_rule_has_a_row_with_its_source_and_kind():
    table = _TABLE.search(DOC.read_text()).group(2)
    for rule in RULES:
        row = next(line for line in table.splitlines() if line.startswith(f"| `{rule.name}` |"))
        assert rule.source in row and ("guess" in row) == rule.guess


def test_the_table_check_can_fail():
    assert with_table(DOC.read_text(), "| nothing |") != DOC.read_text()


if __name__ == "__main__":
    DOC.write_text(with_table(DOC.read_text(), rules_table()))
