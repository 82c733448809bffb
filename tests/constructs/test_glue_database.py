"""StreamArchiver's Glue database: an existing one by name or reference, or one created and shared per stack."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_glue as glue
from aws_cdk.assertions import Template

from cdk_ts import DeviceLogTable, StreamArchiver
from tests.support.nag import new_app


def _archiver(stack: Stack, name: str, **glue_options) -> StreamArchiver:
    log = DeviceLogTable(stack, f"{name}Log", stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    return StreamArchiver(stack, name, source=log, **glue_options)


def _glue_tables(template: Template) -> list[tuple[str, str]]:
    return sorted(
        (t["Properties"]["DatabaseName"], t["Properties"]["TableInput"]["Name"])
        for t in template.find_resources("AWS::Glue::Table").values()
    )


def test_two_archivers_creating_the_same_database_in_a_stack_share_one_resource():
    stack = Stack(new_app(), "Stack")
    first = _archiver(stack, "Telemetry", glue_database="archive", create_glue_database=True)
    second = _archiver(stack, "Audit", glue_database="archive", create_glue_database=True)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Glue::Database", 1)
    assert first.glue_database is second.glue_database
    # each archiver keeps its own table and view
    assert _glue_tables(template) == [
        ("archive", "audit"), ("archive", "audit_deduplicated"),
        ("archive", "telemetry"), ("archive", "telemetry_deduplicated"),
    ]


def test_a_database_created_in_another_stack_is_refused_naming_both_paths():
    app = new_app()
    _archiver(Stack(app, "One"), "Telemetry", glue_database="archive", create_glue_database=True)
    with pytest.raises(ValueError, match=r"Two/Audit: Glue database 'archive' is already created by One/Telemetry"):
        _archiver(Stack(app, "Two"), "Audit", glue_database="archive", create_glue_database=True)


def test_an_existing_database_by_name_is_used_and_not_created():
    stack = Stack(new_app(), "Stack")
    archiver = _archiver(stack, "Telemetry", glue_database="analytics")
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Glue::Database", 0)
    assert archiver.glue_database is None and archiver.glue_database_name == "analytics"
    assert _glue_tables(template) == [("analytics", "telemetry"), ("analytics", "telemetry_deduplicated")]


@dataclass
class _AlphaDatabase:
    """The part of aws_glue_alpha's IDatabase the archiver reads."""

    database_name: str


def test_an_idatabase_reference_or_a_cfn_database_is_used_by_its_name():
    stack = Stack(new_app(), "Stack")
    _archiver(stack, "Telemetry", glue_database=_AlphaDatabase("lake"))
    own = glue.CfnDatabase(stack, "Mine", catalog_id=stack.account,
                           database_input=glue.CfnDatabase.DatabaseInputProperty(name="mine"))
    _archiver(stack, "Audit", glue_database=own)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Glue::Database", 1)
    assert ("lake", "telemetry") in _glue_tables(template) and ("mine", "audit") in _glue_tables(template)


def test_two_archivers_with_the_same_table_name_in_one_database_are_refused():
    app = new_app()
    stack = Stack(app, "Stack")
    _archiver(stack, "Telemetry", glue_database="archive", glue_table_name="events")
    with pytest.raises(ValueError, match=r"Stack/Audit: Glue table archive.events .* by Stack/Telemetry"):
        _archiver(stack, "Audit", glue_database="archive", glue_table_name="events")


def test_glue_database_name_still_creates_the_database_and_warns():
    stack = Stack(new_app(), "Stack")
    with pytest.deprecated_call():
        archiver = _archiver(stack, "Telemetry", glue_database_name="archive")
    assert archiver.glue_database is not None
    Template.from_stack(stack).resource_count_is("AWS::Glue::Database", 1)


def test_create_without_a_name_is_refused():
    stack = Stack(new_app(), "Stack")
    with pytest.raises(ValueError, match="create_glue_database=True needs glue_database=<name>"):
        _archiver(stack, "Telemetry", create_glue_database=True)
