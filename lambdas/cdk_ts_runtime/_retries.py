"""The botocore retry and timeout settings of every client the runtime creates, chosen per path.

botocore's default is retry mode ``standard`` with 3 attempts and jittered backoff of up to 20 s; a loop
of ours on top of that multiplies the waits. Each path below says why it retries as it does. A client a
user passes in is used as given. Attempts are written as ``total_max_attempts`` (the first request
included): botocore's ``max_attempts`` counts retries only, so ``max_attempts: 1`` means two requests.
"""

from __future__ import annotations

from botocore.config import Config

#: Control plane (CreateTable, UpdateTable, DeleteTable, Describe*, ListTables, exports, auto scaling,
#: event source mappings): the SDK's standard retries, 5 attempts. Throttles and ``LimitExceededException``
#: that outlast them leave the table for the next scheduled run; nothing of ours loops on top.
CONTROL_PLANE = Config(retries={"mode": "standard", "total_max_attempts": 5})

#: CloudWatch reads and metric publishing from the rotation: short timeouts and 2 attempts, so an
#: endpoint that cannot be reached (a VPC without a CloudWatch endpoint) costs seconds, not the run.
#: Right-sizing then keeps the configured tier and the next table is still created.
METRICS = Config(connect_timeout=2, read_timeout=5, retries={"mode": "standard", "total_max_attempts": 2})
