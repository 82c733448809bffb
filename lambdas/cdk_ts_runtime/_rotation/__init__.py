"""Table rotation, internal to cdk-ts's rotation function: the rotator (create, resize, reconcile), tier changes,
expiry, the run lock and report, and the contracts the construct side writes for it: ``config`` (capacity tiers,
table options, retention) and ``metrics`` (the rotation's CloudWatch metrics).

Nothing is imported here, so the construct side reads ``config`` and ``metrics`` without boto3.
"""
