"""RotatingTimeSeriesTables: schedules, IAM scope, secure defaults, grants, validation, cdk-nag."""

from __future__ import annotations

import fnmatch
import inspect
import json

import pytest
from aws_cdk import Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Annotations, Match, Template

from cdk_ts._defaults import runtime_function
from cdk_ts._nag import finding_text
from cdk_ts.buckets import access_logs_bucket, secure_bucket
from cdk_ts.rotation import PeriodTableOptions, RotatingTimeSeriesTables, RotationOptions
from cdk_ts_runtime import RotationPeriod
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG, AutoScaling, CapacityTier
from cdk_ts_runtime._table_layout import ENV_TABLE_PREFIX, TableLayout
from tests.support.iam import lambda_role, policy_statements, role_actions
from tests.support.nag import new_app, new_stack, unacknowledged_findings
from tests.support.problems import raises_problems
from tests.support.rotating_tables import build, rotation_config


def archived_rotation(stack, **props):
    """Daily tables ``telemetry_*`` retaining 7 periods, archived to a secure logged bucket, with a stream."""
    bucket = secure_bucket(stack, "Archive", server_access_logs_bucket=access_logs_bucket(stack, "AccessLogs"))
    return RotatingTimeSeriesTables(
        stack,
        "Telemetry",
        table_prefix="telemetry",
        retain_periods=7,
        archive_bucket=bucket,
        stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
        **props,
    )


@pytest.fixture(scope="module")
def archived():
    """``archived_rotation`` with a TTL attribute and a bound reader."""
    app, stack = new_stack()
    tables = archived_rotation(stack, time_to_live_attribute="expires_at")
    reader = lambda_role(stack, "Reader")
    tables.grant_read_data(reader)
    return app, stack, tables, Template.from_stack(stack)


class TestSchedules:
    def test_daily_rules_run_at_2345_and_2355_and_0015_and_hourly_reconcile(self, archived):
        template = archived[3]
        by_operation: dict[str, list[str]] = {}
        for rule in template.find_resources("AWS::Events::Rule").values():
            target = rule["Properties"]["Targets"][0]["InputTransformer"]["InputTemplate"].replace("<time>", '"t"')
            expression = rule["Properties"]["ScheduleExpression"]
            by_operation.setdefault(json.loads(target)["Operation"], []).append(expression)
        # create_new, then its retry at the missing-table alarm lead (5 minutes) before the boundary
        assert sorted(by_operation["create_new"]) == ["cron(45 23 * * ? *)", "cron(55 23 * * ? *)"]
        assert by_operation["resize_old"] == ["cron(15 0 * * ? *)"]
        assert by_operation["reconcile"] == ["rate(1 hour)"]

    def test_rules_pass_the_scheduled_time_not_the_invocation_time(self, archived):
        for rule in archived[3].find_resources("AWS::Events::Rule").values():
            target = rule["Properties"]["Targets"][0]
            assert target["InputTransformer"]["InputPathsMap"] == {"time": "$.time"}
            assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0

    @pytest.mark.parametrize(
        ("period", "create", "retry", "resize"),
        [
            ("weekly", "cron(45 23 ? * SUN *)", "cron(55 23 ? * SUN *)", "cron(15 0 ? * MON *)"),
            ("monthly", "cron(45 23 L * ? *)", "cron(55 23 L * ? *)", "cron(15 0 1 * ? *)"),
            ("quarterly", "cron(45 23 L 3,6,9,12 ? *)", "cron(55 23 L 3,6,9,12 ? *)", "cron(15 0 1 1,4,7,10 ? *)"),
            ("yearly", "cron(45 23 L 12 ? *)", "cron(55 23 L 12 ? *)", "cron(15 0 1 1 ? *)"),
        ],
    )
    def test_every_period_kind_is_scheduled_around_its_boundary(self, period, create, retry, resize):
        _app, stack, _tables = build(period=period, retain_periods=4, run_at_deploy=False)
        expressions = {
            r["Properties"]["ScheduleExpression"]
            for r in Template.from_stack(stack).find_resources("AWS::Events::Rule").values()
        }
        assert {create, retry, resize} <= expressions

    def test_lead_and_delay_are_configurable(self):
        _app, stack, _tables = build(
            create_lead=Duration.hours(2),
            missing_table_alarm_lead=Duration.minutes(30),
            resize_delay=Duration.minutes(30),
            enable_reconcile_schedule=False,
            retain_periods=3,
            run_at_deploy=False,
        )
        expressions = {
            r["Properties"]["ScheduleExpression"]
            for r in Template.from_stack(stack).find_resources("AWS::Events::Rule").values()
        }
        assert expressions == {"cron(0 22 * * ? *)", "cron(30 23 * * ? *)", "cron(30 0 * * ? *)"}


class TestRotationFunction:
    def test_runs_on_a_python_312_or_later_runtime_with_layout_and_config_in_env(self, archived):
        template = archived[3]
        function = next(
            iter(
                template.find_resources(
                    "AWS::Lambda::Function", {"Properties": {"Handler": "cdk_ts_runtime.handlers.rotation.handler"}}
                ).values()
            )
        )
        runtime = function["Properties"]["Runtime"]
        assert runtime.startswith("python3.") and int(runtime.split(".")[1]) >= 12
        env = rotation_config(template)
        assert env[ENV_TABLE_PREFIX] == "telemetry"
        config = env[ENV_ROTATION_CONFIG]
        assert "Fn::Join" in config  # the archive bucket name is a deploy-time token inside the JSON
        settings = json.loads(finding_text(archived[1], config))
        assert settings["retain_periods"] == 7
        assert settings["point_in_time_recovery"] is True
        assert settings["stream_view_type"] == "NEW_AND_OLD_IMAGES"
        assert settings["archive_bucket"].startswith("<Archive")
        assert (settings["current"]["read_capacity"], settings["current"]["write_capacity"]) == (300, 1000)

    def test_table_permissions_are_limited_to_the_prefix(self, archived):
        statements = policy_statements(archived[3])
        create = next(s for s in statements if "dynamodb:CreateTable" in s["Action"])
        assert (
            finding_text(archived[1], create["Resource"])
            == "arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/telemetry_????-??-??"
        )
        wildcard = [s for s in statements if s["Resource"] == "*"]
        wildcard_actions = {
            a for s in wildcard for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        }
        # metrics are EMF log lines: no cloudwatch:PutMetricData statement at all
        assert wildcard_actions == {"dynamodb:ListTables", "dynamodb:ListExports"}
        assert not any("cloudwatch:PutMetricData" in json.dumps(s["Action"]) for s in statements)

    def test_export_writes_only_under_the_archive_prefix(self, archived):
        statements = policy_statements(archived[3])
        put = next(s for s in statements if "s3:PutObject" in s["Action"])
        assert finding_text(archived[1], put["Resource"]).endswith("/exports/telemetry_????-??-??/*")

    def test_deploy_time_reconcile_invokes_the_rotation_function(self, archived):
        template = archived[3]
        resources = template.find_resources("Custom::CdkTsRotation")
        (resource,) = resources.values()
        functions = template.find_resources(
            "AWS::Lambda::Function", {"Properties": {"Handler": "cdk_ts_runtime.handlers.rotation.handler"}}
        )
        assert resource["Properties"]["ServiceToken"] == {"Fn::GetAtt": [next(iter(functions)), "Arn"]}

    def test_auto_scaling_adds_scoped_application_autoscaling_permissions(self):
        _app, stack, _tables = build(
            current_tier=CapacityTier.provisioned(300, 1000, AutoScaling(target_utilization=60)), retain_periods=3
        )
        statements = policy_statements(Template.from_stack(stack))
        linked_role = next(s for s in statements if s["Action"] == "iam:CreateServiceLinkedRole")
        assert linked_role["Condition"] == {
            "StringEquals": {"iam:AWSServiceName": "dynamodb.application-autoscaling.amazonaws.com"}
        }

    def test_customer_key_is_granted_to_create_tables(self):
        app, stack = new_stack()
        key = kms.Key(stack, "Key", enable_key_rotation=True)
        RotatingTimeSeriesTables(stack, "Telemetry", table_prefix="telemetry", encryption_key=key, retain_periods=3)
        statements = policy_statements(Template.from_stack(stack))
        kms_statement = next(s for s in statements if "kms:CreateGrant" in s["Action"])
        assert kms_statement["Resource"] == {"Fn::GetAtt": [stack.get_logical_id(key.node.default_child), "Arn"]}


class TestGrants:
    def test_read_grant_covers_every_period_table_and_index(self, archived):
        _app, stack, _tables, template = archived
        reader_role = stack.resolve(stack.node.find_child("Reader").role_name)
        (policy,) = template.find_resources("AWS::IAM::Policy", {"Properties": {"Roles": [reader_role]}}).values()
        (read,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:BatchGetItem"} <= set(read["Action"])
        assert not {"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:DeleteTable"} & set(read["Action"])
        assert [finding_text(stack, r).rsplit(":", 1)[1] for r in read["Resource"]] == [
            "table/telemetry_????-??-??",
            "table/telemetry_????-??-??/index/*",
        ]

    def test_bind_sets_the_layout_env_vars_the_router_reads(self):
        _app, stack, tables = build(
            table_prefix="metrics",
            period="weekly",
            retain_periods=4,
            partition_key=dynamodb.Attribute(name="device", type=dynamodb.AttributeType.STRING),
        )
        function = runtime_function(
            stack, "Ingest", handler="app.handler", description="ingest", environment={}
        )
        tables.bind(function, read=True)
        template = Template.from_stack(stack)
        (ingest,) = template.find_resources(
            "AWS::Lambda::Function", {"Properties": {"Handler": "app.handler"}}
        ).values()
        layout = TableLayout.from_env(ingest["Properties"]["Environment"]["Variables"])
        assert layout == tables.layout
        assert (layout.table_prefix, layout.period.value, layout.partition_key_type) == ("metrics", "weekly", "S")
        statements = policy_statements(template)
        assert any("dynamodb:PutItem" in s["Action"] and "dynamodb:Query" in s["Action"] for s in statements)

    def test_grant_returns_an_iam_grant(self):
        _app, stack, tables = build(retain_periods=3)
        role = lambda_role(stack, "Writer")
        grant = tables.grant_write_data(role)
        assert isinstance(grant, iam.Grant)
        assert grant.success


class TestDefaultsAndValidation:
    def test_no_retention_on_a_daily_rotation_warns_about_the_table_quota(self):
        _app, stack, _tables = build()
        warnings = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("2500 tables"))
        assert len(warnings) == 1
        assert "retain_periods" in warnings[0].entry.data

    def test_monthly_rotation_without_retention_does_not_warn(self):
        _app, stack, _tables = build(period="monthly")
        assert Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("2500 tables")) == []

    def test_a_schedule_problem_is_reported_with_the_others_under_the_construct_path(self):
        _app, stack = new_stack()
        with pytest.raises(ValueError) as refused:
            RotatingTimeSeriesTables(
                stack, "Both", table_prefix="both", resize_delay=Duration.seconds(30), retain_periods=1
            )
        message = str(refused.value)
        assert message.startswith(f"{stack.stack_name}/Both")
        assert "resize_delay 0:00:30 must be a whole number of minutes" in message
        assert "retain_periods 1 must be >= 2" in message
        assert stack.node.try_find_child("Both") is None

    @pytest.mark.parametrize(
        ("props", "message"),
        [
            ({"table_prefix": "bad prefix"}, "table_prefix 'bad prefix'"),
            ({"table_prefix": "x" * 250}, "a daily prefix needs 1-244 characters"),
            ({"period": "hourly"}, "period 'hourly' is not one of"),
            ({"current_tier": "zero-read"}, "read_capacity 0 must be a whole number >= 1"),
            ({"retain_periods": 1}, "retain_periods 1 must be >= 2"),
            ({"create_lead": Duration.days(1)}, "create_lead 1 day, 0:00:00 must be shorter than a daily period"),
            ({"resize_delay": Duration.seconds(30)}, "resize_delay 0:00:30 must be a whole number of minutes"),
            # zero is falsy, yet a value to refuse by name, not a missing one
            ({"resize_delay": Duration.minutes(0)}, "resize_delay 0:00:00 must be a whole number of minutes, at least"),
            ({"missing_table_alarm_lead": Duration.minutes(2)}, "missing_table_alarm_lead 0:02:00 must be at least"),
            (
                {"missing_table_alarm_lead": Duration.minutes(15)},
                "missing_table_alarm_lead 0:15:00 must be shorter than create_lead 0:15:00",
            ),
            (
                {"missing_table_alarm_lead": Duration.seconds(270)},
                "missing_table_alarm_lead 0:04:30 must be a whole number of minutes",
            ),
            ({"reconcile_every": Duration.minutes(1)}, "reconcile_every 1 minute must be at least 5 minutes"),
            (
                {"point_in_time_recovery": False, "retain_periods": 3, "archive_bucket": "B"},
                "archive_bucket needs point_in_time_recovery",
            ),
            (
                {"sort_key": dynamodb.Attribute(name="ts", type=dynamodb.AttributeType.STRING), "time_unit": "ms"},
                "time_unit 'ms' does not fit a String sort key",
            ),
        ],
    )
    def test_bad_props_fail_at_synth_with_the_value_named(self, props, message):
        if props.get("current_tier") == "zero-read":
            with pytest.raises(ValueError, match=message):
                build(current_tier=CapacityTier(read_capacity=0, write_capacity=5))
            return
        if props.get("archive_bucket") == "B":
            app, stack = new_stack()
            props["archive_bucket"] = secure_bucket(stack, "B")
            with pytest.raises(ValueError, match=message):
                RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry", **props)
            return
        with pytest.raises(ValueError, match=message):
            build(**props)

    def test_stream_consumers_need_a_stream(self):
        _app, _stack, tables = build(retain_periods=3)
        with pytest.raises(ValueError, match="has no stream: pass stream="):
            tables.grant_stream_read(lambda_role(_stack, "R"))

    def test_a_stream_consumer_of_the_wrong_type_names_the_public_class(self):
        _app, stack, tables = build(retain_periods=3, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        consumer = lambda_.Function.from_function_arn(stack, "C", "arn:aws:lambda:eu-west-1:123456789012:function:c")
        public = r"is not a cdk_ts\.StreamConsumer; build one with cdk_ts\.StreamConsumer\("
        with pytest.raises(TypeError, match=public):
            tables.add_stream_consumer(consumer, {"function_name": consumer.function_arn})


def test_the_construct_passes_cdk_nag_with_reasoned_acknowledgements_only():
    app, stack = new_stack()
    tables = archived_rotation(stack, current_tier=CapacityTier.provisioned(300, 1000, AutoScaling()))
    reader = lambda_role(stack, "Reader")
    tables.grant_read_write_data(reader, acknowledge_nag_findings=True)
    tables.grant_stream_read(reader, acknowledge_nag_findings=True)
    assert unacknowledged_findings(app) == []


def test_grants_leave_the_users_role_unacknowledged_by_default():
    app, stack, tables = build(retain_periods=7)
    reader = lambda_role(stack, "Reader")
    tables.grant_read_data(reader)
    findings = unacknowledged_findings(app)
    assert findings and all("Test/Reader/" in f for f in findings), findings


def test_every_bad_prop_is_reported_in_one_error_with_the_construct_path():
    stack = Stack(new_app(), "Test")
    raises_problems(
        lambda: RotatingTimeSeriesTables(
            stack, "Telemetry", table_prefix="bad prefix!", retain_periods=1, reconcile_every=Duration.minutes(1)
        ),
        "Test/Telemetry",
        "table_prefix 'bad prefix!'", "reconcile_every", "retain_periods",
    )


@pytest.mark.parametrize(
    ("layout", "problem"),
    [
        ({"period": "hourly"}, "period 'hourly' is not one of"),
        ({"partition_key": "device_id"}, "partition_key 'device_id' is a str, not a dynamodb.Attribute"),
    ],
)
def test_a_bad_prefix_is_reported_beside_a_bad_period_or_key_not_after_they_are_fixed(layout, problem):
    # issue 31: the layout stopped at its first problem, so the prefix showed only once the period was fixed
    stack = Stack(new_app(), "Test")
    raises_problems(
        lambda: RotatingTimeSeriesTables(stack, "Telemetry", table_prefix="bad prefix!", retain_periods=0, **layout),
        "Test/Telemetry",
        "table_prefix 'bad prefix!'", problem, "retain_periods 0",
    )


def test_bind_returns_the_grant_and_refuses_to_grant_nothing():
    _app, stack, tables = build(retain_periods=7)
    writer = runtime_function(stack, "Writer", handler="app.handler", description="w", environment={})
    assert isinstance(tables.bind(writer), iam.Grant)
    with pytest.raises(ValueError, match=r"^Test/Telemetry\.bind\(Test/Writer\): read=False and write=False"):
        tables.bind(writer, read=False, write=False)


def test_schedule_targets_retry_and_dead_letter_to_an_encrypted_queue_with_an_alarm():
    stack = Stack(new_app(), "Test")
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics")
    tables.add_default_alarms()
    template = Template.from_stack(stack)
    queue_arn = stack.resolve(tables.schedule_dead_letter_queue.queue_arn)
    rules = template.find_resources("AWS::Events::Rule")
    assert len(rules) == 4  # create_new, its retry, resize_old, reconcile
    for rule in rules.values():
        (target,) = rule["Properties"]["Targets"]
        assert target["RetryPolicy"] == {"MaximumRetryAttempts": 8, "MaximumEventAgeInSeconds": 7200}
        assert target["DeadLetterConfig"] == {"Arn": queue_arn}
    template.has_resource_properties("AWS::SQS::Queue", {"SqsManagedSseEnabled": True})
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {"MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 0},
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {"MetricName": "FuturePeriodTables", "Namespace": "cdk-ts", "Threshold": 0},
    )


def test_a_writer_bound_by_default_can_write_but_not_read():
    stack = Stack(new_app(), "Test")
    tables = RotatingTimeSeriesTables(stack, "T", table_prefix="metrics")
    writer = runtime_function(stack, "Writer", handler="app.handler", description="w", environment={})
    tables.bind(writer)
    # the writer's own policy: the rotation function also reads (its lock item)
    actions = set(role_actions(Template.from_stack(stack), stack, writer.role))
    assert {"dynamodb:PutItem", "dynamodb:BatchWriteItem", "dynamodb:DescribeTable"} <= actions
    assert not {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:Scan"} & actions


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("readings", "daily"), ("readings", "daily")),
        (("readings", "monthly"), ("readings_20", "yearly")),  # readings_20_6-01 would match both patterns
    ],
)
def test_two_rotations_whose_names_could_overlap_are_a_synth_error(first, second):
    stack = Stack(new_app(), "Test")
    RotatingTimeSeriesTables(stack, "A", table_prefix=first[0], period=first[1])
    with pytest.raises(ValueError, match="Test/B: table names .* overlap those of Test/A"):
        RotatingTimeSeriesTables(stack, "B", table_prefix=second[0], period=second[1])


def test_rotations_with_distinct_names_coexist_and_their_patterns_do_not_cover_each_other():
    stack = Stack(new_app(), "Test")
    readings = RotatingTimeSeriesTables(stack, "A", table_prefix="readings")
    eu = RotatingTimeSeriesTables(stack, "B", table_prefix="readings_eu")
    assert fnmatch.fnmatchcase("readings_2026-01-01", readings.table_name_pattern)
    assert not fnmatch.fnmatchcase("readings_eu_2026-01-01", readings.table_name_pattern)
    assert fnmatch.fnmatchcase("readings_eu_2026-01-01", eu.table_name_pattern)


class TestRightSizingPermissions:
    def test_right_sizing_grants_get_metric_statistics_and_passes_cdk_nag(self):
        app, stack, _tables = build(
            current_tier=CapacityTier.on_demand(right_size=True), previous_tier=CapacityTier.pay_per_request(),
        )
        statements = policy_statements(Template.from_stack(stack))
        assert any("cloudwatch:GetMetricStatistics" in json.dumps(s.get("Action")) for s in statements)
        assert unacknowledged_findings(app) == []

    def test_without_right_sizing_no_metric_read_is_granted(self):
        _app, stack, _tables = build()
        statements = policy_statements(Template.from_stack(stack))
        assert not any("cloudwatch:GetMetricStatistics" in json.dumps(s.get("Action")) for s in statements)

    def test_the_whole_tier_state_travels_to_the_function(self):
        _app, stack, _tables = build(
            current_tier=CapacityTier.on_demand(warm_write_units_per_second=8000, right_size=True),
            older_tier=CapacityTier.on_demand(max_read_request_units=10, table_class="STANDARD_INFREQUENT_ACCESS"),
        )
        config = json.loads(stack.resolve(rotation_config(Template.from_stack(stack))[ENV_ROTATION_CONFIG]))
        assert config["current"]["warm_write_units_per_second"] == 8000
        assert config["current"]["right_sizing"] == {"headroom": 1.3, "floor": 1, "ceiling": 40000}
        assert config["older"]["table_class"] == "STANDARD_INFREQUENT_ACCESS"


def test_a_refused_rotation_leaves_nothing_behind_for_the_next_one():
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match="Test/Bad: reconcile_every 1 minute must be at least 5 minutes"):
        RotatingTimeSeriesTables(stack, "Bad", table_prefix="bad", reconcile_every=Duration.minutes(1))
    assert stack.node.try_find_child("Bad") is None
    good = RotatingTimeSeriesTables(stack, "Good", table_prefix="good")
    assert good.table_prefix == "good"


def test_the_layout_keywords_reach_the_layout():
    stack = Stack(new_app(), "Test")
    tables = RotatingTimeSeriesTables(
        stack, "Metrics", table_prefix="metrics", period="weekly",
        sort_key=dynamodb.Attribute(name="at", type=dynamodb.AttributeType.NUMBER), time_unit="s",
    )
    assert (tables.period, tables.layout.sort_key, tables.layout.time_unit) == (RotationPeriod.WEEKLY, "at", "s")
    assert (tables.layout.partition_key, tables.layout.partition_key_type) == ("pk", "N")


def test_a_lead_longer_than_the_period_is_refused_before_anything_is_made():
    stack = Stack(new_app(), "Test")
    with pytest.raises(ValueError, match=r"create_lead 2 days, 0:00:00 must be shorter than a daily period"):
        RotatingTimeSeriesTables(stack, "Bad", table_prefix="bad", create_lead=Duration.days(2))
    assert stack.node.try_find_child("Bad") is None


def test_every_rotation_keyword_is_typed_and_has_the_default_the_constructor_uses():
    parameters = inspect.signature(RotatingTimeSeriesTables.__init__).parameters
    defaults = {name: p.default for name, p in parameters.items() if p.default is not p.empty}
    # the typed dict of the keywords names exactly the constructor's optional keywords
    assert set(RotationOptions.__annotations__) == set(defaults)
    assert set(PeriodTableOptions.__annotations__) < set(defaults)
    # a keyword left out behaves as its default given explicitly
    _app, implicit, _tables = build()
    _app, explicit, _tables = build(**defaults)
    assert Template.from_stack(implicit).to_json() == Template.from_stack(explicit).to_json()
