import pytest


@pytest.mark.local_dynamodb(write_units_per_second=10, update_seconds=60)
def test_something(local_dynamodb):
    local_dynamodb.client().list_tables()
