"""How a StreamArchiver reads its source's stream: one delivery contract, mapped by CloudFormation or by the rotation.

Whoever creates the mapping (CloudFormation for a table, the rotation function for every period table),
the archiver reads at least once, from the oldest record, a failing batch bisected and its failed
records reported, a batch that keeps failing sent to the failure destination.
"""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs

from cdk_ts._nag import acknowledge
from cdk_ts.protocols import ArchiverSource, HasTable, RotatingStreamSource
from cdk_ts_runtime._stream_consumer import StreamConsumer


def stream_delivery(
    function: lambda_.IFunction, *, batch_size: int, window: Duration, retries: int, age: Duration,
    on_failure_arn: str, filter_patterns: list[dict[str, Any]],
) -> StreamConsumer:
    """The archiver's mapping settings, the same for a table's mapping and every period table's."""
    return StreamConsumer(
        function_name=function.function_arn,
        batch_size=batch_size,
        maximum_batching_window_seconds=int(window.to_seconds()),
        starting_position="TRIM_HORIZON",
        maximum_retry_attempts=retries,
        maximum_record_age_seconds=int(age.to_seconds()),
        bisect_batch_on_function_error=True,
        report_batch_item_failures=True,
        on_failure_destination_arn=on_failure_arn,
        filter_patterns=[json.dumps(p) for p in filter_patterns],
    )


def connect_source(
    function: lambda_.Function, source: ArchiverSource, delivery: StreamConsumer, *,
    dead_letter_queue: sqs.IQueue | None, failure_bucket: s3.IBucket | None,
) -> None:
    """Map ``source``'s stream (or every period table's) to ``function`` with ``delivery``'s settings."""
    if isinstance(source, RotatingStreamSource):
        _connect_rotating(function, source, delivery, dead_letter_queue, failure_bucket)
    else:
        table = source.table if isinstance(source, HasTable) else source
        on_failure = (
            event_sources.SqsDlq(dead_letter_queue) if dead_letter_queue is not None
            else event_sources.S3OnFailureDestination(failure_bucket)
        )  # each grants the function what the destination needs
        function.add_event_source(dynamo_event_source(table, delivery, on_failure))
        acknowledge(
            function, "AwsSolutions-IAM5[Resource::*]", "dynamodb:ListStreams has no resource-level permissions"
        )


def _connect_rotating(
    function: lambda_.Function, source: RotatingStreamSource, delivery: StreamConsumer,
    dead_letter_queue: sqs.IQueue | None, failure_bucket: s3.IBucket | None,
) -> None:
    # the archiver's own role: acknowledging the stream grant's findings stays inside the archiver
    source.grant_stream_read(function, acknowledge_nag_findings=True)
    if dead_letter_queue is not None:
        dead_letter_queue.grant_send_messages(function)
    else:
        failure_bucket.grant_read_write(function)  # what S3OnFailureDestination grants
    source.add_stream_consumer(function, delivery)


def dynamo_event_source(
    table: dynamodb.ITable | dynamodb.ITableV2, delivery: StreamConsumer, on_failure: lambda_.IEventSourceDlq
) -> event_sources.DynamoEventSource:
    """The CloudFormation event source of ``table``'s stream with the settings of ``delivery``."""
    return event_sources.DynamoEventSource(
        table,
        starting_position=lambda_.StartingPosition(delivery.starting_position),
        batch_size=delivery.batch_size,
        max_batching_window=Duration.seconds(delivery.maximum_batching_window_seconds),
        bisect_batch_on_error=delivery.bisect_batch_on_function_error,
        retry_attempts=delivery.maximum_retry_attempts,
        max_record_age=Duration.seconds(delivery.maximum_record_age_seconds),
        report_batch_item_failures=delivery.report_batch_item_failures,
        on_failure=on_failure,
        filters=[{"pattern": p} for p in delivery.filter_patterns] or None,
    )
