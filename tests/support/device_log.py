"""The device log table of the data model, created on a DynamoDB client (moto or a local server)."""

from __future__ import annotations

from tests.support.waiting import wait_until_active


def create_device_log_table(client, name, *, capacity=None):
    """The model's table: base keys plus GSI1 (Operator, Date) and sparse GSI2 (EscalatedTo, State#Date).

    On-demand, or provisioned with ``capacity`` read and write units on the table and on each index.
    """
    units = None if capacity is None else {"ReadCapacityUnits": capacity, "WriteCapacityUnits": capacity}
    strings = ["DeviceID", "State#Date", "Operator", "Date", "EscalatedTo"]
    client.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "DeviceID", "KeyType": "HASH"},
            {"AttributeName": "State#Date", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in strings],
        GlobalSecondaryIndexes=[
            {
                "IndexName": index,
                "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
                **({} if units is None else {"ProvisionedThroughput": units}),
            }
            for index, pk, sk in (("GSI1", "Operator", "Date"), ("GSI2", "EscalatedTo", "State#Date"))
        ],
        **({"BillingMode": "PAY_PER_REQUEST"} if units is None
           else {"BillingMode": "PROVISIONED", "ProvisionedThroughput": units}),
    )
    wait_until_active(client, name)
