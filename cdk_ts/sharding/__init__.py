"""Sharding, construct side: the metadata table behind dynamic write sharding (``cdk_ts_runtime.ShardedTable``).

The public names are here: ``ShardMetadataTable`` (creates the metadata table for a main table's hot keys) and
``ShardMetadataTableBase`` (what any metadata table can do: grants on both tables, ``bind``, metrics;
``ShardMetadataTable.from_table_name`` returns one for a metadata table another stack or app deployed, from
``imported``). The runtime side is ``cdk_ts_runtime._sharding``.
"""

from __future__ import annotations

from cdk_ts.sharding.base import ShardMetadataTableBase
from cdk_ts.sharding.table import ShardMetadataTable

__all__ = ["ShardMetadataTable", "ShardMetadataTableBase"]
