"""Contributor Insights in ``THROTTLED_KEYS`` mode: the switch the data constructs share, and its dashboard graph.

``THROTTLED_KEYS`` makes DynamoDB keep one rule per table, ``DynamoDBContributorInsights-PKT-{table}-{created ms}``
(and ``SKT`` with a sort key), naming the partition keys it throttles; unlike ``ACCESSED_AND_THROTTLED_KEYS`` it
does not count every request (CloudFormation ``ContributorInsightsSpecification.Mode``; aws-cdk-lib's
``ContributorInsightsSpecification(enabled=True, mode=ContributorInsightsMode.THROTTLED_KEYS)``).

The rule's name carries the time insights were turned on, so it is unknown at synth: :class:`ThrottledKeysRule`
reads it at deploy time (a custom resource) so the dashboard graphs it with no manual step.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CustomResource, Duration, Stack, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._defaults import runtime_function
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
        describe-contributor-insights --table-name TABLE`` lists it), or a deploy-time token for it
        (:attr:`ThrottledKeysRule.rule_name`).
    :param title: the graph's title.
        Default: None — "Throttled keys: {rule_name}".
    :raises ValidationError: for a name that is not a DynamoDB throttled-keys rule.
    """
    throttled_keys_rule = rule_name.startswith(("DynamoDBContributorInsights-PKT-", "DynamoDBContributorInsights-SKT-"))
    if not throttled_keys_rule and not Token.is_unresolved(rule_name):
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


#: The custom resource function's timeout: the rule finder asks for up to two minutes while insights are ENABLING.
RULE_LOOKUP_TIMEOUT = Duration.minutes(3)


class ThrottledKeysRule(Construct):
    """The name DynamoDB gave a table's throttled-partition-keys rule, read at deploy time by a custom resource.

    A function (``cdk_ts_runtime.handlers.throttled_keys_rule``) calls ``DescribeContributorInsights`` on the table,
    which is all its role may do besides writing its logs, and answers the ``-PKT-`` rule of
    ``ContributorInsightsRuleList`` (picked by name: the list has no documented order, and with a sort key or in
    ``ACCESSED_AND_THROTTLED_KEYS`` mode it holds other rules too). The custom resource depends on the table, whose
    ``ContributorInsightsSpecification`` turns the rules on, and runs again when that specification changes.
    Use :func:`throttled_keys_rule_of`, which makes one per table.
    """

    def __init__(self, scope: Construct, construct_id: str, *, table: dynamodb.Table) -> None:
        """Create the function, its one permission and the custom resource.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param table: a ``Table`` of this app with Contributor Insights on.
        """
        super().__init__(scope, construct_id)
        self.function = runtime_function(
            self, "Function",
            description=f"Reads the Contributor Insights throttled-keys rule name of {table.node.path} for dashboards",
            handler="cdk_ts_runtime.handlers.throttled_keys_rule.handler",
            timeout=RULE_LOOKUP_TIMEOUT,
        )
        self.function.add_to_role_policy(iam.PolicyStatement(
            actions=[_perms.DESCRIBE_CONTRIBUTOR_INSIGHTS], resources=[table.table_arn],
        ))
        resource = table.node.default_child
        self.resource = CustomResource(
            self, "Resource",
            service_token=self.function.function_arn,
            resource_type="Custom::CdkTsThrottledKeysRule",
            # A changed insights setting can make a new rule (a new name): the changed property asks again.
            properties={
                "TableName": table.table_name,
                "Insights": Stack.of(table).resolve(resource.contributor_insights_specification),
            },
        )
        self.resource.node.add_dependency(table)
        self.rule_name: str = self.resource.get_att_string("RuleName")


def throttled_keys_rule_of(table: dynamodb.Table) -> ThrottledKeysRule:
    """The :class:`ThrottledKeysRule` of ``table``, made on first use (one per table, whoever asks)."""
    existing = table.node.try_find_child("ThrottledKeysRule")
    if isinstance(existing, ThrottledKeysRule):
        return existing
    return ThrottledKeysRule(table, "ThrottledKeysRule", table=table)
