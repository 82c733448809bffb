"""Event source mappings from period-table streams to a consumer function (used by the rotation function).

A rotating family of tables gets a new stream with every new table, so the mapping cannot be
declared in CloudFormation: the rotation function attaches the consumer when it creates a table
and detaches it before the table is deleted. The settings travel as JSON in :data:`STREAM_CONSUMER_ENV`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk_ts_runtime._inputs import json_object_env, whole
from cdk_ts_runtime.errors import ValidationError

STREAM_CONSUMER_ENV = "CDK_TS_STREAM_CONSUMER"


@dataclass(frozen=True)
class StreamConsumer:
    """The consumer function and the mapping settings every period table's stream gets.

    The fields are CreateEventSourceMapping's settings (see :meth:`mapping_request`).

    :param function_name: the consumer function's name or ARN.
    :param batch_size: most records per invocation (1-10,000).
        Default: 1000.
    :param maximum_batching_window_seconds: how long records are gathered before an invocation (0-300).
        Default: 60.
    :param starting_position: where a new mapping starts reading.
        Default: ``"TRIM_HORIZON"`` — the
        oldest record in the stream, so nothing written before the mapping is missed.
    :param maximum_retry_attempts: retries of a failing batch before it is discarded or sent to
        ``on_failure_destination_arn`` (0-10,000). Default: 10.
    :param maximum_record_age_seconds: records older than this are not retried (60-604,800).
        Default: 86400 (24 hours, the stream's retention).
    :param bisect_batch_on_function_error: split a failing batch in two and retry the halves.
        Default: True.
    :param on_failure_destination_arn: the S3 bucket (whole invocation record, records included), SQS
        queue or SNS topic (metadata only) failed batches are sent to. Default: None — failed batches are
        dropped after the retries.
    :param filter_patterns: Lambda event filter patterns (JSON strings); only matching records are
        delivered. Default: an empty list — every record.
    :param report_batch_item_failures: the function reports partial failures
        (``ReportBatchItemFailures``). Default: True.
    :raises ValueError: for a number outside Lambda's range for it (CreateEventSourceMapping), named; Lambda's
        ``-1`` (retry or keep forever) is refused: a failing batch would block its shard for the stream's
        whole retention.
    """

    function_name: str
    batch_size: int = 1000
    maximum_batching_window_seconds: int = 60
    starting_position: str = "TRIM_HORIZON"
    maximum_retry_attempts: int = 10
    maximum_record_age_seconds: int = 86400
    bisect_batch_on_function_error: bool = True
    on_failure_destination_arn: str | None = None
    filter_patterns: list[str] = field(default_factory=list)
    report_batch_item_failures: bool = True

    def __post_init__(self) -> None:
        # Lambda's ranges (CreateEventSourceMapping); -1 ("forever") is refused, as StreamArchiver refuses it
        whole("batch_size", self.batch_size, maximum=10_000)
        whole("maximum_batching_window_seconds", self.maximum_batching_window_seconds, minimum=0, maximum=300)
        whole("maximum_retry_attempts", self.maximum_retry_attempts, minimum=0, maximum=10_000)
        whole("maximum_record_age_seconds", self.maximum_record_age_seconds, minimum=60, maximum=604_800)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> StreamConsumer | None:
        """The consumer configured for this function, or None when no consumer is attached."""
        data = json_object_env(env, STREAM_CONSUMER_ENV)
        if data is None:
            return None
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValidationError(
                f"environment variable {STREAM_CONSUMER_ENV}: unknown stream consumer settings: "
                f"{', '.join(sorted(unknown))}"
            )
        try:
            return cls(**data)
        except (ValidationError, TypeError) as error:
            raise ValidationError(f"environment variable {STREAM_CONSUMER_ENV}: {error}") from None

    def mapping_request(self, stream_arn: str) -> dict[str, Any]:
        """CreateEventSourceMapping arguments for one stream."""
        request: dict[str, Any] = {
            "EventSourceArn": stream_arn,
            "FunctionName": self.function_name,
            "StartingPosition": self.starting_position,
            "BatchSize": self.batch_size,
            "MaximumBatchingWindowInSeconds": self.maximum_batching_window_seconds,
            "MaximumRetryAttempts": self.maximum_retry_attempts,
            "MaximumRecordAgeInSeconds": self.maximum_record_age_seconds,
            "BisectBatchOnFunctionError": self.bisect_batch_on_function_error,
            "Enabled": True,
        }
        if self.report_batch_item_failures:
            request["FunctionResponseTypes"] = ["ReportBatchItemFailures"]
        if self.on_failure_destination_arn:
            request["DestinationConfig"] = {"OnFailure": {"Destination": self.on_failure_destination_arn}}
        if self.filter_patterns:
            request["FilterCriteria"] = {"Filters": [{"Pattern": p} for p in self.filter_patterns]}
        return request

    def _mappings(self, lambda_client, stream_arn: str | None) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"FunctionName": self.function_name}
        if stream_arn is not None:
            kwargs["EventSourceArn"] = stream_arn
        while True:
            page = lambda_client.list_event_source_mappings(**kwargs)
            found.extend(page.get("EventSourceMappings", []))
            if not page.get("NextMarker"):
                return found
            kwargs["Marker"] = page["NextMarker"]

    def attached(self, lambda_client, stream_arn: str) -> bool:
        """True when ``stream_arn`` already has a mapping to the consumer (a read: what a dry run asks)."""
        return bool(self._mappings(lambda_client, stream_arn))

    def attach(self, lambda_client, stream_arn: str) -> bool:
        """Map ``stream_arn`` to the consumer unless a mapping exists; True when one was created."""
        if self._mappings(lambda_client, stream_arn):
            return False
        lambda_client.create_event_source_mapping(**self.mapping_request(stream_arn))
        return True

    def detach(self, lambda_client, stream_arn: str) -> int:
        """Delete the consumer's mappings on ``stream_arn``; returns how many were deleted."""
        return len(self._delete(lambda_client, self._mappings(lambda_client, stream_arn)))

    def detach_all(self, lambda_client, owns_table: Callable[[str], bool]) -> list[str]:
        """Delete the consumer's mappings on the streams of every table ``owns_table`` accepts (by table name).

        Only this consumer function's mappings are listed, and of those only the ones on a table the
        caller owns are deleted (a mapping the consumer has on any other table is left alone).
        Returns the deleted mappings' UUIDs.
        """
        ours = [
            m for m in self._mappings(lambda_client, None)
            if owns_table(stream_table_name(m.get("EventSourceArn", "")))
        ]
        return self._delete(lambda_client, ours)

    @staticmethod
    def _delete(lambda_client, mappings: list[dict[str, Any]]) -> list[str]:
        for mapping in mappings:
            try:
                lambda_client.delete_event_source_mapping(UUID=mapping["UUID"])
            except lambda_client.exceptions.ResourceNotFoundException:
                continue
        return [m["UUID"] for m in mappings]


def stream_table_name(stream_arn: str) -> str:
    """The table name in a DynamoDB stream ARN (``arn:...:table/NAME/stream/LABEL``); "" for another ARN."""
    _, _, resource = stream_arn.partition(":table/")
    name, _, rest = resource.partition("/stream/")
    return name if rest else ""
