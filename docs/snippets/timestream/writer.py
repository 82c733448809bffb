import os
from datetime import UTC, datetime, timedelta

from cdk_ts_runtime import TimestreamWriter, build_query

# the names fleet.bind(ingest_fn) set; boto3 finds the ingestion endpoint (DescribeEndpoints) at the first write
writer = TimestreamWriter.from_env(os.environ, dimensions=["vin", "fleet"])
t1 = datetime.now(UTC)
t0 = t1 - timedelta(hours=1)
events = [{"vin": "1FTFW1E50PFA00001", "fleet": "north", "time": t1, "speed_kmh": 88.5, "engine_on": True}]
result = writer.write(events)          # result.records_ingested, result.rejected (event + reason)
assert result.records_ingested == 1 and not result.rejected
sql = build_query(writer.database_name, writer.table_name, start=t0, end=t1,
                  partition_key="vin", partition_value="1FTFW1E50PFA00001")
