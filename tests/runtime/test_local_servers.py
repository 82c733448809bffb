def test_each_local_server_answers_dynamodb_calls(server_dynamodb, unique_name):
    server_dynamodb.create_table(
        TableName=unique_name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    server_dynamodb.get_waiter("table_exists").wait(TableName=unique_name, WaiterConfig={"Delay": 0.1})
    server_dynamodb.put_item(TableName=unique_name, Item={"pk": {"S": "a"}})
    assert server_dynamodb.get_item(TableName=unique_name, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
