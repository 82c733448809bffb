"""cdk_ts.testing: a local DynamoDB that throttles and refuses as DynamoDB does, for your tests.

``pip install 'cdk-ts[testing]'``. One call starts a local engine (moto_server by default; dynalite where node and
its npm package are present) and a rules proxy in front of it that answers as DynamoDB does where the engines
say yes: UPDATING windows and ``ResourceInUseException``, the account's limit of tables in transition, partition
throughput with ``throttlingReasons``, and the rest of ``RULES`` (each with its source). boto3 and any other SDK
talk to it unmodified, over HTTP, so their own retries take part.

```python
from cdk_ts.testing import local_dynamodb

with local_dynamodb(write_units_per_second=10) as ddb:
    client = ddb.client()
    ...
    assert ddb.throttles(table="readings", reason="TableWriteKeyRangeThroughputExceeded") > 0
```

With pytest, the ``local_dynamodb`` fixture (``cdk_ts.testing.pytest_plugin``, registered as a plugin when the
package is installed) gives the same, one per test, with settings from ``@pytest.mark.local_dynamodb(...)``. The
command ``cdk-ts local`` serves it in the foreground for other languages' SDKs. See docs/testing.md.
"""

from cdk_ts.testing._engines import (
    LocalServer,
    LocalServerError,
    RequestCounter,
    server_client_for,
    start_dynalite,
    start_moto_server,
)
from cdk_ts.testing._local import LocalDynamoDB, local_dynamodb, start_local_dynamodb
from cdk_ts.testing._proxy import THROTTLE_CODES, RulesProxy, start_rules_proxy
from cdk_ts.testing._registry import GUESSES, RULES, Rule, rule_named, rules_table
from cdk_ts.testing._rules import RuleError, RulesSettings, TableState

__all__ = [
    "GUESSES",
    "RULES",
    "THROTTLE_CODES",
    "LocalDynamoDB",
    "LocalServer",
    "LocalServerError",
    "RequestCounter",
    "Rule",
    "RuleError",
    "RulesProxy",
    "RulesSettings",
    "TableState",
    "local_dynamodb",
    "rule_named",
    "rules_table",
    "server_client_for",
    "start_dynalite",
    "start_local_dynamodb",
    "start_moto_server",
    "start_rules_proxy",
]
