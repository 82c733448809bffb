"""The local servers of ``cdk_ts.testing._engines`` behave as DynamoDB does where the code under test relies on it."""

from tests.support.waiting import wait_until_active


def test_create_table_applies_its_tags_on_each_local_server(server_dynamodb, unique_name):
    # DynamoDB's CreateTable labels the new table with its Tags (API_CreateTable.html, request parameter Tags);
    # dynalite 4.0.0 drops them unless run under cdk_ts/testing/dynalite_server.js.
    tags = [{"Key": "cdk-ts:prefix", "Value": unique_name}, {"Key": "team", "Value": "data"}]
    server_dynamodb.create_table(
        TableName=unique_name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        Tags=tags,
    )
    wait_until_active(server_dynamodb, unique_name)
    table = server_dynamodb.describe_table(TableName=unique_name)["Table"]

    listed = server_dynamodb.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"]

    assert sorted(listed, key=lambda tag: tag["Key"]) == tags
    assert "Tags" not in table
