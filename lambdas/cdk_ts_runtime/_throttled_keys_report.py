"""The top throttled partition keys of a rotation's current and previous period tables, read when they are viewed.

Each period table gets its own Contributor Insights rule when the rotation turns insights on for it, named
``DynamoDBContributorInsights-PKT-{table}-{created ms}``: the name is known only at run time, so it is read from
``DescribeContributorInsights`` (:func:`cdk_ts_runtime._contributor_insights.partition_keys_rule`) and the rule's top
contributors from CloudWatch ``GetInsightRuleReport``, ranked by ``Sum`` (the rule counts throttled requests per key:
API_GetInsightRuleReport, ``OrderBy``; ``MaxContributorCount`` is 1-100, default 10).

Why two tables: a router writes each item to the table of its event time, so the previous period's table still takes
late writes, and can still be throttled, after the boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from cdk_ts_runtime._aws import error_code, error_message
from cdk_ts_runtime._contributor_insights import partition_keys_rule
from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import whole
from cdk_ts_runtime._periods import period_start, require_utc, shift, table_name
from cdk_ts_runtime._table_layout import TableLayout

#: How many period tables are reported: the one holding the viewed range's end, and the one before it.
PERIODS_SHOWN = 2
#: GetInsightRuleReport's range of ``MaxContributorCount`` (API_GetInsightRuleReport).
MAX_CONTRIBUTORS = 100
#: GetInsightRuleReport's default number of contributors.
DEFAULT_CONTRIBUTORS = 10


@dataclass(frozen=True)
class ThrottledKey:
    """One contributor of a report: the key's values (one per rule key) and its throttled requests in the range."""

    keys: tuple[str, ...]
    throttled_requests: float


@dataclass(frozen=True)
class TableThrottledKeys:
    """What one period table's throttled-keys rule reports for a time range, or why there is no report.

    :param table: the period table's name.
    :param rule: its ``DynamoDBContributorInsights-PKT-...`` rule; None when it has none.
    :param key_labels: the rule's key names (``KeyLabels``).
    :param keys: the top keys, most throttled first.
    :param throttled_requests: all throttled requests the rule counted in the range (``AggregateValue``).
    :param keys_throttled: how many distinct keys were throttled (``ApproximateUniqueCount``, an approximation).
    :param problem: why there is no report (no such table, insights off, an AWS error); None when there is one.
    """

    table: str
    rule: str | None = None
    key_labels: tuple[str, ...] = ()
    keys: tuple[ThrottledKey, ...] = ()
    throttled_requests: float = 0.0
    keys_throttled: int = 0
    problem: str | None = None


def check_top(top: object) -> int:
    """``top`` as the number of keys to report: a whole number from 1 to 100, else a ValidationError naming it."""
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_CONTRIBUTORS:
        raise ValidationError(
            f"top {top!r} must be a whole number from 1 to {MAX_CONTRIBUTORS} (GetInsightRuleReport's "
            "MaxContributorCount)"
        )
    return top


class PeriodThrottledKeys:
    """Reads the throttled-keys reports of a rotation's current and previous period tables.

    :param layout: the rotation's table layout (prefix and period name the tables).
    :param dynamodb: a boto3 DynamoDB client (``DescribeContributorInsights``).
    :param cloudwatch: a boto3 CloudWatch client (``GetInsightRuleReport``).
    """

    def __init__(self, layout: TableLayout, *, dynamodb: Any, cloudwatch: Any) -> None:
        """Keep the layout and the clients; nothing is asked until :meth:`report`."""
        self.layout = layout
        self.dynamodb = dynamodb
        self.cloudwatch = cloudwatch

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, dynamodb: Any, cloudwatch: Any) -> PeriodThrottledKeys:
        """The reader of the tables whose layout ``env`` holds (``TableLayout.to_env``)."""
        return cls(TableLayout.from_env(env), dynamodb=dynamodb, cloudwatch=cloudwatch)

    def tables(self, end: datetime) -> list[str]:
        """The period tables reported for a range ending at ``end``: its period's table, then the previous one."""
        current = period_start(self.layout.period, end)
        starts = [shift(self.layout.period, current, -count) for count in range(PERIODS_SHOWN)]
        return [table_name(self.layout.table_prefix, self.layout.period, start) for start in starts]

    def report(
        self, start: datetime, end: datetime, *, period_seconds: int, top: int = DEFAULT_CONTRIBUTORS
    ) -> list[TableThrottledKeys]:
        """Each reported table's top throttled keys between ``start`` and ``end``, current table first.

        A table whose report cannot be read (missing, insights off, an error from AWS) is reported with its
        ``problem``; the other is still read.

        :param start: the range's start (aware, any time zone).
        :param end: the range's end.
        :param period_seconds: the report's data-point period (the dashboard's).
        :param top: how many keys to name per table, 1-100.
            Default: 10 (GetInsightRuleReport's own default).
        :raises ValidationError: for a range that ends before it starts, or a bad ``top`` or period.
        """
        start, end = require_utc(start), require_utc(end)
        if end <= start:
            raise ValidationError(f"the time range ends ({end.isoformat()}) before it starts ({start.isoformat()})")
        whole("period_seconds", period_seconds, hint="the report's data-point period in seconds")
        top = check_top(top)
        return [self._table_report(table, start, end, period_seconds, top) for table in self.tables(end)]

    def _table_report(
        self, table: str, start: datetime, end: datetime, period_seconds: int, top: int
    ) -> TableThrottledKeys:
        try:
            insights = self.dynamodb.describe_contributor_insights(TableName=table)
        except (ClientError, BotoCoreError) as error:
            if error_code(error) == "ResourceNotFoundException":
                return TableThrottledKeys(table, problem="no such table (not created yet, or expired)")
            return TableThrottledKeys(table, problem=_failure("DescribeContributorInsights", error))
        rule = partition_keys_rule(insights.get("ContributorInsightsRuleList", []))
        if rule is None:
            status = insights.get("ContributorInsightsStatus", "unknown")
            return TableThrottledKeys(
                table, problem=f"Contributor Insights is {status} on this table, so no key is named; the rotation "
                "turns it on when it creates or reconciles a table (throttled_keys_insights=True)",
            )
        try:
            answer = self.cloudwatch.get_insight_rule_report(
                RuleName=rule, StartTime=start, EndTime=end, Period=period_seconds,
                MaxContributorCount=top, OrderBy="Sum",
            )
        except (ClientError, BotoCoreError) as error:
            return TableThrottledKeys(table, rule=rule, problem=_failure("GetInsightRuleReport", error))
        contributors = sorted(
            answer.get("Contributors", []), key=lambda c: c.get("ApproximateAggregateValue", 0.0), reverse=True
        )
        return TableThrottledKeys(
            table,
            rule=rule,
            key_labels=tuple(answer.get("KeyLabels", [])),
            keys=tuple(
                ThrottledKey(tuple(c.get("Keys", [])), c.get("ApproximateAggregateValue", 0.0)) for c in contributors
            ),
            throttled_requests=answer.get("AggregateValue", 0.0),
            keys_throttled=answer.get("ApproximateUniqueCount", 0),
        )


def _failure(operation: str, error: Exception) -> str:
    code = error_code(error) or type(error).__name__
    return f"{operation} failed: {code}: {error_message(error)}"
