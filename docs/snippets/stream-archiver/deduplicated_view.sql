SELECT "eventid", "eventname", "sequencenumber", "approximatecreationdatetime", "keys", "newimage", "oldimage", "useridentity", "table", "dt", "hour"
FROM (
  SELECT a.*, row_number() OVER (PARTITION BY "table", dt, hour, eventid ORDER BY sequencenumber) AS copy
  FROM "<database>"."<table>" a
)
WHERE copy = 1
-- SELECT * FROM telemetry_archiver_deduplicated WHERE "table" = 'telemetry_2026-03-01' AND dt = '2026-03-01';
