import glob
import json

import duckdb

files = sorted(key for manifest in glob.glob("parquet/dynamodb/_manifests/**/*.json", recursive=True)
               for key in json.load(open(manifest))["files"])
rows = duckdb.sql(f"""
    SELECT device_id, sk, v, sequencenumber, eventname, "table", dt, hour
    FROM read_parquet({files!r}, hive_partitioning = true,
                      hive_types = {{'table': 'VARCHAR', 'dt': 'VARCHAR', 'hour': 'VARCHAR', 'gen': 'VARCHAR'}})
    WHERE device_id = 'd'
    ORDER BY length(sequencenumber), sequencenumber
""").fetchall()
