"""The raw archive layer (gzip JSON Lines, Hive-partitioned) as DuckDB reads it: the raw Glue table's equivalent.

The sample's compaction step and the project's tests read the raw layer through this one view.
"""

from __future__ import annotations

from pathlib import Path


def create_raw_view(connection, root: Path, name: str = "stream_archive") -> None:
    """The raw Glue table's DuckDB equivalent over JSON Lines under ``root``: its string columns (lower-case
    names) and the three partitions."""
    connection.execute(f"""
        CREATE VIEW {name} AS
        SELECT eventID AS eventid, eventName AS eventname, sequenceNumber AS sequencenumber,
               approximateCreationDateTime AS approximatecreationdatetime, keys, newImage AS newimage,
               oldImage AS oldimage, userIdentity AS useridentity, "table", dt, hour
        FROM read_json('{root}/**/*.jsonl.gz', format = 'newline_delimited', hive_partitioning = true,
                       hive_types = {{'table': 'VARCHAR', 'dt': 'VARCHAR', 'hour': 'VARCHAR'}},
                       columns = {{eventID: 'VARCHAR', eventName: 'VARCHAR', sequenceNumber: 'VARCHAR',
                                   approximateCreationDateTime: 'VARCHAR', keys: 'VARCHAR', newImage: 'VARCHAR',
                                   oldImage: 'VARCHAR', userIdentity: 'VARCHAR'}})
    """)
