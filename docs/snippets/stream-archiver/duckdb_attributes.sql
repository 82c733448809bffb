-- DuckDB, straight from the objects (synced locally or via httpfs)
SELECT json_extract_string(newImage, '$.Url.S')                      AS url_upper,
       json_extract_string(newImage, '$.url.S')                      AS url_lower,
       CAST(json_extract_string(newImage, '$.reading.N') AS DECIMAL(38, 10)) AS reading
FROM read_json('archive/cdc/telemetry/**/*.jsonl.gz', format = 'newline_delimited', hive_partitioning = true,
               hive_types = {'table': 'VARCHAR', 'dt': 'VARCHAR', 'hour': 'VARCHAR'})
WHERE "table" = 'telemetry_2026-03-01' AND dt = '2026-03-01';
