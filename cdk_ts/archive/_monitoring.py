"""Monitoring of the archive constructs: metric factories, then the dashboard rows and alarms asked of them.

The split of cdk-monitoring-constructs: a metric factory knows where each metric comes from (namespace,
dimensions, default statistic); the dashboard row and the alarm list only ask it. ``StreamArchiverBase``
and ``ArchiveCompaction`` keep their public ``metric_*`` methods, which delegate here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk_ts._alarms import AlarmingConstruct
from cdk_ts._metrics import graph, metric_options
from cdk_ts._validation import describe
from cdk_ts_runtime._archiver import FUNCTION_DIMENSION, ArchiverMetric
from cdk_ts_runtime._emf import METRIC_NAMESPACE
from cdk_ts_runtime._errors import ValidationError


@dataclass(frozen=True)
class AlarmSpec:
    """One recommended alarm: fires when ``metric`` exceeds ``threshold`` for ``evaluation_periods`` periods."""

    construct_id: str
    metric: cloudwatch.IMetric
    description: str
    threshold: float = 0
    evaluation_periods: int = 1


def create_alarms(owner: AlarmingConstruct, specs: dict[str, AlarmSpec]) -> dict[str, cloudwatch.Alarm]:
    """The alarms of ``specs``, created in order by ``owner``'s ``_alarm_above`` (so they get its alarm actions)."""
    return {
        name: owner._alarm_above(  # noqa: SLF001 - the alarm-actions helper of the construct asking
            spec.construct_id, spec.metric, spec.description,
            threshold=spec.threshold, evaluation_periods=spec.evaluation_periods,
        )
        for name, spec in specs.items()
    }


class ArchiverMetricFactory:
    """The metrics of one stream archiver: its function's, its EMF metrics and its failure destination's.

    :param owner: the archiver construct (named in errors).
    :param function_name: the archiver function's name; None for an archiver imported without it.
    :param dead_letter_queue: the SQS failure destination, or None.
    :param failure_bucket: the S3 failure destination, or None.
    :param failure_metrics_filter_id: the failure bucket's S3 request-metrics filter, or None.
    """

    def __init__(
        self, owner: Construct, *,
        function_name: str | None,
        dead_letter_queue: sqs.IQueue | None,
        failure_bucket: s3.IBucket | None,
        failure_metrics_filter_id: str | None,
    ) -> None:
        """Hold where the metrics come from; nothing is created."""
        self._owner = owner
        self._function_name = function_name
        self._dead_letter_queue = dead_letter_queue
        self._failure_bucket = failure_bucket
        self._filter_id = failure_metrics_filter_id

    def iterator_age(self, **props: Any) -> cloudwatch.Metric:
        """``IteratorAge`` of the function, Maximum."""
        return self._lambda_metric("IteratorAge", props, "Maximum")

    def errors(self, **props: Any) -> cloudwatch.Metric:
        """``AWS/Lambda`` ``Errors`` of the function, Sum."""
        return self._lambda_metric("Errors", props, "Sum")

    def failure_delivery_failures(self, **props: Any) -> cloudwatch.Metric:
        """``DestinationDeliveryFailures`` of the function, Sum."""
        return self._lambda_metric("DestinationDeliveryFailures", props, "Sum")

    def archiver_metric(self, metric_name: ArchiverMetric | str, **props: Any) -> cloudwatch.Metric:
        """An EMF metric the archiver function writes (namespace ``cdk-ts``, ``FunctionName``), Sum."""
        try:
            written = ArchiverMetric(metric_name)
        except ValueError:
            raise ValidationError(
                f"{describe(self._owner)}: metric {metric_name!r} is not written by the archiver; use one of "
                f"{', '.join(m.value for m in ArchiverMetric)}"
            ) from None
        return cloudwatch.Metric(
            namespace=METRIC_NAMESPACE, metric_name=written.value,
            dimensions_map={FUNCTION_DIMENSION: self._needs_function_name()},
            **metric_options(props, "Sum"),
        )

    def dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Queue depth (Maximum) with SQS; the failure bucket's ``PutRequests`` on its filter (Sum) with S3."""
        if self._dead_letter_queue is not None:
            return self._dead_letter_queue.metric_approximate_number_of_messages_visible(
                **metric_options(props, "Maximum")
            )
        if self._failure_bucket is None or self._filter_id is None:
            raise ValidationError(
                f"{describe(self._owner)}: the failed-batches metric needs the failure bucket and its request-metrics "
                "filter; import the archiver with failure_bucket_name= and failure_metrics_filter_id= (the owning "
                "archiver's failure_metrics_filter_id)"
            )
        return cloudwatch.Metric(
            namespace="AWS/S3",
            metric_name="PutRequests",
            dimensions_map={"BucketName": self._failure_bucket.bucket_name, "FilterId": self._filter_id},
            **metric_options(props, "Sum"),
        )

    def _lambda_metric(self, metric_name: str, props: dict[str, Any], statistic: str) -> cloudwatch.Metric:
        """What ``IFunction.metric`` gives: ``AWS/Lambda`` by ``FunctionName``."""
        return cloudwatch.Metric(
            namespace="AWS/Lambda", metric_name=metric_name,
            dimensions_map={"FunctionName": self._needs_function_name()}, **metric_options(props, statistic),
        )

    def _needs_function_name(self) -> str:
        if self._function_name is None:
            raise ValidationError(
                f"{describe(self._owner)}: this archiver was imported without its function, so its metrics cannot "
                "be named; import it with function_name= (the owning archiver's function.function_name)"
            )
        return self._function_name


def archiver_widgets(name: str, metrics: ArchiverMetricFactory) -> list[cloudwatch.IWidget]:
    """The archiver's dashboard row: iterator age; failed batches, delivery failures and errors."""
    return [
        graph(f"{name}: iterator age (ms)", metrics.iterator_age(label="iterator age")),
        graph(
            f"{name}: failed batches (replay them), delivery failures, errors",
            metrics.dead_letters(label="failed batches"),
            metrics.failure_delivery_failures(label="delivery failures"),
            metrics.errors(label="errors"),
        ),
    ]


def archiver_alarms(
    metrics: ArchiverMetricFactory, *, iterator_age_threshold: Duration, to_queue: bool
) -> dict[str, AlarmSpec]:
    """The archiver's recommended alarms by name, in the order they are created."""
    failed_batches = (
        "Stream batches gave up and went to the dead-letter queue: read their records from the stream "
        "within 24 hours" if to_queue else
        "Stream batches gave up: failure records arrived in the failure bucket; run the replay "
        "(cdk-ts replay, or the function with {\"Operation\": \"replay\"})"
    )
    return {
        "iterator_age": AlarmSpec(
            "IteratorAgeAlarm", metrics.iterator_age(),
            "Stream records wait too long to be archived (archiver behind or failing)",
            threshold=iterator_age_threshold.to_milliseconds(), evaluation_periods=3,
        ),
        "dead_letter_queue": AlarmSpec("DeadLetterQueueAlarm", metrics.dead_letters(), failed_batches),
        "failure_delivery": AlarmSpec(
            "FailureDeliveryAlarm", metrics.failure_delivery_failures(),
            "Lambda could not deliver a failed batch to the failure destination: those records are lost "
            "once the stream's 24 hours pass (check the function role's access to the destination)",
        ),
        "errors": AlarmSpec("ErrorsAlarm", metrics.errors(), "The archiver function raised errors"),
    }


class CompactionMetricFactory:
    """The metrics of one compaction: failed runs and partitions (dead-letter queues), errors, oversized partitions."""

    def __init__(self, function: lambda_.IFunction, dead_letter_queue: sqs.IQueue,
                 partition_dead_letter_queue: sqs.IQueue | None = None,
                 planner_function: lambda_.IFunction | None = None) -> None:
        """Hold where the metrics come from; nothing is created."""
        self._function = function
        self._dead_letter_queue = dead_letter_queue
        self._partition_dead_letter_queue = partition_dead_letter_queue
        self._planner_function = planner_function

    def dead_letters(self, **props: Any) -> cloudwatch.Metric:
        """Queue depth of the dead-letter queue, Maximum."""
        return self._dead_letter_queue.metric_approximate_number_of_messages_visible(
            **metric_options(props, "Maximum")
        )

    def errors(self, **props: Any) -> cloudwatch.Metric:
        """``AWS/Lambda`` ``Errors`` of the function, Sum."""
        return self._function.metric_errors(**metric_options(props, "Sum"))

    def failed_partitions(self, **props: Any) -> cloudwatch.Metric:
        """Queue depth of the partitions' dead-letter queue (partitions that failed every attempt), Maximum."""
        return self._partition_dead_letter_queue.metric_approximate_number_of_messages_visible(
            **metric_options(props, "Maximum")
        )

    def partitions_over_envelope(self, **props: Any) -> cloudwatch.Metric:
        """``cdk-ts`` ``PartitionsOverEnvelope`` of the planner's runs (partitions not attempted), Maximum."""
        return cloudwatch.Metric(
            namespace=METRIC_NAMESPACE, metric_name="PartitionsOverEnvelope",
            dimensions_map={FUNCTION_DIMENSION: self._planner_function.function_name},
            **metric_options(props, "Maximum"),
        )


def compaction_widgets(name: str, metrics: CompactionMetricFactory) -> list[cloudwatch.IWidget]:
    """The compaction's dashboard row: one graph of failed runs waiting in the queue, and errors."""
    return [graph(f"{name}: failed compaction runs, errors",
                  metrics.dead_letters(label="failed runs"), metrics.errors(label="errors"))]


def compaction_alarms(metrics: CompactionMetricFactory) -> dict[str, AlarmSpec]:
    """The compaction's recommended alarms by name, in the order they are created."""
    return {
        "dead_letter_queue": AlarmSpec(
            "DeadLetterQueueAlarm", metrics.dead_letters(),
            "Compaction plans failed after Lambda's retries (or were not delivered): the raw layer is intact and "
            "the view reads it; see the planner's log for the error, fix, then invoke the planner again (a later "
            "run plans what is due)",
        ),
        "errors": AlarmSpec("ErrorsAlarm", metrics.errors(), "The compaction function raised errors"),
        "failed_partitions": AlarmSpec(
            "FailedPartitionsAlarm", metrics.failed_partitions(),
            "Partitions failed every compaction attempt and wait in the partitions' dead-letter queue (the others "
            "were compacted): the message names the partition; see the function's log, fix, then redrive the queue",
        ),
        "partitions_over_envelope": AlarmSpec(
            "PartitionsOverEnvelopeAlarm", metrics.partitions_over_envelope(),
            "Partitions are larger than one compaction function can take and were not attempted (the others were): "
            "the planner's log gives each one's raw bytes; compact them with the distributed path",
        ),
    }
