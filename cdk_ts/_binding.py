"""``bind``, the same on every construct whose tables user functions use through ``cdk_ts_runtime``."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Mapping

from aws_cdk import Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from cdk_ts._abstract import AbstractConstructMeta
from cdk_ts._lookups import path_of, stack_of
from cdk_ts._validation import require_access
from cdk_ts.runtime_layer import RuntimeLayer
from cdk_ts_runtime._errors import WrongTypeError


class BindableConstruct(Construct, metaclass=AbstractConstructMeta):
    """Base of a data construct: ``bind`` sets its environment, adds the runtime layer and returns the data grant.

    A subclass defines ``binding_environment`` and the three ``grant_*_data`` methods; Python refuses to
    instantiate one that does not. ``RotatingTimeSeriesTablesBase``, ``DeviceLogTableBase``,
    ``ShardMetadataTableBase``, ``StreamArchiverBase`` and ``TimestreamTableBase`` derive from it.
    """

    @property
    @abstractmethod
    def binding_environment(self) -> Mapping[str, str]:
        """The environment variables ``bind`` sets, read back by the runtime client's ``from_env``."""

    @abstractmethod
    def grant_read_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read this construct's data.

        :param grantee: who reads.
        :param acknowledge_nag_findings: acknowledge the grant's cdk-nag findings on ``grantee``'s policy.
        """

    @abstractmethod
    def grant_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Write this construct's data.

        :param grantee: who writes.
        :param acknowledge_nag_findings: acknowledge the grant's cdk-nag findings on ``grantee``'s policy.
        """

    @abstractmethod
    def grant_read_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read and write this construct's data.

        :param grantee: who reads and writes.
        :param acknowledge_nag_findings: acknowledge the grant's cdk-nag findings on ``grantee``'s policy.
        """

    def bind(
        self,
        function: lambda_.IFunction,
        *,
        read: bool = False,
        write: bool = True,
        add_runtime_layer: bool = True,
        acknowledge_nag_findings: bool = False,
        environment: bool = True,
    ) -> iam.Grant:
        """Prepare ``function`` to use this construct's runtime client via ``from_env(os.environ)``; returns the grant.

        Sets :attr:`binding_environment` on ``function``, adds the stack's :class:`RuntimeLayer` (so it
        can import ``cdk_ts_runtime``) and grants data access: ``grant_read_write_data``,
        ``grant_write_data`` or ``grant_read_data`` (see those for what each covers).

        A function this app does not define (``lambda_.Function.from_function_arn``...) cannot take
        environment variables or layers: the grant is made on its role (when it was imported with one),
        then ``bind`` raises a ``TypeError`` listing what is left to do by hand, the variables with their
        values first, unless ``environment=False`` and ``add_runtime_layer=False`` say it is done.

        :param function: the function that writes or reads; defined in this app or imported.
        :param read: grant reads.
            Default: False — a writer gets no read access.
        :param write: grant writes.
            Default: True.
        :param add_runtime_layer: add the stack's ``RuntimeLayer`` to ``function``.
            Default: True; pass False when the function ships ``cdk_ts_runtime`` in its own code.
        :param acknowledge_nag_findings: acknowledge the grant's cdk-nag findings on ``function``'s role
            (each is listed with its reason in docs/cdk-nag.md).
            Default: False — a security reviewer opts in.
        :param environment: set the ``binding_environment`` variables on ``function``.
            Default: True; pass False for an imported function whose variables you set yourself.
        :raises ValueError: when both ``read`` and ``write`` are False, naming the construct and the function.
        :raises WrongTypeError: (a ``TypeError``) after granting what it can, when ``function`` is imported
            and cannot take the environment variables or the layer asked for, or has no role to grant to;
            naming this construct's path, the function and each variable to set by hand.
        """
        require_access(self, function, read=read, write=write)
        if read and write:
            grant = self.grant_read_write_data
        elif write:
            grant = self.grant_write_data
        else:
            grant = self.grant_read_data
        if isinstance(function, lambda_.Function):
            granted = grant(function, acknowledge_nag_findings=acknowledge_nag_findings)
            if environment:
                for name, value in self.binding_environment.items():
                    function.add_environment(name, value)
            if add_runtime_layer:
                RuntimeLayer.of(self).add_to(function)
            return granted
        # Imported: grant what its role allows, then say what is left to do by hand.
        granted = None if function.role is None else grant(function, acknowledge_nag_findings=acknowledge_nag_findings)
        todo = _by_hand(self, granted is not None, self.binding_environment if environment else None, add_runtime_layer)
        if todo:
            raise WrongTypeError(
                f"{path_of(self)}.bind({path_of(function)}): this function is not defined in this app (imported "
                "by ARN or name), so bind cannot change it; do this by hand:\n" + "\n".join(f"- {t}" for t in todo)
            )
        return granted


#: The former mixin's name, kept while other modules and branches move to the base class.
Bindable = BindableConstruct


def _by_hand(construct: Construct, granted: bool, env: Mapping[str, str] | None, layer: bool) -> list[str]:
    """What ``bind`` could not do to an imported function, as steps for the user."""
    stack = stack_of(construct)
    todo = []
    if not granted:
        todo.append(
            "it was imported without a role, so nothing was granted: import it with "
            "lambda_.Function.from_function_attributes(..., role=iam.Role.from_role_arn(...)) and bind again"
        )
    if env is not None:
        todo.append(
            "set these environment variables on it, then pass environment=False:\n"
            + "\n".join(f"  {name}={_shown(stack, value)}" for name, value in env.items())
        )
    if layer:
        todo.append(
            "give it cdk_ts_runtime (the RuntimeLayer, or the package in its own code), "
            "then pass add_runtime_layer=False"
        )
    return todo


def _shown(stack: Stack, value: str) -> str:
    """A literal value as it is; a deploy-time value as its CloudFormation expression."""
    return value if not Token.is_unresolved(value) else json.dumps(stack.resolve(value)) + " (resolved at deploy)"
