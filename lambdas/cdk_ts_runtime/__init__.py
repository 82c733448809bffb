"""Runtime side of cdk-ts: Lambda handlers and the clients user code calls (stdlib + boto3 only)."""
