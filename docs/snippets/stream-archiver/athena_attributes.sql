-- Athena (Trino): bracket names that are not plain identifiers or differ only in case
SELECT json_extract_scalar(newimage, '$["Url"].S')  AS url_upper,
       json_extract_scalar(newimage, '$["url"].S')  AS url_lower,
       CAST(json_extract_scalar(newimage, '$.reading.N') AS DECIMAL(38, 10)) AS reading,
       json_extract(newimage, '$.tags.L')           AS tags          -- JSON, mixed types kept
FROM telemetry_archiver_deduplicated
WHERE "table" = 'telemetry_2026-03-01' AND dt = '2026-03-01';
