from cdk_ts.testing import local_dynamodb

with local_dynamodb(write_units_per_second=10, update_seconds=60) as ddb:
    client = ddb.client()                 # or any SDK with endpoint_url=ddb.endpoint_url
    ...
    ddb.advance(60)                       # the table is ACTIVE again (the clock is real until a test moves it)
    ddb.throttles(table="readings", reason="TableWriteKeyRangeThroughputExceeded")   # how many, no log parsing
    ddb.refusals(code="ResourceInUseException")
