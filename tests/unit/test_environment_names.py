"""Environment variable names: one module, one prefix; a name removed in 0.3.0, set alone, stops the reader."""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path

import pytest

import cdk_ts
import cdk_ts_runtime
from cdk_ts_runtime import DeviceLogRepository, ShardedTable, _environment
from cdk_ts_runtime._archiver import StreamRecordArchiver
from cdk_ts_runtime._compaction_plan import CompactionSettings
from cdk_ts_runtime._errors import EnvironmentVariableMissingError

NAMES = {
    name: value
    for name, value in vars(_environment).items()
    if name.isupper() and isinstance(value, str) and name != "PREFIX"
}
SETTINGS = json.dumps({"bucket": "archive", "prefix": "cdc/"})


def test_every_variable_has_the_one_prefix():
    assert len(NAMES) >= 20
    assert {name: value for name, value in NAMES.items() if not value.startswith(_environment.PREFIX)} == {}
    assert set(_environment.RENAMED) <= set(NAMES.values())
    assert all(not old.startswith(_environment.PREFIX) for old in _environment.RENAMED.values())


def test_no_other_module_spells_a_variable_name():
    # A name written anywhere else is a second definition that can drift from this module's.
    variable = re.compile(rf"^({_environment.PREFIX}[A-Z0-9_]+|{'|'.join(_environment.RENAMED.values())})$")
    spelt = []
    for package in (cdk_ts, cdk_ts_runtime):
        for path in Path(package.__file__).parent.rglob("*.py"):
            if path.name in ("_environment.py", "_deprecations.py"):  # the names, and the old names' one registry
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and variable.match(node.value):
                    spelt.append(f"{path.name}:{node.lineno}: {node.value}")
    assert spelt == []


#: Each reader, the old names a 0.2 function (or a user's own environment) has, and what the new names give.
READERS = [
    pytest.param(
        lambda env: (lambda a: (a.bucket, a.prefix))(StreamRecordArchiver.from_env(env)),
        {"ARCHIVE_BUCKET": "archive", "ARCHIVE_PREFIX": "cdc/"},
        ("archive", "cdc/"),
        id="StreamRecordArchiver",
    ),
    pytest.param(
        lambda env: (lambda s: (s.bucket, s.prefix))(CompactionSettings.from_env(env)),
        {"COMPACTION_SETTINGS": SETTINGS},
        ("archive", "cdc/"),
        id="CompactionSettings",
    ),
    pytest.param(
        lambda env: DeviceLogRepository.from_env(env).table_name,
        {"DEVICE_LOG_TABLE_NAME": "device-log"},
        "device-log",
        id="DeviceLogRepository",
    ),
    pytest.param(
        lambda env: (lambda t: (t.table_name, t.metadata_table_name, t.partition_key, t.sort_key, t.strategy))(
            ShardedTable.from_env(env)
        ),
        {
            "SHARDED_TABLE_NAME": "audit",
            "SHARD_METADATA_TABLE_NAME": "audit-shards",
            "SHARDED_PARTITION_KEY": "file_path",
            "SHARDED_SORT_KEY": "timestamp",
            "SHARDING_STRATEGY": "computed",
        },
        ("audit", "audit-shards", "file_path", "timestamp", "computed"),
        id="ShardedTable",
    ),
]


def _renamed(old_env: dict[str, str]) -> dict[str, str]:
    new_of = {old: new for new, old in _environment.RENAMED.items()}
    return {new_of[name]: value for name, value in old_env.items()}


@pytest.mark.parametrize(("read", "old_env", "expected"), READERS)
def test_an_environment_with_only_the_old_names_stops_the_reader_naming_the_new_ones(read, old_env, expected):
    with pytest.raises(EnvironmentVariableMissingError) as refused:
        read(old_env)
    assert set(refused.value.names) == set(_renamed(old_env))
    for old, new in zip(old_env, _renamed(old_env), strict=True):
        assert f"{old} was renamed {new}" in str(refused.value)
    assert "set " + ", ".join(refused.value.names) + " instead" in str(refused.value)


@pytest.mark.parametrize(("read", "old_env", "expected"), READERS)
def test_the_new_names_are_read_without_a_warning_and_the_old_ones_beside_them_are_ignored(read, old_env, expected):
    decoy = {name: "decoy" if name != "COMPACTION_SETTINGS" else json.dumps({"bucket": "decoy"}) for name in old_env}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read({**decoy, **_renamed(old_env)}) == expected


def test_an_optional_variable_under_its_old_name_is_refused_not_defaulted():
    # the archiver's prefix and the sharding strategy have defaults: an old name must not quietly mean the default
    with pytest.raises(EnvironmentVariableMissingError, match="ARCHIVE_PREFIX was renamed CDK_TS_ARCHIVE_PREFIX"):
        StreamRecordArchiver.from_env({_environment.ARCHIVE_BUCKET: "archive", "ARCHIVE_PREFIX": "cdc/"})
    sharded = {name: "x" for name in (_environment.SHARDED_TABLE_NAME, _environment.SHARD_METADATA_TABLE_NAME,
                                      _environment.SHARDED_PARTITION_KEY, _environment.SHARDED_SORT_KEY)}
    with pytest.raises(EnvironmentVariableMissingError, match="SHARDING_STRATEGY was renamed"):
        ShardedTable.from_env({**sharded, "SHARDING_STRATEGY": "computed"})


def test_an_old_name_a_reader_does_not_read_is_the_user_s_own():
    env = {_environment.DEVICE_LOG_TABLE_NAME: "device-log", "ARCHIVE_BUCKET": "the app's own bucket"}
    assert DeviceLogRepository.from_env(env).table_name == "device-log"


def test_a_missing_variable_is_a_cdk_ts_error_and_still_a_key_error_naming_it():
    from cdk_ts_runtime._errors import CdkTsError

    with pytest.raises(EnvironmentVariableMissingError) as missing:
        ShardedTable.from_env({_environment.SHARDED_TABLE_NAME: "audit"})
    assert isinstance(missing.value, KeyError) and isinstance(missing.value, CdkTsError)
    assert missing.value.names == (
        _environment.SHARD_METADATA_TABLE_NAME, _environment.SHARDED_PARTITION_KEY, _environment.SHARDED_SORT_KEY
    )
    # the message as written, not KeyError's repr of it (quotes around the whole text)
    assert str(missing.value).startswith(f"environment variables {_environment.SHARD_METADATA_TABLE_NAME}, ")
