"""Contributor Insights in THROTTLED_KEYS mode: each construct's switch, synthesized, and its dashboard graph."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Annotations, Match, Template

from cdk_ts import DeviceLogTable, MonitoringDashboard, RotatingTimeSeriesTables, ShardMetadataTable
from cdk_ts_runtime import ValidationError
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG
from tests.support.iam import actions_of, policy_statements
from tests.support.nag import new_stack, unacknowledged_findings

THROTTLED_KEYS = {"Enabled": True, "Mode": "THROTTLED_KEYS"}
STRING = dynamodb.AttributeType.STRING


def insights_of_tables(stack: Stack) -> list:
    """Every table's ContributorInsightsSpecification (None where unset), in template order."""
    tables = Template.from_stack(stack).find_resources("AWS::DynamoDB::Table").values()
    return [t["Properties"].get("ContributorInsightsSpecification") for t in tables]


def audit_table(stack: Stack, **props) -> dynamodb.Table:
    return dynamodb.Table(
        stack, "Audit", partition_key=dynamodb.Attribute(name="file_path", type=STRING),
        sort_key=dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER), **props,
    )


class TestDeviceLogTable:
    def test_the_switch_names_throttled_keys_on_the_table_and_both_indexes(self):
        stack = Stack(App(), "S")
        DeviceLogTable(stack, "Log", throttled_keys_insights=True)
        [table] = Template.from_stack(stack).find_resources("AWS::DynamoDB::Table").values()
        assert table["Properties"]["ContributorInsightsSpecification"] == THROTTLED_KEYS
        indexes = table["Properties"]["GlobalSecondaryIndexes"]
        assert [i["ContributorInsightsSpecification"] for i in indexes] == [THROTTLED_KEYS, THROTTLED_KEYS]

    def test_off_by_default(self):
        stack = Stack(App(), "S")
        DeviceLogTable(stack, "Log")
        [table] = Template.from_stack(stack).find_resources("AWS::DynamoDB::Table").values()
        assert "ContributorInsightsSpecification" not in json.dumps(table)

    def test_an_existing_table_cannot_be_switched_from_here(self):
        stack = Stack(App(), "S")
        existing = dynamodb.Table.from_table_name(stack, "Existing", "device-log")
        with pytest.raises(ValueError, match="S/Log: throttled_keys_insights cannot be applied to existing_table"):
            DeviceLogTable(stack, "Log", existing_table=existing, throttled_keys_insights=True)


class TestShardMetadataTable:
    def test_the_switch_names_the_main_tables_throttled_keys_not_the_metadata_tables(self):
        stack = Stack(App(), "S")
        main = audit_table(stack)
        ShardMetadataTable(stack, "Shards", main_table=main, throttled_keys_insights=True)
        template = Template.from_stack(stack)
        template.has_resource_properties("AWS::DynamoDB::Table", {
            "KeySchema": Match.array_with([{"AttributeName": "timestamp", "KeyType": "RANGE"}]),
            "ContributorInsightsSpecification": THROTTLED_KEYS,
        })
        assert sorted(map(json.dumps, insights_of_tables(stack))) == sorted([json.dumps(THROTTLED_KEYS), "null"])

    def test_a_main_table_already_watching_every_key_keeps_its_mode(self):
        stack = Stack(App(), "S")
        main = audit_table(stack, contributor_insights_specification=dynamodb.ContributorInsightsSpecification(
            enabled=True, mode=dynamodb.ContributorInsightsMode.ACCESSED_AND_THROTTLED_KEYS))
        ShardMetadataTable(stack, "Shards", main_table=main, throttled_keys_insights=True)
        assert {"Enabled": True, "Mode": "ACCESSED_AND_THROTTLED_KEYS"} in insights_of_tables(stack)

    def test_a_device_log_main_table_is_switched_through_its_table(self):
        stack = Stack(App(), "S")
        ShardMetadataTable(stack, "Shards", main_table=DeviceLogTable(stack, "Log"), throttled_keys_insights=True)
        assert THROTTLED_KEYS in insights_of_tables(stack)

    @pytest.mark.parametrize("kind", ["imported", "TableV2"])
    def test_a_main_table_it_cannot_configure_is_a_synth_error_that_says_where_to_do_it(self, kind):
        stack = Stack(App(), "S")
        if kind == "imported":
            main = dynamodb.Table.from_table_name(stack, "Main", "audit")
            extra = {"partition_key": dynamodb.Attribute(name="file_path", type=STRING), "sort_key_name": "timestamp"}
        else:
            main = dynamodb.TableV2(stack, "Main", partition_key=dynamodb.Attribute(name="file_path", type=STRING),
                                    sort_key=dynamodb.Attribute(name="timestamp", type=dynamodb.AttributeType.NUMBER))
            extra = {}
        with pytest.raises(ValueError, match=r"S/Shards: throttled_keys_insights cannot name the keys of main_table "
                           r"S/Main: .* set contributor_insights_specification=ContributorInsightsSpecification"):
            ShardMetadataTable(stack, "Shards", main_table=main, throttled_keys_insights=True, **extra)


class TestRotatingTimeSeriesTables:
    def test_the_switch_reaches_the_function_with_only_the_permissions_it_needs(self):
        app, stack = new_stack()
        RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry", throttled_keys_insights=True)
        assert unacknowledged_findings(app) == []  # first: once synthesized, the app is not validated again
        template = Template.from_stack(stack)

        [function] = [f for f in template.find_resources("AWS::Lambda::Function").values()
                      if ENV_ROTATION_CONFIG in json.dumps(f)]
        config = json.loads(function["Properties"]["Environment"]["Variables"][ENV_ROTATION_CONFIG])
        assert config["throttled_keys_insights"] is True
        statements = policy_statements(template)
        insights = next(s for s in statements if "dynamodb:UpdateContributorInsights" in s["Action"])
        assert set(insights["Action"]) == {"dynamodb:UpdateContributorInsights", "dynamodb:DescribeContributorInsights"}
        assert "telemetry_????-??-??" in json.dumps(stack.resolve(insights["Resource"]))
        role = next(s for s in statements if s["Action"] == "iam:CreateServiceLinkedRole"
                    and "contributorinsights" in json.dumps(s))
        assert role["Condition"] == {"StringLike": {"iam:AWSServiceName": "contributorinsights.dynamodb.amazonaws.com"}}

    def test_off_by_default_with_no_contributor_insights_permission(self):
        stack = Stack(App(), "S")
        RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry")
        assert "ContributorInsights" not in json.dumps(Template.from_stack(stack).to_json())


class TestDashboard:
    def test_each_rule_gets_a_graph_of_its_top_key_and_how_many_keys_were_throttled(self):
        stack = Stack(App(), "S")
        dashboard = MonitoringDashboard(stack, "Dashboard")
        rule = "DynamoDBContributorInsights-PKT-audit-1764115200000"
        dashboard.show_throttled_keys(rule)
        [resource] = Template.from_stack(stack).find_resources("AWS::CloudWatch::Dashboard").values()
        body = json.loads(json.dumps(stack.resolve(resource["Properties"]["DashboardBody"])))
        text = body if isinstance(body, str) else json.dumps(body)
        assert f"INSIGHT_RULE_METRIC('{rule}', 'MaxContributorValue')" in text
        assert f"INSIGHT_RULE_METRIC('{rule}', 'UniqueContributors')" in text

    def test_a_name_that_is_not_a_throttled_keys_rule_is_refused(self):
        dashboard = MonitoringDashboard(Stack(App(), "S"), "Dashboard")
        with pytest.raises(ValidationError, match="describe-contributor-insights"):
            dashboard.show_throttled_keys("DynamoDBContributorInsights-PKC-audit-1764115200000")


RULE_RESOURCE = "Custom::CdkTsThrottledKeysRule"


def dashboard_parts(stack: Stack) -> list:
    """The dashboard body's ``Fn::Join`` parts: strings, and the tokens between them."""
    [resource] = Template.from_stack(stack).find_resources("AWS::CloudWatch::Dashboard").values()
    return stack.resolve(resource["Properties"]["DashboardBody"])["Fn::Join"][1]


def graphs_of_rule(parts: list, rule_resource_id: str) -> list[str]:
    """The INSIGHT_RULE_METRIC statistics the dashboard reads from the rule name the custom resource answers."""
    attribute = {"Fn::GetAtt": [rule_resource_id, "RuleName"]}
    return [
        parts[i + 1].split("'")[2]
        for i in range(1, len(parts) - 1)
        if parts[i] == attribute and parts[i - 1].endswith("INSIGHT_RULE_METRIC('") and parts[i + 1].startswith("', '")
    ]


class TestRuleNameFoundAtDeploy:
    """With the switch on, a custom resource reads the rule's name and the construct's dashboard row graphs it."""

    def test_a_device_log_tables_row_graphs_its_top_throttled_key_and_how_many_keys(self):
        stack = Stack(App(), "S")
        log = DeviceLogTable(stack, "Log", throttled_keys_insights=True)
        MonitoringDashboard(stack, "Dashboard").monitor(log)

        [(rule_id, rule)] = Template.from_stack(stack).find_resources(RULE_RESOURCE).items()
        assert rule["Properties"]["TableName"] == stack.resolve(log.table.table_name)
        assert graphs_of_rule(dashboard_parts(stack), rule_id) == ["MaxContributorValue", "UniqueContributors"]

    def test_the_custom_resource_runs_after_the_table_that_turns_insights_on(self):
        stack = Stack(App(), "S")
        log = DeviceLogTable(stack, "Log", throttled_keys_insights=True)
        [rule] = Template.from_stack(stack).find_resources(RULE_RESOURCE).values()
        assert stack.resolve(log.table.node.default_child.logical_id) in rule["DependsOn"]
        assert rule["Properties"]["Insights"] == {"enabled": True, "mode": "THROTTLED_KEYS"}

    def test_its_function_may_only_describe_that_tables_insights(self):
        stack = Stack(App(), "S")
        log = DeviceLogTable(stack, "Log", throttled_keys_insights=True)
        function = log.throttled_keys_rule.function
        template = Template.from_stack(stack)
        [rule] = template.find_resources(RULE_RESOURCE).values()
        assert rule["Properties"]["ServiceToken"] == stack.resolve(function.function_arn)
        attached = {"Properties": {"Roles": [stack.resolve(function.role.role_name)]}}
        statements = policy_statements(template, props=attached)
        dynamodb_statements = [s for s in statements if any(a.startswith("dynamodb:") for a in actions_of(s))]
        assert dynamodb_statements == [{
            "Action": "dynamodb:DescribeContributorInsights", "Effect": "Allow",
            "Resource": stack.resolve(log.table.table_arn),
        }]
        assert {a for s in statements for a in actions_of(s)} == {
            "dynamodb:DescribeContributorInsights", "logs:CreateLogStream", "logs:PutLogEvents",
        }
        template.has_resource_properties("AWS::Lambda::Function", {
            "Handler": "cdk_ts_runtime.handlers.throttled_keys_rule.handler",
        })

    def test_a_shard_metadata_tables_row_graphs_the_main_tables_throttled_keys(self):
        stack = Stack(App(), "S")
        main = audit_table(stack)
        shards = ShardMetadataTable(stack, "Shards", main_table=main, throttled_keys_insights=True)
        MonitoringDashboard(stack, "Dashboard").monitor(shards)

        [(rule_id, rule)] = Template.from_stack(stack).find_resources(RULE_RESOURCE).items()
        assert rule["Properties"]["TableName"] == stack.resolve(main.table_name)
        assert len(graphs_of_rule(dashboard_parts(stack), rule_id)) == 2

    def test_one_custom_resource_per_table_when_two_constructs_switch_it_on(self):
        stack = Stack(App(), "S")
        log = DeviceLogTable(stack, "Log", throttled_keys_insights=True)
        shards = ShardMetadataTable(stack, "Shards", main_table=log, throttled_keys_insights=True)
        assert shards.throttled_keys_rule is log.throttled_keys_rule
        assert len(Template.from_stack(stack).find_resources(RULE_RESOURCE)) == 1

    def test_off_by_default_no_custom_resource_and_no_rule_graph(self):
        stack = Stack(App(), "S")
        log = DeviceLogTable(stack, "Log")
        MonitoringDashboard(stack, "Dashboard").monitor(log)
        template = Template.from_stack(stack)
        assert template.find_resources(RULE_RESOURCE) == {}
        template.resource_count_is("AWS::Lambda::Function", 0)
        assert "INSIGHT_RULE_METRIC" not in json.dumps(dashboard_parts(stack))

    def test_synthesizes_without_warnings_and_passes_cdk_nag(self):
        app, stack = new_stack()
        log = DeviceLogTable(stack, "Log", throttled_keys_insights=True)
        shards = ShardMetadataTable(stack, "Shards", main_table=audit_table(stack), throttled_keys_insights=True)
        MonitoringDashboard(stack, "Dashboard").monitor(log, shards)
        assert Annotations.from_stack(stack).find_warning("*", Match.any_value()) == []
        assert unacknowledged_findings(app) == []


WIDGET_HANDLER = "cdk_ts_runtime.handlers.throttled_keys_widget.handler"


def custom_widgets(stack: Stack) -> list[dict]:
    """The dashboard's custom widgets, each with its ``endpoint`` as the template's token for the function ARN."""
    tokens: list = []

    def text(part):
        if isinstance(part, str):
            return part
        tokens.append(part)
        return f"@token{len(tokens) - 1}@"

    body = json.loads("".join(text(part) for part in dashboard_parts(stack)))
    widgets = [w for w in body["widgets"] if w["type"] == "custom"]
    for widget in widgets:
        widget["properties"]["endpoint"] = tokens[int(widget["properties"]["endpoint"].strip("@token"))]
    return widgets


def widget_function(template: Template) -> tuple[str, dict]:
    [(logical_id, function)] = [
        (i, f) for i, f in template.find_resources("AWS::Lambda::Function").items()
        if f["Properties"]["Handler"] == WIDGET_HANDLER
    ]
    return logical_id, function


class TestPeriodTablesWidget:
    """With the switch on, the rotation's dashboard row names its current and previous tables' top throttled keys."""

    def test_monitor_adds_a_custom_widget_whose_function_knows_the_rotations_layout(self):
        stack = Stack(App(), "S")
        tables = RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry", throttled_keys_insights=True)
        MonitoringDashboard(stack, "Dashboard").monitor(tables)

        function_id, function = widget_function(Template.from_stack(stack))
        [widget] = custom_widgets(stack)
        assert widget["properties"]["endpoint"] == {"Fn::GetAtt": [function_id, "Arn"]}
        assert widget["properties"]["params"] == {"top": 10}
        assert widget["properties"]["updateOn"] == {"refresh": True, "resize": False, "timeRange": True}
        assert widget["width"] == 24
        variables = function["Properties"]["Environment"]["Variables"]
        assert {k: variables[k] for k in tables.layout.to_env()} == tables.layout.to_env()

    def test_its_function_may_only_read_the_prefixs_insights_and_their_partition_key_rules(self):
        app, stack = new_stack()
        tables = RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry", throttled_keys_insights=True)
        MonitoringDashboard(stack, "Dashboard").monitor(tables)
        assert unacknowledged_findings(app) == []  # first: once synthesized, the app is not validated again
        template = Template.from_stack(stack)

        widget = tables.node.find_child("ThrottledKeysWidget")
        attached = {"Properties": {"Roles": [stack.resolve(widget.function.role.role_name)]}}
        statements = policy_statements(template, props=attached)
        reads = {actions_of(s)[0]: json.dumps(stack.resolve(s["Resource"])) for s in statements
                 if not actions_of(s)[0].startswith("logs:")}
        assert set(reads) == {"dynamodb:DescribeContributorInsights", "cloudwatch:GetInsightRuleReport"}
        assert ":table/telemetry_????-??-??\"" in reads["dynamodb:DescribeContributorInsights"]
        assert ":insight-rule/DynamoDBContributorInsights-PKT-telemetry_????-??-??-*\"" in \
            reads["cloudwatch:GetInsightRuleReport"]

    def test_off_by_default_no_widget_and_no_function(self):
        stack = Stack(App(), "S")
        tables = RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry")
        MonitoringDashboard(stack, "Dashboard").monitor(tables)
        assert custom_widgets(stack) == []
        assert WIDGET_HANDLER not in json.dumps(Template.from_stack(stack).to_json())

    def test_an_imported_rotation_gets_it_from_show_period_throttled_keys(self):
        stack = Stack(App(), "S")
        imported = RotatingTimeSeriesTables.from_table_prefix(stack, "Readings", table_prefix="readings",
                                                              period="weekly")
        MonitoringDashboard(stack, "Dashboard").show_period_throttled_keys(imported, top=25)

        template = Template.from_stack(stack)
        _id, function = widget_function(template)
        [widget] = custom_widgets(stack)
        assert widget["properties"]["params"] == {"top": 25}
        assert function["Properties"]["Environment"]["Variables"]["CDK_TS_PERIOD"] == "weekly"
        assert "readings_????-W??" in json.dumps(stack.resolve(policy_statements(template)))

    def test_one_function_per_rotation_whatever_shows_it(self):
        stack = Stack(App(), "S")
        tables = RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry", throttled_keys_insights=True)
        MonitoringDashboard(stack, "Dashboard").monitor(tables)
        MonitoringDashboard(stack, "Other").show_period_throttled_keys(tables)
        functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
        assert [f["Properties"]["Handler"] for f in functions.values()].count(WIDGET_HANDLER) == 1

    @pytest.mark.parametrize("top", [0, 101])
    def test_a_top_outside_what_the_report_takes_is_refused(self, top):
        stack = Stack(App(), "S")
        tables = RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry")
        with pytest.raises(ValidationError, match=rf"top {top} must be a whole number from 1 to 100"):
            MonitoringDashboard(stack, "Dashboard").show_period_throttled_keys(tables, top=top)

    def test_anything_but_period_tables_is_refused_naming_it(self):
        stack = Stack(App(), "S")
        log = DeviceLogTable(stack, "Log")
        with pytest.raises(TypeError, match="S/Log.* has no period tables: pass RotatingTimeSeriesTables"):
            MonitoringDashboard(stack, "Dashboard").show_period_throttled_keys(log)
