"""Tables behind the rules proxy for throughput tests: created ACTIVE, with optional GSIs, and items of a size."""

from __future__ import annotations


def create_active(proxy, ddb, name: str, *, billing: str = "PAY_PER_REQUEST", rcu: int = 100, wcu: int = 100,
                  indexes: list[dict] | None = None, **extra) -> str:
    """Create ``name`` (``pk`` hash, ``sk`` range, strings) through ``proxy`` and move its clock past CREATING.

    ``indexes``: GSIs as ``{"name", "key", "projection"?, "rcu"?, "wcu"?}``, each on one string hash key.
    """
    attributes = {"pk", "sk"} | {index["key"] for index in indexes or []}
    params = {
        "TableName": name,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in sorted(attributes)],
        "BillingMode": billing,
        **extra,
    }
    if billing == "PROVISIONED":
        params["ProvisionedThroughput"] = {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu}
    if indexes:
        params["GlobalSecondaryIndexes"] = [_index(index, billing) for index in indexes]
    ddb.create_table(**params)
    proxy.advance(proxy.settings.create_seconds)
    return name


def _index(index: dict, billing: str) -> dict:
    spec = {
        "IndexName": index["name"],
        "KeySchema": [{"AttributeName": index["key"], "KeyType": "HASH"}],
        "Projection": {"ProjectionType": index.get("projection", "ALL")},
    }
    if billing == "PROVISIONED":
        spec["ProvisionedThroughput"] = {"ReadCapacityUnits": index.get("rcu", 100),
                                         "WriteCapacityUnits": index.get("wcu", 100)}
    return spec


def item(pk: str, sk: str = "s", *, size: int = 0, **strings: str) -> dict:
    """An item with key ``pk``/``sk``, string attributes ``strings`` and, if ``size``, a ``v`` of ``size`` bytes."""
    value = {"pk": {"S": pk}, "sk": {"S": sk}, **{k: {"S": v} for k, v in strings.items()}}
    if size:
        value["v"] = {"S": "x" * size}
    return value


def stored_keys(ddb, name: str) -> list[tuple[str, str]]:
    """Every (pk, sk) the table holds, sorted (a Scan: the rules proxy does not throttle scans)."""
    return sorted((i["pk"]["S"], i["sk"]["S"]) for i in ddb.scan(TableName=name, ConsistentRead=True)["Items"])
