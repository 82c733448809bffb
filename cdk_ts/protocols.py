"""The shapes cdk-ts constructs accept as inputs, as typing ``Protocol``s (checked at run time too)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Node

from cdk_ts_runtime.stream_consumer import StreamConsumer

__all__ = ["ArchiverSource", "HasAlarms", "HasTable", "Monitorable", "RotatingStreamSource"]


@runtime_checkable
class HasTable(Protocol):
    """A construct exposing the DynamoDB table it manages as ``table`` (``DeviceLogTable``, ...)."""

    @property
    def table(self) -> dynamodb.ITable | dynamodb.ITableV2:
        """The table."""
        ...


@runtime_checkable
class Monitorable(Protocol):
    """A construct ``MonitoringDashboard.monitor`` can show: it gives its own row of graphs."""

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The widgets of this construct's dashboard row."""
        ...


@runtime_checkable
class HasAlarms(Protocol):
    """A construct with opt-in default alarms (``add_default_alarms``), kept by name in ``alarms``."""

    @property
    def alarms(self) -> dict[str, cloudwatch.Alarm]:
        """The default alarms by name; empty until ``add_default_alarms`` is called."""
        ...


@runtime_checkable
class RotatingStreamSource(Protocol):
    """Period tables whose streams are mapped as tables are created (``RotatingTimeSeriesTables``)."""

    table_prefix: str
    stream_view_type: dynamodb.StreamViewType | None

    @property
    def node(self) -> Node:
        """The construct's node."""
        ...

    def grant_stream_read(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read every period table's stream.

        :param grantee: the stream consumer.
        :param acknowledge_nag_findings: acknowledge the grant's cdk-nag findings on ``grantee``.
            Default: False.
        """
        ...

    def add_stream_consumer(self, consumer: lambda_.IFunction, mapping: StreamConsumer) -> None:
        """Map every period table's stream to ``consumer``.

        :param consumer: the function the mappings invoke.
        :param mapping: the mapping settings.
        """
        ...


#: What a ``StreamArchiver`` archives: a table with a stream, a construct exposing one as ``.table``
#: (``DeviceLogTable``), or rotating period tables.
ArchiverSource = dynamodb.ITable | dynamodb.ITableV2 | HasTable | RotatingStreamSource
