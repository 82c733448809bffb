"""The Glue database StreamArchivers of one stack share, and the table names no two archivers may share."""

from __future__ import annotations

from aws_cdk import Token
from aws_cdk import aws_glue as glue
from constructs import Construct

from cdk_ts._lookups import path_of, stack_of
from cdk_ts.archive._glue_names import VIEW_SUFFIX
from cdk_ts.archive.base import StreamArchiverBase
from cdk_ts_runtime._errors import ValidationError


def cfn_database(database: object) -> glue.CfnDatabase | None:
    """``database`` when it is a ``CfnDatabase`` of the app (the catalog then depends on it), else None."""
    return database if isinstance(database, glue.CfnDatabase) else None


def cfn_database_name(database: glue.CfnDatabase) -> str | None:
    """The name a ``CfnDatabase`` was given, when its input is a literal property object."""
    database_input = database.database_input
    return database_input.name if isinstance(database_input, glue.CfnDatabase.DatabaseInputProperty) else None


def shared_glue_database(archiver: StreamArchiverBase, name: str) -> glue.CfnDatabase:
    """The stack's database of this name, created by the first archiver asking for it (under its own ID).

    ``name`` is the stored (lower-case) name; a database of the app whose name differs only in case is
    the same database to Glue, so another archiver's is shared within its stack and anything else refused.
    """
    databases = (getattr(other, "glue_database", None) for other in _archivers(archiver))  # imported: none
    shared = {id(database) for database in databases if database is not None}
    for database in _cfn_databases(archiver):
        if cfn_database_name(database).lower() != name:
            continue
        if id(database) in shared and stack_of(database) is stack_of(archiver):
            return database
        where = "in another stack" if stack_of(database) is not stack_of(archiver) else "in this stack"
        raise ValidationError(
            f"{path_of(archiver)}: Glue database {name!r} is already created by {path_of(database)} {where} "
            f"(Glue stores names in lower case); pass glue_database={name!r} without create_glue_database here"
        )
    return glue.CfnDatabase(
        archiver,
        "GlueDatabase",
        catalog_id=stack_of(archiver).account,
        database_input=glue.CfnDatabase.DatabaseInputProperty(
            name=name, description="DynamoDB stream archive (cdk-ts StreamArchiver)"
        ),
    )


def check_unique_glue_table(archiver: StreamArchiverBase, database: str, table: str) -> None:
    """Two archivers cannot put a table or view of the same name, as Glue stores it, into one Glue database.

    Names are compared in the lower-case form Glue keeps, and each archiver's view counts too: a table
    ``x_deduplicated`` takes the name of table ``x``'s view. Imported archivers create nothing and never clash.
    """
    ours = {table, table + VIEW_SUFFIX}
    for other in _archivers(archiver):
        if getattr(other, "glue_table", None) is None or other.glue_database_name != database:
            continue
        clash = ours & {other.glue_table_name, f"{other.glue_table_name}{VIEW_SUFFIX}"}
        if clash:
            raise ValidationError(
                f"{path_of(archiver)}: Glue table or view {database}.{min(clash)} is already created by "
                f"{path_of(other)} (Glue compares names in lower case); pass glue_table_name= to one of them"
            )


def _cfn_databases(scope: Construct) -> list[glue.CfnDatabase]:
    """Every Glue database resource of the app with a literal name."""
    return [
        c for c in scope.node.root.node.find_all()
        if isinstance(c, glue.CfnDatabase) and isinstance(cfn_database_name(c), str)
        and not Token.is_unresolved(cfn_database_name(c))
    ]


def _archivers(scope: Construct) -> list[StreamArchiverBase]:
    return [c for c in scope.node.root.node.find_all() if isinstance(c, StreamArchiverBase) and c is not scope]
