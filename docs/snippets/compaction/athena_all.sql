SELECT device_id, ts, temperature_c, humidity_pct
FROM telemetry_archiver_all
WHERE "table" = 'telemetry_2026-03-01' AND dt = '2026-03-01' AND device_id = 42
ORDER BY ts;
-- an attribute without a column: from the image, as in the raw layer
SELECT json_extract_scalar(newimage, '$["firmware"].S') AS firmware FROM telemetry_archiver_all
WHERE "table" = 'telemetry_2026-03-01' AND dt = '2026-03-01';
