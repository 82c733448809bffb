"""cdk-ts's code assets: one deterministic zip per content, hashed by the digest taken while zipping it."""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Template

from cdk_ts import _assets
from cdk_ts.runtime_layer import RuntimeLayer


@pytest.fixture
def fresh_staging(tmp_path, monkeypatch):
    """Stage into ``tmp_path`` from a copy of the runtime package, with the per-process caches emptied."""
    source = tmp_path / "src" / _assets.RUNTIME_PACKAGE
    shutil.copytree(_assets.runtime_package_dir(), source, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(_assets, "runtime_package_dir", lambda: source)
    _assets.zipped_asset.cache_clear()
    yield source
    _assets.zipped_asset.cache_clear()


def layer_code_of(name: str) -> str:
    """The layer's ``Content`` (bucket and key) in a new stack ``name`` holding the RuntimeLayer."""
    stack = Stack(App(), name)
    RuntimeLayer.of(stack)
    (layer,) = Template.from_stack(stack).find_resources("AWS::Lambda::LayerVersion").values()
    return json.dumps(layer["Properties"]["Content"])


def test_the_zip_holds_the_layers_files_with_fixed_dates_and_readable_modes(fresh_staging):
    archive, _digest = _assets.zipped_asset("python")
    layer_files = _assets._source_files(fresh_staging, compaction=False, layer=True)
    with zipfile.ZipFile(archive) as bundle:
        entries = bundle.infolist()
        assert [e.filename for e in entries] == sorted(
            f"python/cdk_ts_runtime/{p.relative_to(fresh_staging).as_posix()}" for p in layer_files
        )
        assert {e.date_time for e in entries} == {(1980, 1, 1, 0, 0, 0)}
        assert {e.external_attr >> 16 for e in entries} == {0o100644}
        assert bundle.read("python/cdk_ts_runtime/_router.py") == (fresh_staging / "_router.py").read_bytes()
    assert archive.stat().st_mode & 0o777 == 0o644


def test_staging_the_same_files_again_writes_the_same_bytes(fresh_staging, tmp_path):
    first, digest = _assets.zipped_asset()
    kept = first.read_bytes()
    shutil.rmtree(first.parent)
    _assets.zipped_asset.cache_clear()
    second, again = _assets.zipped_asset()
    assert (second, again) == (first, digest)
    assert second.read_bytes() == kept


def test_a_changed_module_changes_the_asset_and_the_same_files_keep_it(fresh_staging):
    before = layer_code_of("A")
    assert layer_code_of("B") == before
    router = fresh_staging / "_router.py"
    router.write_text(router.read_text() + "\n# one more line\n")
    _assets.zipped_asset.cache_clear()
    assert layer_code_of("C") != before


def test_the_cloud_assembly_gets_the_zip_as_a_file_asset(fresh_staging, tmp_path):
    app = App(outdir=str(tmp_path / "out"))
    RuntimeLayer.of(Stack(app, "Layered"))
    app.synth()
    manifest = json.loads((tmp_path / "out" / "Layered.assets.json").read_text())["files"]
    (source,) = [a["source"] for a in manifest.values() if a["source"]["path"].endswith(".zip")]
    assert source["packaging"] == "file"
    staged = tmp_path / "out" / source["path"]
    assert staged.read_bytes() == _assets.zipped_asset("python")[0].read_bytes()


def test_a_zip_cut_short_leaves_no_file_and_the_next_synth_writes_it_whole(fresh_staging, monkeypatch):
    written = []
    real_writestr = zipfile.ZipFile.writestr

    def disk_full_after_three(self, entry, data, *args, **kwargs):
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        written.append(entry)
        return real_writestr(self, entry, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", disk_full_after_three)
    with pytest.raises(OSError, match="No space left"):
        _assets.zipped_asset()
    assert sorted(p.name for p in _assets.asset_root().iterdir() if p.suffix == ".zip") == []

    monkeypatch.setattr(zipfile.ZipFile, "writestr", real_writestr)
    archive, _digest = _assets.zipped_asset()
    with zipfile.ZipFile(archive) as bundle:
        assert len(bundle.namelist()) == len(_assets._source_files(fresh_staging, compaction=False)) > 3
