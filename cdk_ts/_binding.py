"""``bind``, the same on every construct whose tables user functions use through ``cdk_ts_runtime``."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from cdk_ts._validation import require_access
from cdk_ts.runtime_layer import RuntimeLayer


class Bindable:
    """Mixin: ``bind`` sets the construct's environment, adds the runtime layer and returns the data grant.

    A construct provides ``binding_environment`` and the three ``grant_*_data`` methods.
    """

    @property
    def binding_environment(self) -> Mapping[str, str]:
        """The environment variables ``bind`` sets, read back by the runtime client's ``from_env``."""
        raise NotImplementedError

    def bind(
        self,
        function: lambda_.Function,
        *,
        read: bool = False,
        write: bool = True,
        add_runtime_layer: bool = True,
        acknowledge_nag_findings: bool = False,
    ) -> iam.Grant:
        """Prepare ``function`` to use this construct's runtime client via ``from_env(os.environ)``; returns the grant.

        Sets :attr:`binding_environment` on ``function``, adds the stack's :class:`RuntimeLayer` (so it
        can import ``cdk_ts_runtime``) and grants data access: ``grant_read_write_data``,
        ``grant_write_data`` or ``grant_read_data`` (see those for what each covers).

        :param function: the function that writes or reads.
        :param read: grant reads.
            Default: False — a writer gets no read access.
        :param write: grant writes.
            Default: True.
        :param add_runtime_layer: add the stack's ``RuntimeLayer`` to ``function``.
            Default: True; pass False when the function ships ``cdk_ts_runtime`` in its own code.
        :param acknowledge_nag_findings: acknowledge the grant's cdk-nag findings on ``function``'s role
            (each is listed with its reason in the README).
            Default: False — a security reviewer opts in.
        :raises ValueError: when both ``read`` and ``write`` are False, naming the construct and the function.
        """
        require_access(self, function, read=read, write=write)
        for name, value in self.binding_environment.items():
            function.add_environment(name, value)
        if add_runtime_layer:
            RuntimeLayer.of(self).add_to(function)
        if read and write:
            grant = self.grant_read_write_data
        elif write:
            grant = self.grant_write_data
        else:
            grant = self.grant_read_data
        return grant(function, acknowledge_nag_findings=acknowledge_nag_findings)
