"""The sample app's ingest function: its own Lambda code, with cdk_ts_runtime from the RuntimeLayer."""
