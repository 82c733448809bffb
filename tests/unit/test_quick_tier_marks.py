"""``scripts/test.sh --quick`` leaves out every test that needs a server: the suite marks them ``server`` itself."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.conftest import pytest_collection_modifyitems


def item(*fixtures: str, **params: object) -> SimpleNamespace:
    """A collected test as the hook sees it: its fixtures, the parameters it was given, and its marks."""
    marks: list[str] = []
    return SimpleNamespace(fixturenames=list(fixtures), callspec=SimpleNamespace(params=params) if params else None,
                           marks=marks, add_marker=lambda mark: marks.append(mark.name))


@pytest.mark.parametrize("fixtures, params", [
    (("moto_server",), {}),
    (("rules_proxy", "unique_name"), {}),
    (("dynalite",), {}),
    (("any_dynamodb",), {"any_dynamodb": "dynalite"}),
    (("sharded_tables", "any_dynamodb"), {"any_dynamodb": "moto_server"}),
    (("proxy",), {"engine": "moto_server"}),
])
def test_a_test_on_a_server_is_marked_server(fixtures, params):
    test = item(*fixtures, **params)
    pytest_collection_modifyitems([test])
    assert test.marks == ["server"]


@pytest.mark.parametrize("fixtures, params", [
    ((), {}),
    (("aws", "dynamodb"), {}),
    (("any_dynamodb",), {"any_dynamodb": "moto"}),
    (("tmp_path",), {"name": "monitoring/app.py"}),
])
def test_a_test_without_a_server_is_left_unmarked(fixtures, params):
    test = item(*fixtures, **params)
    pytest_collection_modifyitems([test])
    assert test.marks == []
