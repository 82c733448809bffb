"""ShardMetadataTableBase: what any shard metadata table can do, created here or deployed by another stack or app."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._binding import BindableConstruct
from cdk_ts._insights import ThrottledKeysRule
from cdk_ts._nag import grant_unscoped
from cdk_ts._single_table import SingleTableConstruct
from cdk_ts._table_metrics import TableMetricFactory
from cdk_ts.protocols import HasTable
from cdk_ts_runtime._sharding import (
    ENV_METADATA_TABLE,
    ENV_PARTITION_KEY,
    ENV_SORT_KEY,
    ENV_STRATEGY,
    ENV_TABLE,
    ShardStrategy,
    StrategyName,
)


class ShardMetadataTableBase(SingleTableConstruct):
    """What any shard metadata table can do, created here or elsewhere: grants, ``bind`` and metrics.

    ``ShardMetadataTable`` creates the table; ``ShardMetadataTable.from_table_name`` returns one of these
    for a metadata table another stack or app deployed. Exposes ``table`` (the metadata table),
    ``main_table``, ``partition_key``, ``sort_key_name``, ``strategy`` and ``throttled_keys_rule``.
    """

    table: dynamodb.ITable

    def __init__(
        self, scope: Construct, construct_id: str, *,
        main_table: dynamodb.ITable | dynamodb.ITableV2 | HasTable,
        partition_key: dynamodb.Attribute,
        sort_key_name: str,
        strategy: ShardStrategy | StrategyName,
    ) -> None:
        """Hold the main table's keys and the strategy; the owning construct and the importer validate first
        and set ``table``.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param main_table: the sharded table, or a construct exposing ``.table``.
        :param partition_key: the main table's partition key.
        :param sort_key_name: the main table's sort key name.
        :param strategy: how writers pick a shard.
        """
        super().__init__(scope, construct_id)
        self.main_table: dynamodb.ITable | dynamodb.ITableV2 = (
            main_table.table if isinstance(main_table, HasTable) else main_table
        )
        # a construct such as DeviceLogTable grants its own way (its GSIs' acknowledgement included)
        self._main_construct = main_table if isinstance(main_table, BindableConstruct) else None
        self.partition_key: dynamodb.Attribute = partition_key
        self.sort_key_name: str = sort_key_name
        self.strategy = ShardStrategy(strategy)
        #: Reads the main table's throttled-keys rule name at deploy time (``throttled_keys_insights=True``), for
        #: the dashboard row; None otherwise.
        self.throttled_keys_rule: ThrottledKeysRule | None = None

    def metric_throttled_requests(self, **props: Any) -> cloudwatch.IMetric:
        """Throttled requests on the metadata table (writers read it on every shard-count cache miss).

        The main table's throttles are what makes writers add shards; graph them from the main table.

        :param props: metric options (``label``, ``period``...). Sum over 5 minutes.
        """
        return TableMetricFactory(self.table).throttled_requests(**props)

    def grant_read_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read data on the main table and the metadata table (what ``ShardedTable`` queries need).

        :param grantee: who reads.
        :param acknowledge_nag_findings: add this grant's cdk-nag acknowledgements to ``grantee``'s policy
            (only a main table that is a ``DeviceLogTable`` has one: its GSIs). Default: False.
        """
        grant = self._grant_main("grant_read_data", grantee, acknowledge_nag_findings)
        self.table.grant_read_data(grantee)
        return grant

    def grant_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Write data on the main table, read/write the metadata table, and read CloudWatch metrics.

        A writer reads shard counts and grows them, so it reads and writes the metadata table; the
        metrics are the fallback for throttles without ``ThrottlingReasons``.

        :param grantee: who writes.
        :param acknowledge_nag_findings: acknowledge the cdk-nag finding of the
            ``cloudwatch:GetMetricStatistics`` statement, ``AwsSolutions-IAM5[Resource::*]``, on ``grantee``'s policy.
            Default: False — the
            finding stays for you to review.
        """
        grant = self._grant_main("grant_write_data", grantee, acknowledge_nag_findings)
        self.table.grant_read_write_data(grantee)
        self._grant_metrics(grantee, acknowledge_nag_findings)
        return grant

    def grant_read_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read/write data on the main table and the metadata table, and read CloudWatch metrics.

        :param grantee: who reads and writes.
        :param acknowledge_nag_findings: acknowledge the cdk-nag finding of the
            ``cloudwatch:GetMetricStatistics`` statement, ``AwsSolutions-IAM5[Resource::*]``, on ``grantee``'s policy.
            Default: False.
        """
        grant = self._grant_main("grant_read_write_data", grantee, acknowledge_nag_findings)
        self.table.grant_read_write_data(grantee)
        self._grant_metrics(grantee, acknowledge_nag_findings)
        return grant

    @property
    def binding_environment(self) -> dict[str, str]:
        """What ``ShardedTable.from_env`` reads.

        ``CDK_TS_SHARDED_TABLE_NAME``, ``CDK_TS_SHARD_METADATA_TABLE_NAME``, ``CDK_TS_SHARDED_PARTITION_KEY``,
        ``CDK_TS_SHARDED_SORT_KEY`` and ``CDK_TS_SHARDING_STRATEGY``.
        """
        return {
            ENV_TABLE: self.main_table.table_name,
            ENV_METADATA_TABLE: self.table.table_name,
            ENV_PARTITION_KEY: self.partition_key.name,
            ENV_SORT_KEY: self.sort_key_name,
            ENV_STRATEGY: self.strategy.value,
        }

    def _grant_main(self, method: str, grantee: iam.IGrantable, acknowledge_nag_findings: bool) -> iam.Grant:
        if self._main_construct is not None:
            return getattr(self._main_construct, method)(grantee, acknowledge_nag_findings=acknowledge_nag_findings)
        return getattr(self.main_table, method)(grantee)

    def _grant_metrics(self, grantee: iam.IGrantable, acknowledge_nag_findings: bool) -> None:
        grant_unscoped(
            grantee, _perms.CLOUDWATCH_READ_METRICS_ACTIONS, acknowledge_finding=acknowledge_nag_findings,
            reason="cloudwatch:GetMetricStatistics has no resource-level permissions; it reads the main table's "
            "consumed and provisioned WCU when a throttle carries no reasons",
        )
