"""Glue views in Athena's own format, written once for the raw layer's and the compacted layer's views."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence

from aws_cdk import aws_glue as glue
from constructs import Construct

from cdk_ts._lookups import stack_of

#: Glue column types as Presto (Athena's view engine) spells them.
_PRESTO_TYPES = {"string": "varchar", "bigint": "bigint", "double": "double", "boolean": "boolean",
                 "timestamp": "timestamp"}


def presto_view(
    scope: Construct, construct_id: str, *, database_name: str, name: str, sql: str,
    columns: Sequence[tuple[str, str]], description: str,
) -> glue.CfnTable:
    """A Glue ``VIRTUAL_VIEW`` in Athena's own format (Presto view JSON, base64, in ``ViewOriginalText``).

    :param columns: ``(name, Glue type)`` of every column the view returns, in order.
    """
    presto = {
        "originalSql": sql,
        "catalog": "awsdatacatalog",
        "schema": database_name,
        "columns": [{"name": n, "type": _PRESTO_TYPES.get(t, t)} for n, t in columns],
    }
    encoded = base64.b64encode(json.dumps(presto).encode()).decode()
    return glue.CfnTable(
        scope,
        construct_id,
        catalog_id=stack_of(scope).account,
        database_name=database_name,
        table_input=glue.CfnTable.TableInputProperty(
            name=name,
            description=description,
            table_type="VIRTUAL_VIEW",
            parameters={"presto_view": "true", "comment": "Presto View"},
            view_original_text=f"/* Presto View: {encoded} */",
            view_expanded_text="/* Presto View */",
            partition_keys=[],
            storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
                columns=[glue.CfnTable.ColumnProperty(name=n, type=t) for n, t in columns],
                serde_info=glue.CfnTable.SerdeInfoProperty(),
            ),
        ),
    )
