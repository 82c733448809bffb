"""docs/operations.md's "Lambda entry points" are the handlers the constructs deploy, and each one exists."""

from __future__ import annotations

import importlib
import re

from tests.support.docs import DOCS, ROOT

_SET = re.compile(r'handler="(cdk_ts_runtime\.handlers\.[\w.]+)"')


def documented() -> set[str]:
    section = (DOCS / "operations.md").read_text().split("## Lambda entry points", 1)[1]
    return set(re.findall(r"\| `(cdk_ts_runtime\.handlers\.\w+\.handler)` \|", section))


def test_the_page_lists_every_handler_a_construct_sets():
    deployed = {m for path in (ROOT / "cdk_ts").rglob("*.py") for m in _SET.findall(path.read_text())}
    assert deployed and documented() == deployed


def test_every_documented_handler_is_a_function_of_the_runtime():
    for path in documented():
        module, _, name = path.rpartition(".")
        assert callable(getattr(importlib.import_module(module), name)), path
