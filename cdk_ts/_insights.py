"""Contributor Insights in ``THROTTLED_KEYS`` mode: the switch the data constructs share, and its dashboard graph.

``THROTTLED_KEYS`` makes DynamoDB keep one rule per table, ``DynamoDBContributorInsights-PKT-{table}-{created ms}``
(and ``SKT`` with a sort key), naming the partition keys it throttles; unlike ``ACCESSED_AND_THROTTLED_KEYS`` it
does not count every request (CloudFormation ``ContributorInsightsSpecification.Mode``; aws-cdk-lib's
``ContributorInsightsSpecification(enabled=True, mode=ContributorInsightsMode.THROTTLED_KEYS)``).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb

from cdk_ts_runtime.errors import ValidationError

#: What every switch turns on.
THROTTLED_KEYS = dynamodb.ContributorInsightsSpecification(
    enabled=True, mode=dynamodb.ContributorInsightsMode.THROTTLED_KEYS
)


def throttled_keys_options(on: bool) -> dict[str, Any]:
    """The ``contributor_insights_specification`` keyword of ``Table``/a GSI when ``on``, else nothing."""
    return {"contributor_insights_specification": THROTTLED_KEYS} if on else {}


def main_table_problem(table: object) -> str | None:
    """Why the throttled keys of ``table`` cannot be named from here; None when they can (a ``Table`` of this app).

    A ``TableV2`` keeps the setting per replica and an imported table is configured where it is defined.
    """
    resource = getattr(getattr(table, "node", None), "default_child", None)
    if isinstance(resource, dynamodb.CfnTable):
        current = Stack.of(resource).resolve(resource.contributor_insights_specification)
        if current and not current.get("enabled"):
            return "its contributor_insights_specification turns Contributor Insights off; turn it on there"
        return None
    return (
        "it is not a dynamodb.Table defined in this app (a TableV2 or an imported table): set "
        "contributor_insights_specification=ContributorInsightsSpecification(enabled=True, "
        "mode=ContributorInsightsMode.THROTTLED_KEYS) where the table is defined"
    )


def name_throttled_keys_of(table: object) -> None:
    """Turn on ``THROTTLED_KEYS`` on a ``Table`` of this app whose insights are not on yet (either mode stays)."""
    problem = main_table_problem(table)
    if problem is not None:
        raise ValidationError(f"cannot name the throttled keys of {table}: {problem}")
    resource = table.node.default_child
    if not Stack.of(resource).resolve(resource.contributor_insights_specification):
        resource.contributor_insights_specification = dynamodb.CfnTable.ContributorInsightsSpecificationProperty(
            enabled=True, mode=dynamodb.ContributorInsightsMode.THROTTLED_KEYS.value
        )


def throttled_keys_graph(rule_name: str, *, title: str | None = None) -> cloudwatch.GraphWidget:
    """A graph of one table's throttled-keys rule: the top key's throttled requests and how many keys were throttled.

    ``INSIGHT_RULE_METRIC(rule, metric)`` is CloudWatch metric math's reader of a Contributor Insights rule;
    ``MaxContributorValue`` (the top contributor's count) and ``UniqueContributors`` are the statistics DynamoDB's
    guide names as meaningful for its rules. One key far above the rest is a hot key (shard it); many keys
    throttled together is the table's capacity.

    :param rule_name: the rule's name, ``DynamoDBContributorInsights-PKT-{table}-{created ms}`` (it carries the
        time insights were turned on, so it is known only after deployment: ``aws dynamodb
        describe-contributor-insights --table-name TABLE`` lists it).
    :param title: the graph's title.
        Default: None — "Throttled keys: {rule_name}".
    :raises ValidationError: for a name that is not a DynamoDB throttled-keys rule.
    """
    if not rule_name.startswith(("DynamoDBContributorInsights-PKT-", "DynamoDBContributorInsights-SKT-")):
        raise ValidationError(
            f"rule_name {rule_name!r} is not a DynamoDB throttled-keys rule (DynamoDBContributorInsights-PKT-...); "
            "aws dynamodb describe-contributor-insights --table-name TABLE lists the table's rules"
        )
    quoted = rule_name.replace("'", "")

    def rule_metric(metric: str, label: str) -> cloudwatch.MathExpression:
        return cloudwatch.MathExpression(
            expression=f"INSIGHT_RULE_METRIC('{quoted}', '{metric}')", label=label, period=Duration.minutes(1),
        )

    return cloudwatch.GraphWidget(
        title=title or f"Throttled keys: {rule_name}",
        left=[rule_metric("MaxContributorValue", "throttles of the top key")],
        right=[rule_metric("UniqueContributors", "keys throttled")],
        width=12,
    )
