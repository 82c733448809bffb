"""RotatingTimeSeriesTables runs single-flight through a lock table; reserved concurrency is an opt-in only."""

from __future__ import annotations

import fnmatch

import pytest
from aws_cdk import Stack
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Template

from cdk_ts.rotation.tables import RotatingTimeSeriesTables
from cdk_ts_runtime.periods import RotationPeriod
from cdk_ts_runtime.rotation.lock import LOCK_EXPIRY_ATTRIBUTE, LOCK_KEY, LOCK_TABLE_ENV
from tests.support.iam import policy_statements
from tests.support.nag import new_app
from tests.support.rotating_tables import build, rotation_config, rotation_function


def lock_resource(stack, tables):
    """The lock table's resource in the synthesized template (found through the construct, not a logical ID)."""
    return Template.from_stack(stack).to_json()["Resources"][stack.get_logical_id(tables.lock_table.node.default_child)]


class TestLockTable:
    def test_is_on_demand_keyed_by_the_lock_id_with_ttl_on_the_expiry_and_pitr(self):
        _app, stack, tables = build()
        props = lock_resource(stack, tables)["Properties"]
        assert props["KeySchema"] == [{"AttributeName": LOCK_KEY, "KeyType": "HASH"}]
        assert props["AttributeDefinitions"] == [{"AttributeName": LOCK_KEY, "AttributeType": "S"}]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["TimeToLiveSpecification"] == {"AttributeName": LOCK_EXPIRY_ATTRIBUTE, "Enabled": True}
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}

    def test_holds_no_data_so_it_is_removed_with_the_stack(self):
        _app, stack, tables = build()
        lock = lock_resource(stack, tables)
        assert (lock["DeletionPolicy"], lock["UpdateReplacePolicy"]) == ("Delete", "Delete")

    @pytest.mark.parametrize("period", list(RotationPeriod))
    def test_its_name_is_generated_so_it_never_parses_as_a_period_table(self, period):
        # CloudFormation names it {stack}-{logical ID}-{random}: letters, digits and hyphens, never "_"
        _app, stack, tables = build(period=period, retain_periods=3)
        props = lock_resource(stack, tables)["Properties"]
        assert "TableName" not in props
        generated_like = f"{stack.stack_name}-{stack.get_logical_id(tables.lock_table.node.default_child)}-1A2B3C4D5E6F"
        assert not fnmatch.fnmatchcase(generated_like, tables.table_name_pattern)

    def test_uses_the_period_tables_customer_managed_key(self):
        stack = Stack(new_app(), "Test")
        key = kms.Key(stack, "Key", enable_key_rotation=True)
        tables = RotatingTimeSeriesTables(stack, "T", table_prefix="telemetry", encryption_key=key, retain_periods=3)
        lock = lock_resource(stack, tables)
        assert lock["Properties"]["SSESpecification"] == {
            "SSEEnabled": True, "SSEType": "KMS", "KMSMasterKeyId": stack.resolve(key.key_arn)
        }

    def test_follows_point_in_time_recovery_off(self):
        _app, stack, tables = build(point_in_time_recovery=False, retain_periods=3)
        lock = lock_resource(stack, tables)
        assert lock["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": False}


class TestRotationFunctionAndTheLock:
    def test_the_function_gets_the_lock_tables_name_in_its_environment(self):
        _app, stack, tables = build()
        env = rotation_config(Template.from_stack(stack))
        assert env[LOCK_TABLE_ENV] == stack.resolve(tables.lock_table.table_name)

    def test_the_function_may_put_delete_and_get_items_of_the_lock_table_and_nothing_else_there(self):
        _app, stack, tables = build()
        lock_arn = stack.resolve(tables.lock_table.table_arn)
        on_lock = [s for s in policy_statements(Template.from_stack(stack)) if s["Resource"] == lock_arn]
        assert len(on_lock) == 1
        assert sorted(on_lock[0]["Action"]) == ["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem"]
        assert "Condition" not in on_lock[0]


class TestReservedConcurrency:
    def test_is_not_reserved_by_default(self):
        # a reservation fails to deploy in new accounts (quota 10 or 50, Lambda keeps 100 unreserved)
        _app, stack, _tables = build()
        assert "ReservedConcurrentExecutions" not in rotation_function(Template.from_stack(stack))

    def test_is_reserved_when_asked(self):
        _app, stack, _tables = build(reserved_concurrent_executions=1)
        assert rotation_function(Template.from_stack(stack))["ReservedConcurrentExecutions"] == 1

    @pytest.mark.parametrize("value", [0, -1, 1.5, True])
    def test_anything_but_a_whole_number_of_at_least_one_is_refused(self, value):
        with pytest.raises(ValueError, match=rf"Test/Telemetry: reserved_concurrent_executions {value!r} must be a "):
            build(reserved_concurrent_executions=value)
