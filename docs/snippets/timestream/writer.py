from datetime import UTC, datetime, timedelta

import boto3

from cdk_ts_runtime import TimestreamWriter, build_query

endpoint = boto3.client("timestream-write").describe_endpoints()["Endpoints"][0]["Address"]
writer = TimestreamWriter("fleet", "telemetry", dimensions=["vin", "fleet"],
                          client=boto3.client("timestream-write", endpoint_url=f"https://{endpoint}"))
t1 = datetime.now(UTC)
t0 = t1 - timedelta(hours=1)
events = [{"vin": "1FTFW1E50PFA00001", "fleet": "north", "time": t1, "speed_kmh": 88.5, "engine_on": True}]
result = writer.write(events)          # result.records_ingested, result.rejected (event + reason)
assert result.records_ingested == 1 and not result.rejected
sql = build_query("fleet", "telemetry", start=t0, end=t1, partition_key="vin", partition_value="1FTFW1E50PFA00001")
