"""RuntimeLayer: one per stack, python/cdk_ts_runtime inside, added by every bind() unless told not to."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Match, Template

from cdk_ts import DeviceLogTable, RotatingTimeSeriesTables, RuntimeLayer, ShardMetadataTable
from cdk_ts._assets import zipped_asset


def user_function(stack: Stack, construct_id: str = "UserFn") -> lambda_.Function:
    return lambda_.Function(
        stack, construct_id, runtime=lambda_.Runtime.PYTHON_3_12, handler="index.handler",
        code=lambda_.Code.from_inline("def handler(e, c): pass"),
    )


def all_binds(stack: Stack, function: lambda_.Function, **options) -> None:
    RotatingTimeSeriesTables(stack, "Tables", table_prefix="telemetry", retain_periods=3).bind(function, **options)
    DeviceLogTable(stack, "Log").bind(function, **options)
    audit = dynamodb.Table(
        stack,
        "Audit",
        partition_key=dynamodb.Attribute(name="file_path", type=dynamodb.AttributeType.STRING),
        sort_key=dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER),
    )
    ShardMetadataTable(stack, "Shards", main_table=audit).bind(function, **options)


def test_every_bind_adds_the_one_layer_of_the_stack_once():
    stack = Stack(App(), "Test")
    function = user_function(stack)
    other = user_function(stack, "Other")
    all_binds(stack, function)
    RuntimeLayer.of(stack).add_to(other)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Lambda::LayerVersion", 1)
    layer = stack.resolve(RuntimeLayer.of(other).layer_version_arn)
    for name in ("UserFn", "Other"):
        fn = stack.node.find_child(name).node.default_child
        assert stack.resolve(fn.layers) == [layer], name


def test_add_runtime_layer_false_leaves_the_function_alone():
    stack = Stack(App(), "Test")
    function = user_function(stack)
    all_binds(stack, function, add_runtime_layer=False)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Lambda::LayerVersion", 0)
    template.has_resource_properties("AWS::Lambda::Function", {"Handler": "index.handler", "Layers": Match.absent()})


def test_layer_is_compatible_with_python_311_and_later_on_both_architectures():
    stack = Stack(App(), "Test")
    RuntimeLayer.of(stack)
    (layer,) = Template.from_stack(stack).find_resources("AWS::Lambda::LayerVersion").values()
    runtimes = layer["Properties"]["CompatibleRuntimes"]
    assert "python3.11" in runtimes and "python3.12" in runtimes
    assert all(r.startswith("python3.") and int(r.split(".")[1]) >= 11 for r in runtimes)
    assert sorted(layer["Properties"]["CompatibleArchitectures"]) == ["arm64", "x86_64"]


def test_layer_holds_the_runtime_package_under_python():
    archive, _digest = zipped_asset("python")
    with zipfile.ZipFile(archive) as bundle:
        files = sorted(name for name in bundle.namelist() if name.endswith(".py"))
    clients = ("_router.py", "_sharding/table.py", "_device_log.py", "_timestream.py", "_archiver.py", "_throttling.py")
    for client in ("__init__.py", "_deprecations.py", *clients):
        assert f"python/cdk_ts_runtime/{client}" in files
    # cdk-ts's own functions ship the whole package as their code: their entry points stay out of the layer
    assert not [f for f in files if "/handlers/" in f or "/_rotation/" in f]
    assert all(f.startswith("python/cdk_ts_runtime/") for f in files)
    # the zip the layer's asset uploads, as Lambda receives it
    assert archive.stat().st_size <= 100 * 1024


def test_a_non_python_function_is_refused_by_the_layer():
    stack = Stack(App(), "Test")
    node_fn = lambda_.Function(
        stack, "Node", runtime=lambda_.Runtime.NODEJS_22_X, handler="index.handler",
        code=lambda_.Code.from_inline("exports.handler = async () => {}"),
    )
    with pytest.raises(Exception, match="(?i)runtime"):
        DeviceLogTable(stack, "Log").bind(node_fn)


def test_an_imported_function_cannot_take_the_layer():
    stack = Stack(App(), "Test")
    imported = lambda_.Function.from_function_name(stack, "Imported", "existing-fn")
    with pytest.raises(TypeError, match="add_runtime_layer=False"):
        RuntimeLayer.of(stack).add_to(imported)


def test_the_layer_asset_is_the_installed_package(tmp_path):
    archive, _digest = zipped_asset("python")
    import cdk_ts_runtime

    source = Path(cdk_ts_runtime.__file__).parent
    with zipfile.ZipFile(archive) as bundle:
        assert bundle.read("python/cdk_ts_runtime/_router.py") == (source / "_router.py").read_bytes()
