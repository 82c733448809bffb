import os

from cdk_ts_runtime import TimestreamWriter

_writer = None  # one per execution environment: its client keeps the discovered endpoint for its cache period


def handler(event, context):
    global _writer
    if _writer is None:  # the names TimestreamTable.bind(fn) set on this function
        _writer = TimestreamWriter.from_env(os.environ, dimensions=["vin", "fleet"])
    result = _writer.write(event["readings"])
    return {"ingested": result.records_ingested, "rejected": [r["reason"] for r in result.rejected]}
