"""Importers refuse what cannot exist, and no prefix or name widens an IAM resource with a wildcard by accident.

Each property is judged by rules written here from their sources, not by the code under test: S3's general
purpose bucket naming rules (Amazon S3 User Guide), 12-digit account IDs, ARNs where ARNs are asked and names
where names are, ``kms.IKey`` objects for keys, and IAM's wildcards ``*`` and ``?`` (IAM user guide).
"""

from __future__ import annotations

import itertools
import re

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Template
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts import (
    CompactionOptions,
    ConstructValidationError,
    DeviceLogTable,
    RotatingTimeSeriesTables,
    ShardMetadataTable,
    StreamArchiver,
    TimestreamTable,
)
from cdk_ts.buckets import access_logs_bucket, secure_bucket
from tests.support.iam import policy_statements
from tests.support.nag import new_app

_IDS = itertools.count()
_FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _stack() -> Stack:
    return Stack(new_app(), f"S{next(_IDS)}")


def s3_allows(name: str) -> bool:
    """S3's general purpose bucket naming rules, one by one as the user guide lists them."""
    reserved_prefixes = ("xn--", "sthree-", "amzn-s3-demo-")
    reserved_suffixes = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
    return (
        3 <= len(name) <= 63
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789.-" for c in name)
        and name[0].isalnum() and name[-1].isalnum()
        and ".." not in name
        and ".-" not in name and "-." not in name  # each label starts and ends with a letter or number
        and not re.fullmatch(r"\d+\.\d+\.\d+\.\d+", name)
        and not name.startswith(reserved_prefixes)
        and not name.endswith(reserved_suffixes)
    )


_BUCKET_NAMES = st.text(alphabet="abcz09.-A_:/*", min_size=0, max_size=66) | st.sampled_from([
    "acme-archive", "192.168.5.4", "xn--bucket", "logs-s3alias", "a" * 63, "a" * 64, "arn:aws:s3:::acme-archive",
    "s3://acme-archive", "Acme-Archive", "acme..archive", "sthree-x", "amzn-s3-demo-bucket", "b.mrap",
])


@_FAST
@given(name=_BUCKET_NAMES)
def test_an_archive_bucket_name_is_taken_exactly_when_s3_allows_it(name):
    stack = _stack()
    if s3_allows(name):
        imported = StreamArchiver.from_archive_bucket_name(stack, "Archive", archive_bucket_name=name)
        assert stack.resolve(imported.bucket.bucket_name) == name
        return
    with pytest.raises(ConstructValidationError, match=f"archive_bucket_name {re.escape(repr(name))}"):
        StreamArchiver.from_archive_bucket_name(stack, "Archive", archive_bucket_name=name)


@_FAST
@given(name=_BUCKET_NAMES)
def test_a_failure_bucket_name_is_taken_exactly_when_s3_allows_it(name):
    stack = _stack()
    build = lambda: StreamArchiver.from_archive_bucket_name(  # noqa: E731 - once, in two places
        stack, "Archive", archive_bucket_name="acme-archive", failure_bucket_name=name
    )
    if s3_allows(name):
        assert stack.resolve(build().failure_bucket.bucket_name) == name
    else:
        with pytest.raises(ConstructValidationError, match="failure_bucket_name"):
            build()


@_FAST
@given(account=st.text(alphabet="0123456789 -a", max_size=14) | st.integers().map(str))
def test_an_account_is_taken_exactly_when_it_is_twelve_digits(account):
    stack = _stack()
    build = lambda: StreamArchiver.from_archive_bucket_name(  # noqa: E731
        stack, "Archive", archive_bucket_name="acme-archive", account=account
    )
    if re.fullmatch(r"[0-9]{12}", account):
        build()
    else:
        with pytest.raises(ConstructValidationError, match=f"account {re.escape(repr(account))} is not an AWS account"):
            build()


_KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
#: Every importer that takes a key, built with ``key`` and otherwise good values.
_KEYED_IMPORTERS = {
    "DeviceLogTable": lambda stack, key: DeviceLogTable.from_table_name(
        stack, "Log", table_name="device-log", encryption_key=key),
    "ShardMetadataTable": lambda stack, key: ShardMetadataTable.from_table_name(
        stack, "Shards", table_name="shards", main_table=dynamodb.Table.from_table_name(stack, "Main", "main"),
        partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING), sort_key_name="sk",
        encryption_key=key),
    "TimestreamTable": lambda stack, key: TimestreamTable.from_table_name(
        stack, "Ts", database_name="fleet", table_name="telemetry", encryption_key=key),
    "RotatingTimeSeriesTables": lambda stack, key: RotatingTimeSeriesTables.from_table_prefix(
        stack, "Readings", table_prefix="readings", encryption_key=key),
}


@pytest.mark.parametrize("importer", _KEYED_IMPORTERS.values(), ids=_KEYED_IMPORTERS.keys())
@pytest.mark.parametrize("key", [_KEY_ARN, "alias/readings", "1234abcd-12ab-34cd-56ef-1234567890ab", 7],
                         ids=["ARN", "alias", "key ID", "number"])
def test_a_key_that_is_not_an_ikey_fails_at_once_not_at_the_first_grant(importer, key):
    with pytest.raises(ConstructValidationError, match=r"encryption_key .* is not a KMS key \(kms.IKey\)"):
        importer(_stack(), key)


@pytest.mark.parametrize("importer", _KEYED_IMPORTERS.values(), ids=_KEYED_IMPORTERS.keys())
def test_a_key_object_is_taken_and_granted(importer):
    stack = _stack()
    imported = importer(stack, kms.Key.from_key_arn(stack, "Key", _KEY_ARN))
    role = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
    imported.grant_read_data(role)
    resources = [s["Resource"] for s in policy_statements(Template.from_stack(stack))
                 if any(a.startswith("kms:") for a in _actions(s))]
    assert resources == [_KEY_ARN]


def test_names_are_asked_where_names_are_and_arns_where_arns_are():
    stack = _stack()
    with pytest.raises(ConstructValidationError, match="table_name 'arn:aws:dynamodb:.*' is an ARN: pass the table's"):
        DeviceLogTable.from_table_name(stack, "A", table_name="arn:aws:dynamodb:eu-west-1:123456789012:table/log")
    with pytest.raises(ConstructValidationError, match="table_stream_arn 'device-log' is not a dynamodb ARN"):
        DeviceLogTable.from_table_name(stack, "B", table_name="device-log", table_stream_arn="device-log")
    with pytest.raises(ConstructValidationError, match="function_name 'arn:aws:lambda:.*' is not a Lambda function"):
        StreamArchiver.from_archive_bucket_name(stack, "C", archive_bucket_name="acme-archive",
                                                function_name="arn:aws:lambda:eu-west-1:123456789012:function:f")
    with pytest.raises(ConstructValidationError, match="stream 'NEW_IMAGE' is not a dynamodb.StreamViewType"):
        RotatingTimeSeriesTables.from_table_prefix(stack, "D", table_prefix="readings", stream="NEW_IMAGE")
    stream = "arn:aws:dynamodb:eu-west-1:123456789012:table/device-log/stream/2026-01-01T00:00:00.000"
    DeviceLogTable.from_table_name(stack, "E", table_name="device-log", table_stream_arn=stream)


# ---- no wildcard by accident -----------------------------------------------------------------------

_PREFIXES = st.text(alphabet="ab/*?-_.", max_size=10).map(lambda text: text + "/" if text else text)


@_FAST
@given(prefix=_PREFIXES)
def test_an_imported_archive_prefix_never_widens_the_grant(prefix):
    # either refused by name, or the object ARN granted is the bucket, the prefix as given, and one trailing '*'
    stack = _stack()
    build = lambda: StreamArchiver.from_archive_bucket_name(  # noqa: E731
        stack, "Archive", archive_bucket_name="acme-archive", prefix=prefix
    )
    if "*" in prefix or "?" in prefix:
        with pytest.raises(ConstructValidationError, match=f"prefix {re.escape(repr(prefix))} holds .*wildcard"):
            build()
        return
    role = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
    build().grant_read_data(role)
    objects = [json_text(stack.resolve(r)) for s in policy_statements(Template.from_stack(stack))
               for r in _list(s["Resource"]) if "acme-archive/" in json_text(stack.resolve(r))]
    assert objects and all(o.endswith(f":s3:::acme-archive/{prefix}*") for o in objects), objects


@pytest.mark.parametrize("prefix", ["raw*/", "da?a/", "*/"])
def test_an_owning_archivers_prefix_with_a_wildcard_is_refused(prefix):
    stack = _stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    with pytest.raises(ConstructValidationError, match=f"prefix {re.escape(repr(prefix))} holds"):
        StreamArchiver(stack, "Archive", source=log, prefix=prefix)


@pytest.mark.parametrize("prefix", ["exports*/", "ex?orts/"])
def test_a_rotation_archive_prefix_with_a_wildcard_is_refused(prefix):
    stack = _stack()
    bucket = secure_bucket(stack, "Bucket", server_access_logs_bucket=access_logs_bucket(stack, "Logs"))
    with pytest.raises(ConstructValidationError, match=f"archive_prefix {re.escape(repr(prefix))} holds"):
        RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry", retain_periods=7, archive_bucket=bucket,
                                 archive_prefix=prefix)


def test_a_compacted_prefix_with_a_wildcard_is_refused():
    stack = _stack()
    log = DeviceLogTable(stack, "Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    layer = "arn:aws:lambda:us-east-1:336392948345:layer:AWSSDKPandas-Python313-Arm64:4"
    with pytest.raises(ConstructValidationError, match="compacted_prefix 'parquet\\*/' holds"):
        StreamArchiver(stack, "Archive", source=log, glue_database="archive_db", create_glue_database=True,
                       compaction=CompactionOptions(pyarrow_layer_arn=layer, compacted_prefix="parquet*/"))


def test_an_access_logs_prefix_with_a_wildcard_is_refused():
    stack = _stack()
    with pytest.raises(ConstructValidationError, match="server_access_logs_prefix 'logs\\*/' holds"):
        secure_bucket(stack, "Bucket", server_access_logs_bucket=access_logs_bucket(stack, "Logs"),
                      server_access_logs_prefix="logs*/")


def _actions(statement: dict) -> list[str]:
    actions = statement.get("Action", [])
    return [actions] if isinstance(actions, str) else actions


def _list(value) -> list:
    return value if isinstance(value, list) else [value]


def json_text(value) -> str:
    """A resolved ARN as text: ``Fn::Join`` parts joined, a partition reference as ``aws``."""
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(json_text(part) for part in parts)
    if isinstance(value, dict):
        return "aws" if value == {"Ref": "AWS::Partition"} else str(value)
    return str(value)
