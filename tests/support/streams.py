"""A moto table with a stream, its records as Lambda delivers them, and what the archiver wrote to S3."""

from __future__ import annotations

import base64
import copy
import gzip
import io
import json
import zipfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
from botocore.config import Config

BUCKET = "archive"


def create_stream_table():
    """Table ``readings`` (pk + sk) with a NEW_AND_OLD_IMAGES stream, and bucket ``BUCKET``; inside moto.

    Returns the DynamoDB client and the stream ARN.
    """
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    created = dynamodb.create_table(
        TableName="readings",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=BUCKET)
    return dynamodb, created["TableDescription"]["LatestStreamArn"]


def stream_records(stream_arn):
    """Every record on the table's stream, as the Lambda event source mapping would deliver them."""
    # botocore sends ARN-addressed calls to an account endpoint moto does not serve; the regional one works.
    streams = boto3.client(
        "dynamodbstreams", region_name="us-east-1", config=Config(account_id_endpoint_mode="disabled")
    )
    records = []
    for shard in streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        records += streams.get_records(ShardIterator=iterator)["Records"]
    return [{**r, "eventSourceARN": stream_arn} for r in records]


def lambda_style(value):
    """A record as Lambda hands it over (and writes it into a failure record): epoch seconds, base64 binary."""
    if isinstance(value, dict):
        return {k: lambda_style(v) for k, v in value.items()}
    if isinstance(value, list):
        return [lambda_style(v) for v in value]
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def lambda_event(records, **raw_json):
    """The records as the Python runtime hands them to a handler: Lambda's JSON text (:func:`lambda_style`), parsed.

    ``raw_json`` maps a placeholder string value to the JSON text that replaces it before parsing, so a
    test can put in what only JSON text can carry (an escaped lone surrogate, ``"\\ud800"``).
    """
    text = json.dumps({"Records": lambda_style(records)})
    for placeholder, fragment in raw_json.items():
        assert json.dumps(placeholder) in text, f"placeholder {placeholder!r} is not in the records"
        text = text.replace(json.dumps(placeholder), fragment)
    return json.loads(text)


def archived_lines(s3):
    """Every JSON line in every archive object in ``BUCKET``, numbers as Decimal."""
    lines = []
    for obj in s3.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        body = s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read()
        lines += [json.loads(line, parse_float=Decimal) for line in gzip.decompress(body).decode().splitlines()]
    return lines


def spread_over_hours(records, hours):
    """Give consecutive records different creation hours (a batch a real stream would deliver over hours)."""
    shifted = copy.deepcopy(records)
    start = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)
    for record, hour in zip(shifted, hours, strict=True):
        record["dynamodb"]["ApproximateCreationDateTime"] = start + timedelta(hours=hour)
    return shifted


def consumer_function():
    """A Lambda function (moto) to map period tables' streams to; its ARN."""
    iam = boto3.client("iam")
    role = iam.create_role(RoleName="consumer", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("index.py", "def handler(event, context):\n    return {}\n")
    return boto3.client("lambda").create_function(
        FunctionName="archiver",
        Runtime="python3.12",
        Role=role,
        Handler="index.handler",
        Code={"ZipFile": code.getvalue()},
    )["FunctionArn"]
