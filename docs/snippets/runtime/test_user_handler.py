import os
from unittest import mock

import boto3
from handler import handler  # src/ingest/handler.py
from moto import mock_aws

from cdk_ts_runtime import TableLayout

FAKE_AWS = {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def test_handler_writes_a_reading_to_the_days_table():
    layout = TableLayout(table_prefix="readings")  # what RotatingTimeSeriesTables(table_prefix="readings") binds
    with mock.patch.dict(os.environ, {**FAKE_AWS, **layout.to_env()}), mock_aws():
        key_schema, attributes = layout.key_schema()  # pk Number, sk Number (epoch ms)
        boto3.client("dynamodb").create_table(
            TableName="readings_2026-03-01", KeySchema=key_schema, AttributeDefinitions=attributes,
            BillingMode="PAY_PER_REQUEST",
        )
        result = handler({"device_id": 7, "time": "2026-03-01T12:00:00+00:00", "temperature_c": "21.5"}, None)
    assert result == {"table": "readings_2026-03-01", "items": ["21.5"]}


if __name__ == "__main__":
    test_handler_writes_a_reading_to_the_days_table()
