"""A table's Contributor Insights throttled-keys rule, found by name once DynamoDB has made it.

DynamoDB names its rules ``DynamoDBContributorInsights-{kind}-{table}-{created ms}``: ``PKT``/``SKT`` for throttled
partition/sort keys and, in ``ACCESSED_AND_THROTTLED_KEYS`` mode, ``PKC``/``SKC`` for accessed keys too.
``DescribeContributorInsights`` lists them in ``ContributorInsightsRuleList`` (a list of strings, in no documented
order: API_DescribeContributorInsights and botocore's ``ContributorInsightsRuleList`` shape), so the
partition-key throttles rule is picked by its ``-PKT-`` part, never by its place in the list.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cdk_ts_runtime._errors import CdkTsError
from cdk_ts_runtime._retries import Failure, RetryPolicy, call_with_retries

#: The part of a rule's name that marks DynamoDB's throttled partition keys rule.
THROTTLED_PARTITION_KEYS = "-PKT-"
#: Statuses the finder asks again after: ENABLING, and DISABLED, which a read right after CloudFormation turned
#: insights on may still show (DynamoDB's control-plane reads are eventually consistent, as API_DescribeTable says
#: of a table just created). FAILED and DISABLING end the search at once.
PASSING_STATUSES = frozenset({"ENABLING", "DISABLED"})


def partition_keys_rule(rules: list[str]) -> str | None:
    """The throttled-partition-keys rule among a table's ``ContributorInsightsRuleList``, or None when none is listed.

    Picked by its ``-PKT-`` part, never by its place in the list; of two (a re-enabled table listing an old one
    too) the one with the later creation time in its name.
    """
    listed = sorted(rule for rule in rules if THROTTLED_PARTITION_KEYS in rule)
    return listed[-1] if listed else None


class ThrottledKeysRuleMissingError(CdkTsError):
    """A table has no throttled-partition-keys rule (insights off, failed, or still enabling when time ran out)."""


def throttled_keys_rule(
    dynamodb: Any,
    table_name: str,
    *,
    attempts: int = 24,
    pause_seconds: float = 5.0,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """The name of ``table_name``'s ``DynamoDBContributorInsights-PKT-...`` rule.

    Asks ``DescribeContributorInsights`` until the rule is listed, pausing while insights are ``ENABLING`` or not yet
    seen on (CloudFormation may finish the table before DynamoDB has made its rules).

    :param dynamodb: a boto3 DynamoDB client.
    :param table_name: the table's name or ARN.
    :param attempts: how many times to ask before giving up (a guess: 24 x 5 s covers the few seconds
        DynamoDB is seen ENABLING, with room, inside the custom resource function's timeout).
    :param pause_seconds: the pause between two questions.
    :param sleep: how to pause (tests pass their own).
    :raises ThrottledKeysRuleMissingError: naming the table and its status, when no PKT rule is listed in time
        or insights are FAILED or DISABLING (the way out: turn ``throttled_keys_insights`` on for that table).
    """
    # A fixed pause (no jitter): the question is whether DynamoDB has made the rule yet, not a throttle.
    policy = RetryPolicy(max_attempts=attempts, base_seconds=pause_seconds, cap_seconds=pause_seconds, jitter=False)
    asked: dict[str, Any] = {}

    def ask(_attempt: int) -> str | None:
        answer = asked["answer"] = dynamodb.describe_contributor_insights(TableName=table_name)
        status = answer.get("ContributorInsightsStatus", "unknown")
        rule = partition_keys_rule(answer.get("ContributorInsightsRuleList", []))
        if rule is None and status != "ENABLED" and status not in PASSING_STATUSES:
            failure = answer.get("FailureException") or {}
            why = f" ({failure.get('ExceptionName')}: {failure.get('ExceptionDescription')})" if failure else ""
            raise ThrottledKeysRuleMissingError(
                f"table {table_name!r} has Contributor Insights {status}{why}, so it has no throttled-keys rule; "
                "turn throttled_keys_insights on for it (or enable insights on the table) and deploy again"
            )
        return rule

    def missing(_failure: Failure[str | None]) -> str:
        status = asked["answer"].get("ContributorInsightsStatus", "unknown")
        raise ThrottledKeysRuleMissingError(
            f"table {table_name!r} listed no {THROTTLED_PARTITION_KEYS.strip('-')} rule after {attempts} questions "
            f"(Contributor Insights {status}); deploy again once aws dynamodb describe-contributor-insights "
            f"--table-name {table_name} lists it"
        )

    rule = call_with_retries(ask, policy, accept=lambda found: found is not None, give_up=missing, sleep=sleep)
    assert rule is not None  # accepted results are rules; give_up raises
    return rule
