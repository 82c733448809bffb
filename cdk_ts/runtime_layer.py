"""RuntimeLayer: the ``cdk_ts_runtime`` package as a Lambda layer, so users' own functions can import it."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from cdk_ts._assets import layer_code
from cdk_ts._defaults import supported_python_runtimes
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._validation import describe
from cdk_ts_runtime._errors import WrongTypeError

_SINGLETON_ID = "CdkTsRuntimeLayer"


class RuntimeLayer(lambda_.LayerVersion):
    """A layer holding ``python/cdk_ts_runtime/...`` (standard library + boto3 only; no aws_cdk).

    Lambda extracts a layer to ``/opt`` and puts ``/opt/python`` on ``sys.path``, so a function with
    this layer can ``from cdk_ts_runtime import PeriodRouter``. The layer is built from the
    installed ``cdk_ts_runtime`` package, so it always matches the constructs' own functions. It is
    compatible with every Python runtime from 3.11 that this aws-cdk-lib knows, on x86_64 and arm64.

    Use :meth:`RuntimeLayer.of` (what every construct's ``bind`` does) to get one layer per stack,
    however often it is asked for.
    """

    def __init__(self, scope: Construct, construct_id: str) -> None:
        """Build the layer from the installed ``cdk_ts_runtime`` package.

        Prefer :meth:`RuntimeLayer.of`, which creates the stack's one layer on first use.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        """
        super().__init__(
            scope,
            construct_id,
            code=layer_code(),
            compatible_runtimes=supported_python_runtimes(),
            compatible_architectures=[lambda_.Architecture.ARM_64, lambda_.Architecture.X86_64],
            description="cdk-ts runtime clients (cdk_ts_runtime): PeriodRouter, DeviceLogRepository, ShardedTable, ...",
            license="Apache-2.0",
            # An old version stays available to the functions deployed with it.
            removal_policy=RemovalPolicy.RETAIN,
        )
        self._functions: set[str] = set()

    @classmethod
    def of(cls, scope: Construct) -> RuntimeLayer:
        """The stack's one ``RuntimeLayer`` (construct ID ``CdkTsRuntimeLayer``), created on first request."""
        stack = stack_of(scope)
        existing = stack.node.try_find_child(_SINGLETON_ID)
        if existing is None:
            return cls(stack, _SINGLETON_ID)
        if not isinstance(existing, RuntimeLayer):
            raise WrongTypeError(f"{path_of(stack)}/{_SINGLETON_ID} exists and is not a RuntimeLayer; use another ID")
        return existing

    def add_to(self, function: lambda_.Function) -> None:
        """Add this layer to ``function`` once (a second call for the same function does nothing)."""
        if not isinstance(function, lambda_.Function):
            raise WrongTypeError(
                f"{describe(function)} is not a lambda_.Function: layers can "
                "only be added to functions defined in this app; pass add_runtime_layer=False and add it yourself"
            )
        if path_of(function) in self._functions:
            return
        function.add_layers(self)
        self._functions.add(path_of(function))
