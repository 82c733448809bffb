import os

from cdk_ts_runtime import TimestreamWriter

_writer = None  # one per execution environment: it asks for the endpoint again only when the endpoint's TTL ends


def handler(event, context):
    global _writer
    if _writer is None:  # the names TimestreamTable.bind(fn) set on this function
        _writer = TimestreamWriter.from_env(os.environ, dimensions=["vin", "fleet"])
    result = _writer.write(event["readings"])
    return {"ingested": result.records_ingested, "rejected": [r["reason"] for r in result.rejected]}
