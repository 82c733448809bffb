"""No import cycle in cdk_ts or cdk_ts_runtime: each module can be read after the ones it imports.

The graph is built from the source with ``ast`` (``tests/support/imports.py`` says what counts as an import).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.imports import PACKAGES, import_cycles, imports_of, loaded_with, module_paths


def test_no_module_of_cdk_ts_or_cdk_ts_runtime_is_in_an_import_cycle():
    modules = module_paths(PACKAGES)
    assert len(modules) > 100, "few modules found: this test would prove little"
    assert import_cycles(modules) == []


def test_the_compaction_loads_nothing_of_the_rotation():
    # both take their reference time from the scheduled event: the shared reading lives in _periods
    modules = module_paths(PACKAGES)
    for handler in ("cdk_ts_runtime.handlers.compaction", "cdk_ts_runtime.handlers.compaction_partition"):
        loaded = loaded_with(handler, modules)
        assert "cdk_ts_runtime._periods" in loaded
        assert sorted(m for m in loaded if m.startswith("cdk_ts_runtime._rotation")) == []


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return module_paths({"pkg": tmp_path / "pkg"})


def test_the_check_finds_a_cycle_through_a_package_s_face_and_around_three_modules(tmp_path):
    modules = _package(tmp_path, {
        "__init__.py": "from pkg.a import A\n",
        "a.py": "from pkg import helper\nA = 1\n",  # a submodule: no cycle
        "helper.py": "try:\n    from pkg import A\nexcept ImportError:\n    pass\n",  # a name of the face: a cycle
        "x.py": "import pkg.y\n", "y.py": "from pkg.z import Z\n", "z.py": "if True:\n    from pkg import x\nZ = 1\n",
    })
    assert import_cycles(modules) == [["pkg", "pkg.a", "pkg.helper"], ["pkg.x", "pkg.y", "pkg.z"]]


def test_imports_for_type_checkers_and_inside_functions_are_no_cycle(tmp_path):
    modules = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from pkg.b import B\nA = 1\n",
        "b.py": (
            "from typing import TYPE_CHECKING\nimport typing\n"
            "if TYPE_CHECKING:\n    from pkg.a import A\n"
            "if typing.TYPE_CHECKING:\n    import pkg.a\nelse:\n    import json\n"
            "def later():\n    from pkg.a import A\n    return A\nB = 1\n"
        ),
        "c.py": "from . import a\nfrom .b import B\n",
    })
    assert import_cycles(modules) == []
    assert imports_of("pkg.c", modules) == {"pkg.a", "pkg.b"}
