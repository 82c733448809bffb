"""The Firehose side of IcebergTableSink, played locally: Kinesis-form changes in, a pyiceberg table written.

No emulator runs Kinesis Data Streams for DynamoDB or Firehose's Iceberg destination, so this harness
builds the inputs as the services document them and applies the transformation's answers the way the
Firehose developer guide says Firehose does, on a real Iceberg table (pyiceberg's SQL catalog):

* a DynamoDB change as Kinesis carries it: ``awsRegion``, ``eventID``, ``eventName``, ``userIdentity``,
  ``recordFormat: application/json``, ``tableName``, ``dynamodb`` {``ApproximateCreationDateTime`` (ms),
  ``Keys``, ``NewImage``, ``OldImage``, ``SizeBytes``}, ``eventSource: aws:dynamodb`` (the schema Powertools
  for AWS Lambda validates, ``DynamoDBStreamToKinesisRecord``, and the DynamoDB developer guide's
  "Using Kinesis Data Streams to capture changes to DynamoDB");
* Firehose's transformation input for a Kinesis source: ``invocationId``, ``deliveryStreamArn``,
  ``sourceKinesisStreamArn``, ``region`` and ``records`` with ``recordId``, ``approximateArrivalTimestamp``,
  ``data`` (base64) and ``kinesisRecordMetadata`` (Firehose developer guide, "Transform source data");
* the answers applied per ``otfMetadata.operation`` with the table's unique keys: ``insert`` appends,
  ``update`` replaces the row with the same unique keys (inserts it when there is none), ``delete`` removes
  it ("Deliver data to Apache Iceberg Tables"; "Route incoming records to different Iceberg tables").
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import pyarrow as pa
from pyiceberg.expressions import And, EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (
    BooleanType,
    DecimalType,
    DoubleType,
    LongType,
    NestedField,
    StringType,
    TimestamptzType,
)

from bench.firehose_sink import kinesis_change as bench_kinesis_change
from tests.support.streams import lambda_style

_TYPES = {"string": StringType(), "long": LongType(), "double": DoubleType(), "boolean": BooleanType(),
          "timestamptz": TimestamptzType()}


def kinesis_change(stream_record: Mapping[str, Any]) -> dict[str, Any]:
    """A DynamoDB Streams record (GetRecords form) as DynamoDB writes the same change to Kinesis Data Streams."""
    return bench_kinesis_change(lambda_style(dict(stream_record)))


def firehose_event(changes: Iterable[Mapping[str, Any]], *, sequences: Iterable[str] | None = None) -> dict:
    """Firehose's transformation event for Kinesis records carrying ``changes`` (ids ``r0``, ``r1``...)."""
    changes = list(changes)
    sequences = list(sequences) if sequences is not None else [f"{49_600_000 + i:056d}" for i in range(len(changes))]
    return {
        "invocationId": "invocation-1",
        "deliveryStreamArn": "arn:aws:firehose:us-east-1:123456789012:deliverystream/sink",
        "sourceKinesisStreamArn": "arn:aws:kinesis:us-east-1:123456789012:stream/changes",
        "region": "us-east-1",
        "records": [{
            "recordId": f"r{i}",
            "approximateArrivalTimestamp": 1_772_400_000_000 + i,
            "data": base64.b64encode(json.dumps(change).encode()).decode(),
            "kinesisRecordMetadata": {
                "sequenceNumber": sequence, "subsequenceNumber": 0, "partitionKey": "pk",
                "shardId": "shardId-000000000000", "approximateArrivalTimestamp": 1_772_400_000_000 + i,
            },
        } for i, (change, sequence) in enumerate(zip(changes, sequences, strict=True))],
    }


def iceberg_schema(fields: Iterable[tuple[str, str, bool]]) -> Schema:
    """A pyiceberg schema from ``(name, Iceberg type, required)`` fields, as the sink's table declares them."""
    nested = []
    for field_id, (name, kind, required) in enumerate(fields, start=1):
        if kind.startswith("decimal("):
            precision, scale = (int(n) for n in kind[len("decimal("):-1].split(","))
            type_ = DecimalType(precision, scale)
        else:
            type_ = _TYPES[kind]
        nested.append(NestedField(field_id, name, type_, required=required))
    return Schema(*nested)


def create_table(catalog, identifier: str, fields, partitions: list[str]):
    """The Iceberg table (format v2, as Firehose requires) with identity partitions on ``partitions``."""
    schema = iceberg_schema(fields)
    spec = PartitionSpec(*[
        PartitionField(source_id=schema.find_field(name).field_id, field_id=1000 + i, transform=IdentityTransform(),
                       name=name)
        for i, name in enumerate(partitions)
    ])
    namespace = identifier.split(".")[0]
    if (namespace,) not in catalog.list_namespaces():
        catalog.create_namespace(namespace)
    return catalog.create_table(identifier, schema=schema, partition_spec=spec,
                                properties={"format-version": "2"})


def apply_answers(table, answers: Mapping[str, Any], unique_keys: list[str]) -> None:
    """Apply a transformation's answers to ``table`` as Firehose does: ``Ok`` rows by operation, in order."""
    schema = table.schema().as_arrow()
    for answer in answers["records"]:
        if answer["result"] != "Ok":
            continue
        row = json.loads(base64.b64decode(answer["data"]), parse_float=Decimal)
        action = answer["metadata"]["otfMetadata"]["operation"]
        if action in ("update", "delete"):
            table.delete(delete_filter=_same_keys(row, unique_keys))
        if action in ("insert", "update"):
            table.append(_arrow_row(row, schema))


def _same_keys(row: Mapping[str, Any], keys: list[str]):
    conditions = [EqualTo(key, row[key]) for key in keys]
    return conditions[0] if len(conditions) == 1 else And(*conditions)


def _arrow_row(row: Mapping[str, Any], schema: pa.Schema) -> pa.Table:
    columns = []
    for field in schema:
        value = row.get(field.name)
        if pa.types.is_timestamp(field.type):
            columns.append(pa.array([value], pa.int64()).cast(field.type))
        elif pa.types.is_floating(field.type) and value is not None:
            columns.append(pa.array([float(value)], field.type))  # read as Decimal to keep decimals exact
        else:
            columns.append(pa.array([value], field.type))
    return pa.Table.from_arrays(columns, schema=schema)

