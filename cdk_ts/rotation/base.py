"""RotatingTimeSeriesTablesBase: what any period tables of one prefix can do, created here or deployed elsewhere.

The naming pattern, ARNs, ``grant_*_data``, ``bind`` and the metrics, shared by the owning
``RotatingTimeSeriesTables`` and by the import ``RotatingTimeSeriesTables.from_table_prefix`` returns (the way
aws-cdk's ``TableBaseV2`` serves ``TableV2`` and the import ``TableV2.fromTableAttributes`` returns).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from aws_cdk import Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._binding import BindableConstruct
from cdk_ts._defaults import table_arn_pattern
from cdk_ts._lookups import path_of
from cdk_ts._metrics import graph
from cdk_ts._nag import acknowledge_wildcard_resources, grant_unscoped
from cdk_ts._validation import Problems, attribute_problem
from cdk_ts.rotation._metrics import RotationMetricFactory
from cdk_ts_runtime._emf import METRIC_NAMESPACE as METRIC_NAMESPACE  # the rotation's namespace
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._periods import RotationPeriod, table_name_glob
from cdk_ts_runtime._rotation.metrics import RotationMetric
from cdk_ts_runtime._table_layout import TableLayout

KEY_TYPES = {
    dynamodb.AttributeType.STRING: "S",
    dynamodb.AttributeType.NUMBER: "N",
    dynamodb.AttributeType.BINARY: "B",
}


def literal_prefix(problems: Problems, table_prefix: str) -> bool:
    """True for a literal ``table_prefix``; a token is a problem, since table names are derived at synth."""
    return problems.check(
        not Token.is_unresolved(table_prefix),
        "table_prefix must be a literal string: table names are derived from it at synth time",
    )


class PeriodTableOptions(TypedDict, total=False):
    """The layout keywords of ``RotatingTimeSeriesTables`` and of its importer ``from_table_prefix``, as a typed dict.

    Both take ``period``, ``partition_key``, ``sort_key`` and ``time_unit`` as keyword-only parameters, each
    documented with its default on ``RotatingTimeSeriesTables``; an importer passes the values the owning
    construct was given. This dict type is for a layout both share: ``layout: PeriodTableOptions = {...}``,
    then ``**layout`` in each call.
    """

    period: RotationPeriod | str
    partition_key: dynamodb.Attribute | None
    sort_key: dynamodb.Attribute | None
    time_unit: str | None


def layout_period(options: Mapping[str, Any]) -> RotationPeriod | str:
    """The ``period`` of :class:`PeriodTableOptions`, or its default."""
    return options.get("period", RotationPeriod.DAILY)


def table_layout(table_prefix: str, options: Mapping[str, Any]) -> TableLayout:
    """The layout of a rotation's tables from :class:`PeriodTableOptions`; keys default to Number ``pk``/``sk``.

    Raises ValueError for an invalid prefix, period, key or time unit.
    """
    partition_key = options.get("partition_key") or dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.NUMBER)
    sort_key = options.get("sort_key") or dynamodb.Attribute(name="sk", type=dynamodb.AttributeType.NUMBER)
    problems = [p for p in (attribute_problem("partition_key", partition_key), attribute_problem("sort_key", sort_key))
                if p]
    if problems:
        raise ValidationError("; ".join(problems))
    return TableLayout(
        table_prefix=table_prefix,
        period=layout_period(options),
        partition_key=partition_key.name,
        partition_key_type=KEY_TYPES[partition_key.type],
        sort_key=sort_key.name,
        sort_key_type=KEY_TYPES[sort_key.type],
        time_unit=options.get("time_unit"),
    )


class RotatingTimeSeriesTablesBase(BindableConstruct):
    """The period tables ``{table_prefix}_{label}`` of one rotation: names, ARNs, grants, ``bind`` and metrics.

    Creates nothing. ``RotatingTimeSeriesTables`` extends it with the rotation function, schedules and
    alarms; ``RotatingTimeSeriesTables.from_table_prefix`` returns one (of a private subclass) for tables
    another stack or app rotates, with the same ``?``-pattern IAM.

    Attributes: ``layout`` (``TableLayout``), ``table_prefix``, ``period``, ``stream_view_type`` and
    ``encryption_key`` (None when the tables use an AWS owned key).
    """

    def __init__(
        self, scope: Construct, construct_id: str, layout: TableLayout, *,
        stream_view_type: dynamodb.StreamViewType | None = None,
        encryption_key: kms.IKey | None = None,
    ) -> None:
        """Hold a layout; used by the owning construct and the importer, which validate their arguments first.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param layout: the period tables' prefix, period, keys and time unit.
        :param stream_view_type: the tables' stream view type.
            Default: None — the tables have no stream; ``grant_stream_read`` refuses.
        :param encryption_key: the customer managed key the tables are encrypted with; grants include it.
            Default: None — AWS owned key, no KMS grants.
        """
        super().__init__(scope, construct_id)
        self.layout: TableLayout = layout
        self.table_prefix: str = layout.table_prefix
        self.period = layout.period
        self.stream_view_type = stream_view_type
        self.encryption_key = encryption_key
        self._metrics = RotationMetricFactory(self, layout.table_prefix)

    @property
    def table_name_pattern(self) -> str:
        """The names of this rotation's period tables as an IAM pattern: ``{prefix}_????-??-??`` for daily.

        ``?`` matches exactly one character, so the pattern never covers another rotation's tables
        (``readings_*`` would also match ``readings_eu_2026-01-01``).
        """
        return table_name_glob(self.table_prefix, self.period)

    @property
    def table_arns(self) -> list[str]:
        """ARNs covering every period table and its indexes."""
        return [
            table_arn_pattern(self, self.table_name_pattern),
            table_arn_pattern(self, f"{self.table_name_pattern}/index/*"),
        ]

    def grant_read_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """GetItem/BatchGetItem/Query/Scan/ConditionCheckItem/DescribeTable on every period table and index.

        :param grantee: who reads.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the period-table patterns on
            ``grantee``'s policy. Default: False — the findings stay for you to review.
        """
        return self._grant(grantee, _perms.DYNAMODB_READ_ACTIONS, _perms.KMS_DECRYPT_ACTIONS, acknowledge_nag_findings)

    def grant_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """PutItem/UpdateItem/DeleteItem/BatchWriteItem/DescribeTable on every period table of this prefix.

        :param grantee: who writes.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the period-table patterns on
            ``grantee``'s policy. Default: False.
        """
        return self._grant(
            grantee, _perms.DYNAMODB_WRITE_ACTIONS, _perms.KMS_ENCRYPT_DECRYPT_ACTIONS, acknowledge_nag_findings
        )

    def grant_read_write_data(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read and write data on every period table: the union of the two grants above.

        :param grantee: who reads and writes.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the period-table patterns on
            ``grantee``'s policy. Default: False.
        """
        return self._grant(
            grantee, _perms.DYNAMODB_READ_WRITE_ACTIONS, _perms.KMS_ENCRYPT_DECRYPT_ACTIONS, acknowledge_nag_findings
        )

    def grant_stream_read(self, grantee: iam.IGrantable, *, acknowledge_nag_findings: bool = False) -> iam.Grant:
        """Read the streams of every period table (for a stream consumer such as StreamArchiver).

        :param grantee: the stream consumer.
        :param acknowledge_nag_findings: acknowledge ``AwsSolutions-IAM5`` for the stream pattern and for
            ``dynamodb:ListStreams`` (``*``) on ``grantee``'s policy. Default: False.
        :raises ValueError: when the tables have no stream.
        """
        if self.stream_view_type is None:
            raise ValidationError(
                f"{path_of(self)} has no stream: pass stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES"
            )
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=list(_perms.DYNAMODB_STREAM_ACTIONS),
            resource_arns=[table_arn_pattern(self, f"{self.table_name_pattern}/stream/*")],
        )
        grant_unscoped(
            grantee, _perms.DYNAMODB_LIST_STREAMS_ACTIONS, acknowledge_finding=acknowledge_nag_findings,
            reason="ListStreams has no resource-level permissions",
        )
        if acknowledge_nag_findings:
            self._acknowledge_wildcards(grantee, [f"{self.table_name_pattern}/stream/*"])
        if self.encryption_key is not None:
            self.encryption_key.grant(grantee, *_perms.KMS_DECRYPT_ACTIONS)
        return grant

    @property
    def binding_environment(self) -> dict[str, str]:
        """The table layout ``PeriodRouter.from_env`` reads.

        ``CDK_TS_TABLE_PREFIX``, ``CDK_TS_PERIOD``, ``CDK_TS_PARTITION_KEY``, ``CDK_TS_PARTITION_KEY_TYPE``,
        ``CDK_TS_SORT_KEY``, ``CDK_TS_SORT_KEY_TYPE`` and ``CDK_TS_TIME_UNIT``.
        """
        return self.layout.to_env()

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """The graphs ``MonitoringDashboard.monitor`` shows for these tables: their throttled requests."""
        return [graph(f"Throttled requests, {self.table_prefix}_* period tables", self.metric_throttled_requests())]

    def metric_throttled_requests(self, **props: Any) -> cloudwatch.SearchExpression:
        """Throttled requests of every period table of this prefix, one line per table and operation.

        A SEARCH expression over ``AWS/DynamoDB`` ``ThrottledRequests`` by ``TableName`` and
        ``Operation`` whose table name contains the prefix as a term (CloudWatch's partial match: a
        longer prefix such as ``{prefix}_eu`` is matched too): period tables get a new name every
        period, which a static metric cannot name. For graphs only — CloudWatch alarms cannot use
        SEARCH; ``metric_throttled_requests_in_account`` is the alarmable form.

        :param props: ``SearchExpression`` options (``label``, ``period``, ``color``...).
            Statistic Sum over 5 minutes; label ``"{prefix}_* throttled requests"``.
        """
        return self._metrics.throttled_requests(**props)

    def metric_throttled_requests_in_account(self, **props: Any) -> cloudwatch.MathExpression:
        """Throttled requests summed over every DynamoDB table of the account and Region (Metrics Insights).

        A Metrics Insights query can drive an alarm, but it cannot select tables by a name prefix, so
        this counts other tables' throttles too; graph ``metric_throttled_requests`` to see which table.

        :param props: ``MathExpression`` options (``label``, ``period``...). Sum over 5 minutes.
        """
        return self._metrics.throttled_requests_in_account(**props)

    def metric_next_table_missing(self, **props: Any) -> cloudwatch.Metric:
        """1 while the next period's table is missing shortly before its boundary, else 0; Maximum.

        Published by every rotation run that ends less than ``missing_table_alarm_lead`` before the
        boundary, and by a create still being retried then.

        The same as ``metric(RotationMetric.NEXT_PERIOD_TABLE_MISSING, **props)``.
        """
        return self.metric(RotationMetric.NEXT_PERIOD_TABLE_MISSING, **props)

    def metric(self, metric_name: RotationMetric | str, **props: Any) -> cloudwatch.Metric:
        """A metric the rotation function publishes for this prefix (namespace ``cdk-ts``, dimension ``TablePrefix``).

        ``RotationMetric`` names them: ``NEXT_PERIOD_TABLE_MISSING`` (1 or 0, shortly before a boundary), the
        counts every run publishes, ``FUTURE_PERIOD_TABLES``, ``FOREIGN_LOOKALIKE_TABLES`` and ``FAILED_TABLES``,
        and ``LOCK_HELD_RUNS`` (1 when a run found the lock held, 0 when it took it).

        :param metric_name: a ``RotationMetric`` or its value (``"FailedTables"``).
        :param props: metric options (``period``, ``statistic``, ``label``...) over the default, the Maximum.
        :raises ValueError: for a name the rotation function does not publish.
        """
        return self._metrics.published(metric_name, **props)

    def _grant(
        self, grantee: iam.IGrantable, actions: tuple[str, ...], kms_actions: tuple[str, ...], acknowledge_nag: bool
    ) -> iam.Grant:
        grant = iam.Grant.add_to_principal(grantee=grantee, actions=list(actions), resource_arns=self.table_arns)
        if self.encryption_key is not None:
            self.encryption_key.grant(grantee, *kms_actions)
        if acknowledge_nag:
            self._acknowledge_wildcards(grantee, [self.table_name_pattern, f"{self.table_name_pattern}/index/*"])
        return grant

    def _acknowledge_wildcards(self, grantee: iam.IGrantable, patterns: list[str]) -> None:
        acknowledge_wildcard_resources(
            grantee, self, [table_arn_pattern(self, p) for p in patterns],
            f"period tables are created at run time and are all named {self.table_name_pattern}",
        )
