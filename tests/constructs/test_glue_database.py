"""StreamArchiver's Glue database: an existing one by name or reference, or one created and shared per stack."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from aws_cdk import Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_glue as glue
from aws_cdk.assertions import Template

from cdk_ts import ArchiveCatalog, DeviceLogTable, StreamArchiver
from cdk_ts_runtime import _deprecations
from tests.support.glue import presto_view
from tests.support.nag import new_app

#: Glue's rule as the errors state it (cdk_ts.archive._glue_names cites the Glue and Athena pages).
GLUE_RULE = "1-255 letters, digits or '_'"


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
    with pytest.raises(ValueError, match=r"Stack/Audit: Glue table or view archive.events .* by Stack/Telemetry"):
        _archiver(stack, "Audit", glue_database="archive", glue_table_name="events")


def test_glue_database_name_still_creates_the_database_and_warns_through_the_registry():
    stack = Stack(new_app(), "Stack")
    deprecation = _deprecations.entry("cdk_ts.StreamArchiver(glue_database_name=...)")
    with pytest.warns(DeprecationWarning, match=re.escape(deprecation.message)) as caught:
        archiver = _archiver(stack, "Telemetry", glue_database_name="archive")
    assert {Path(w.filename).name for w in caught} == {Path(__file__).name}  # the line that passed it
    assert archiver.glue_database is not None
    Template.from_stack(stack).resource_count_is("AWS::Glue::Database", 1)


def test_create_without_a_name_is_refused():
    stack = Stack(new_app(), "Stack")
    with pytest.raises(ValueError, match="create_glue_database=True needs glue_database=<name>"):
        _archiver(stack, "Telemetry", create_glue_database=True)


def _database_names(template: Template) -> list[str]:
    databases = template.find_resources("AWS::Glue::Database").values()
    return sorted(d["Properties"]["DatabaseInput"]["Name"] for d in databases)


def test_names_are_written_and_exposed_in_the_lower_case_glue_stores():
    stack = Stack(new_app(), "Stack")
    archiver = _archiver(stack, "Telemetry", glue_database="Analytics", glue_table_name="DeviceChanges")
    template = Template.from_stack(stack)
    assert _glue_tables(template) == [("analytics", "devicechanges"), ("analytics", "devicechanges_deduplicated")]
    assert (archiver.glue_database_name, archiver.glue_table_name) == ("analytics", "devicechanges")
    (view,) = [t["Properties"]["TableInput"] for t in template.find_resources("AWS::Glue::Table").values()
               if t["Properties"]["TableInput"]["TableType"] == "VIRTUAL_VIEW"]
    presto = presto_view(view)
    assert presto["schema"] == "analytics" and '"analytics"."devicechanges"' in presto["originalSql"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("archive", "events"), ("ARCHIVE", "Events")),
        (("Archive", "EVENTS"), ("archive", "events")),
        (("archive", "events"), ("archive", "Events_Deduplicated")),  # a table named like the first one's view
        (("archive", "events_deduplicated"), ("Archive", "events")),  # a view named like the first one's table
    ],
    ids=["upper-second", "upper-first", "table-on-view", "view-on-table"],
)
@pytest.mark.parametrize("stacks", ["one-stack", "two-stacks"])
def test_tables_glue_would_store_under_one_name_are_refused_in_one_stack_and_across_stacks(first, second, stacks):
    app = new_app()
    one = Stack(app, "One")
    two = one if stacks == "one-stack" else Stack(app, "Two")
    _archiver(one, "Telemetry", glue_database=first[0], glue_table_name=first[1])
    refused = r"/Audit: Glue table or view archive\.\w+ is already created by One/Telemetry"
    with pytest.raises(ValueError, match=refused):
        _archiver(two, "Audit", glue_database=second[0], glue_table_name=second[1])
    # the first archiver's table and view are the only ones in the catalog
    glue_tables = _glue_tables(Template.from_stack(one)) + (
        _glue_tables(Template.from_stack(two)) if two is not one else []
    )
    assert glue_tables == [("archive", first[1].lower()), ("archive", first[1].lower() + "_deduplicated")]


def test_archivers_creating_one_database_under_names_differing_in_case_share_it_in_a_stack():
    stack = Stack(new_app(), "Stack")
    first = _archiver(stack, "Telemetry", glue_database="Archive", create_glue_database=True)
    second = _archiver(stack, "Audit", glue_database="ARCHIVE", create_glue_database=True)
    template = Template.from_stack(stack)
    assert _database_names(template) == ["archive"]
    assert first.glue_database is second.glue_database
    assert {database for database, _table in _glue_tables(template)} == {"archive"}


def test_a_database_created_in_another_stack_under_another_case_is_refused():
    app = new_app()
    _archiver(Stack(app, "One"), "Telemetry", glue_database="archive", create_glue_database=True)
    two = Stack(app, "Two")
    with pytest.raises(ValueError, match=r"Two/Audit: Glue database 'archive' is already created by One/Telemetry"):
        _archiver(two, "Audit", glue_database="Archive", create_glue_database=True)
    assert _database_names(Template.from_stack(two)) == []


def test_creating_a_database_the_app_already_defines_under_another_case_is_refused():
    stack = Stack(new_app(), "Stack")
    glue.CfnDatabase(stack, "Lake", catalog_id=stack.account,
                     database_input=glue.CfnDatabase.DatabaseInputProperty(name="Lake"))
    with pytest.raises(ValueError, match=r"Stack/Telemetry: Glue database 'lake' is already created by Stack/Lake"):
        _archiver(stack, "Telemetry", glue_database="lake", create_glue_database=True)
    assert _database_names(Template.from_stack(stack)) == ["Lake"]


def _named(name):
    return lambda stack: glue.CfnDatabase(
        stack, "Db", catalog_id=stack.account, database_input=glue.CfnDatabase.DatabaseInputProperty(name=name)
    )


@pytest.mark.parametrize(
    "database",
    [
        lambda _stack: "",
        lambda _stack: _AlphaDatabase(""),
        _named(""),
    ],
    ids=["name", "idatabase", "cfn-database"],
)
def test_an_empty_database_name_is_refused_not_skipped(database):
    stack = Stack(new_app(), "Stack")
    with pytest.raises(ValueError, match=f"glue_database is empty: Glue names are {GLUE_RULE}"):
        _archiver(stack, "Telemetry", glue_database=database(stack))
    with pytest.raises(ValueError, match="glue_database is empty"):
        _archiver(stack, "Audit", glue_database="", create_glue_database=True)
    with pytest.deprecated_call(), pytest.raises(ValueError, match="glue_database is empty"):
        _archiver(stack, "Other", glue_database_name="")
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Glue::Table", 0)
    assert _database_names(template) == ([""] if isinstance(database(Stack(new_app(), "S")), glue.CfnDatabase)
                                         else [])


def test_an_empty_table_name_is_refused_not_replaced_by_the_derived_one():
    stack = Stack(new_app(), "Stack")
    with pytest.raises(ValueError, match="glue_table_name is empty"):
        _archiver(stack, "Telemetry", glue_database="archive", glue_table_name="")
    Template.from_stack(stack).resource_count_is("AWS::Glue::Table", 0)


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"glue_database": "bad-name"}, "glue_database 'bad-name'"),
        ({"glue_database": "two words", "create_glue_database": True}, "glue_database 'two words'"),
        ({"glue_database": "caf\u00e9"}, "glue_database 'caf\u00e9'"),
        ({"glue_database": "db.name"}, "glue_database 'db.name'"),
        ({"glue_database": "a" * 256}, "glue_database 'aaaa"),
        ({"glue_database": _AlphaDatabase("lake-1")}, "glue_database 'lake-1'"),
        ({"glue_database": "archive", "glue_table_name": "Bad-Name"}, "glue_table_name 'Bad-Name'"),
        ({"glue_database": "archive", "glue_table_name": "t" * 243}, "glue_table_name 'tttt"),
        ({"glue_database": "archive", "glue_table_name": "x;drop"}, "glue_table_name 'x;drop'"),
    ],
    ids=["hyphen", "space", "non-ascii", "dot", "256", "idatabase", "table-hyphen", "table-243", "table-semicolon"],
)
def test_names_glue_or_athena_refuse_are_refused_at_synth_with_the_rule(options, parameter):
    stack = Stack(new_app(), "Stack")
    with pytest.raises(ValueError, match=f"{parameter}.* is not a name Glue and Athena accept: {GLUE_RULE}") as raised:
        _archiver(stack, "Telemetry", **options)
    assert "Stack/Telemetry" in str(raised.value)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Glue::Table", 0)
    template.resource_count_is("AWS::Glue::Database", 0)


def test_the_longest_names_glue_takes_are_accepted():
    stack = Stack(new_app(), "Stack")
    _archiver(stack, "Telemetry", glue_database="D" * 255, create_glue_database=True, glue_table_name="T" * 242)
    template = Template.from_stack(stack)
    assert _database_names(template) == ["d" * 255]
    assert _glue_tables(template) == [("d" * 255, "t" * 242), ("d" * 255, "t" * 242 + "_deduplicated")]


def test_a_derived_table_name_too_long_for_glue_is_refused_naming_the_construct_id():
    stack = Stack(new_app(), "Stack")
    long_id = "Archiver" + "X" * 240
    with pytest.raises(ValueError, match=f"the Glue table name derived from '{long_id}'.* at most 242 here"):
        _archiver(stack, long_id, glue_database="archive")


def test_archive_catalog_used_alone_refuses_bad_names_and_lower_cases_good_ones():
    from aws_cdk import aws_s3 as s3

    stack = Stack(new_app(), "Stack")
    bucket = s3.Bucket(stack, "Bucket")
    with pytest.raises(ValueError, match="Stack/Bad: database_name 'my-db' is not a name Glue and Athena accept"):
        ArchiveCatalog(stack, "Bad", bucket=bucket, prefix="p/", database_name="my-db", table_name="t")
    catalog = ArchiveCatalog(stack, "Good", bucket=bucket, prefix="p/", database_name="Lake", table_name="Events")
    assert (catalog.database_name, catalog.table_name) == ("lake", "events")
    assert _glue_tables(Template.from_stack(stack)) == [("lake", "events"), ("lake", "events_deduplicated")]
