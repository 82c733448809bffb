"""The throttled-keys rule finder and its custom resource, against the rules proxy (moto has no Contributor
Insights API; the proxy keeps each table's insights state and names rules as DynamoDB does)."""

from __future__ import annotations

import pytest

from cdk_ts_runtime._contributor_insights import ThrottledKeysRuleMissingError, throttled_keys_rule
from cdk_ts_runtime.handlers import throttled_keys_rule as rule_handler
from tests.support.rules_tables import create_active


@pytest.fixture
def ddb(rules_proxy):
    return rules_proxy.client()


@pytest.fixture
def table(rules_proxy, ddb, unique_name):
    return create_active(rules_proxy, ddb, unique_name)


def enable(ddb, table, mode=None):
    ddb.update_contributor_insights(
        TableName=table, ContributorInsightsAction="ENABLE", **({"ContributorInsightsMode": mode} if mode else {})
    )


class TestThrottledKeysRule:
    def test_a_throttled_keys_table_answers_its_pkt_rule(self, ddb, table):
        enable(ddb, table, "THROTTLED_KEYS")
        rule = throttled_keys_rule(ddb, table, sleep=pytest.fail)
        assert rule.startswith(f"DynamoDBContributorInsights-PKT-{table}-")
        assert rule in ddb.describe_contributor_insights(TableName=table)["ContributorInsightsRuleList"]

    def test_the_pkt_rule_is_picked_by_name_when_it_is_not_first(self, ddb, table):
        enable(ddb, table)  # ACCESSED_AND_THROTTLED_KEYS: the accessed-keys rule is listed too, first here
        listed = ddb.describe_contributor_insights(TableName=table)["ContributorInsightsRuleList"]
        assert listed[0].startswith("DynamoDBContributorInsights-PKC-")
        assert throttled_keys_rule(ddb, table, sleep=pytest.fail) == listed[1]
        assert "-PKT-" in listed[1]

    def test_it_asks_again_until_insights_are_seen_on(self, ddb, table):
        pauses = []

        def pause(seconds):  # insights come on while the finder waits, as after a CloudFormation update
            pauses.append(seconds)
            enable(ddb, table, "THROTTLED_KEYS")

        rule = throttled_keys_rule(ddb, table, pause_seconds=5.0, sleep=pause)
        assert pauses == [5.0]
        assert "-PKT-" in rule

    def test_a_table_whose_insights_never_come_on_is_a_clear_error_after_the_last_question(self, ddb, table):
        pauses = []
        expected = rf"table '{table}' listed no PKT rule after 3 .*DISABLED"
        with pytest.raises(ThrottledKeysRuleMissingError, match=expected):
            throttled_keys_rule(ddb, table, attempts=3, sleep=pauses.append)
        assert len(pauses) == 2


def request(url, request_type, table, **extra):
    return {
        "RequestType": request_type, "ResponseURL": url,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/S/1", "RequestId": "r-1",
        "LogicalResourceId": "ThrottledKeysRule", "ResourceType": "Custom::CdkTsThrottledKeysRule",
        "ResourceProperties": {"TableName": table}, **extra,
    }


class TestCustomResource:
    def finder(self, ddb):
        return lambda name: throttled_keys_rule(ddb, name, attempts=1)

    def test_create_answers_the_rule_name_as_data_and_physical_id(self, ddb, table, cloudformation):
        enable(ddb, table, "THROTTLED_KEYS")
        [rule] = ddb.describe_contributor_insights(TableName=table)["ContributorInsightsRuleList"]

        rule_handler.handle(request(cloudformation.url, "Create", table), None, self.finder(ddb))

        [reply] = cloudformation.replies
        assert (reply["Status"], reply["Data"], reply["PhysicalResourceId"]) == ("SUCCESS", {"RuleName": rule}, rule)

    def test_a_table_that_does_not_exist_answers_failed_with_dynamodbs_reason(self, ddb, cloudformation, unique_name):
        rule_handler.handle(request(cloudformation.url, "Update", unique_name), None, self.finder(ddb))

        [reply] = cloudformation.replies
        assert reply["Status"] == "FAILED"
        assert "ResourceNotFoundException" in reply["Reason"]

    def test_delete_changes_nothing_and_asks_nothing(self, ddb, table, cloudformation):
        enable(ddb, table, "THROTTLED_KEYS")
        asked = []
        event = request(cloudformation.url, "Delete", table, PhysicalResourceId="DynamoDBContributorInsights-PKT-x-1")

        rule_handler.handle(event, None, asked.append)

        [reply] = cloudformation.replies
        assert (reply["Status"], reply["PhysicalResourceId"]) == ("SUCCESS", "DynamoDBContributorInsights-PKT-x-1")
        assert asked == []
        assert ddb.describe_contributor_insights(TableName=table)["ContributorInsightsStatus"] == "ENABLED"

    def test_a_request_naming_no_table_answers_failed_and_asks_nothing(self, cloudformation):
        asked = []
        event = {**request(cloudformation.url, "Create", None), "ResourceProperties": {}}

        rule_handler.handle(event, None, asked.append)

        [reply] = cloudformation.replies
        assert reply["Status"] == "FAILED"
        assert "ValidationError: ResourceProperties.TableName is missing" in reply["Reason"]
        assert asked == []
