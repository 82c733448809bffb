"""Compaction fanned out: the schedule only plans, and each due partition is compacted by an invocation of its own.

:class:`CompactionPlanner` lists the archive (a few list calls a day and table, however many partitions
are due), and sends one SQS message per due partition to a FIFO queue. The message group is the
partition, so two invocations never compact one partition at once; the deduplication ID is the partition
and the generation its raw objects make, so a second plan within SQS's five-minute deduplication interval
sends nothing new ("Exactly-once processing", Amazon SQS developer guide), and a later duplicate finds the
partition compacted and does nothing (:meth:`cdk_ts_runtime._compaction.ArchiveCompactor.compact_partition`).
A partition that fails is retried by SQS and then moved to the dead-letter queue alone; the others are
compacted by their own invocations. A partition above the single-function envelope is reported with its
size and never sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._archiver import FUNCTION_DIMENSION
from cdk_ts_runtime._aws import LazyClient, client_property
from cdk_ts_runtime._compaction_envelope import SingleFunctionEnvelope, estimate_partition
from cdk_ts_runtime._compaction_plan import (
    ArchiveInventory,
    CompactionSettings,
    Partition,
    PartitionsFailedError,
    PartitionStatus,
    generation_name,
)
from cdk_ts_runtime._emf import METRIC_NAMESPACE, EmfWriter, MetricPoint
from cdk_ts_runtime._errors import ValidationError

logger = logging.getLogger(__name__)

#: The partition queue's URL (set by ``ArchiveCompaction`` on its planner function).
ENV_QUEUE_URL = _environment.COMPACTION_QUEUE_URL
#: The single-function envelope as JSON (``SingleFunctionEnvelope.as_json``).
ENV_ENVELOPE = _environment.COMPACTION_ENVELOPE
_SEND_BATCH = 10  # SendMessageBatch takes at most 10 messages (Amazon SQS API reference)


class PlanFailedError(PartitionsFailedError):
    """Some due partitions could not be planned (or cannot be compacted at all); ``report`` says which."""

    outcome = "not planned"


@dataclass(frozen=True)
class PartitionMessage:
    """One due partition, as the planner sends it: which partition, and the plan's reference time.

    :param partition: the partition.
    :param planned_at: the scheduled time of the plan (the worker judges "closed" as the plan did).
    """

    partition: Partition
    planned_at: datetime

    def body(self) -> str:
        """The message body (JSON)."""
        return json.dumps({"table": self.partition.table, "dt": self.partition.dt, "hour": self.partition.hour,
                           "planned_at": self.planned_at.astimezone(UTC).isoformat()})

    @classmethod
    def parse(cls, body: str) -> PartitionMessage:
        """A message from :meth:`body`'s JSON; a ValidationError names what is wrong."""
        try:
            document = json.loads(body)
            partition = Partition(str(document["table"]), str(document["dt"]), document.get("hour"))
            return cls(partition, datetime.fromisoformat(document["planned_at"]))
        except (ValueError, KeyError, TypeError) as error:
            raise ValidationError(f"partition message {body!r:.200} is not a planner's message: {error}") from None


def deduplication_id(status: PartitionStatus, fingerprint: str) -> str:
    """The partition and the generation its raw objects make: the same plan twice gives the same ID (<= 128 chars)."""
    generation = generation_name(status.raw, fingerprint)
    return hashlib.sha256(f"{status.partition.path}\0{generation}".encode()).hexdigest()


class CompactionPlanner:
    """Sends one message per due partition to the partition queue; reports partitions above the envelope.

    :param settings: the compacted layer's settings.
    :param queue_url: the partition queue (FIFO).
    :param envelope: the largest partition one invocation takes.
        Default: None — no limit.
    :param s3_client: the boto3 S3 client.
        Default: None — created on first use.
    :param sqs_client: the boto3 SQS client.
        Default: None — created on first use.
    :param metrics: where metric points go (namespace ``cdk-ts``, dimension ``FunctionName``).
        Default: None — EMF lines on stdout (CloudWatch Logs turns them into metrics).
    :param function_name: the planner function's name, the metrics' ``FunctionName``.
        Default: None — ``"local"``.
    """

    def __init__(
        self, settings: CompactionSettings, *, queue_url: str, envelope: SingleFunctionEnvelope | None = None,
        s3_client=None, sqs_client=None, metrics: Callable[[MetricPoint], None] | None = None,
        function_name: str | None = None,
    ) -> None:
        if not queue_url:
            raise ValidationError("queue_url must be the partition queue's URL")
        self.settings = settings
        self.queue_url = queue_url
        self.envelope = envelope
        self.inventory = ArchiveInventory(settings, s3_client=s3_client)
        self._sqs = LazyClient("sqs", sqs_client)
        self.metrics = metrics or EmfWriter(METRIC_NAMESPACE)
        self.function_name = function_name or "local"

    sqs = client_property("_sqs", "The SQS client (created on first use).")

    @classmethod
    def from_env(cls, env: Mapping[str, str], settings: CompactionSettings, **clients: Any) -> CompactionPlanner:
        """The planner ``ArchiveCompaction`` configures (queue URL and envelope in the environment)."""
        env = _environment.required(env, (ENV_QUEUE_URL,), "ArchiveCompaction sets it on its planner function")
        envelope = _environment.read(env, ENV_ENVELOPE)
        return cls(settings, queue_url=env[ENV_QUEUE_URL],
                   envelope=SingleFunctionEnvelope.from_json(json.loads(envelope)) if envelope else None,
                   function_name=env.get("AWS_LAMBDA_FUNCTION_NAME"), **clients)

    def plan(self, *, now: datetime, since: datetime | None = None) -> dict[str, Any]:
        """Send every due partition to the queue, oldest first; partitions above the envelope are only reported.

        :param now: the reference time (a scheduled run passes the event's time, not the clock).
        :param since: the earliest day to look at.
            Default: None — ``now`` minus the settings' lookback.
        :return: ``queued`` (partition paths), ``oversized`` (their estimates), ``states`` and ``failed``.
        :raises PlanFailedError: after sending the rest, when a partition could not be sent or cannot be
            compacted (late objects over expired raw objects).
        """
        report: dict[str, Any] = {"queued": [], "oversized": [], "states": {}, "failed": []}
        due = []
        for status in self.inventory.due(report, now=now, since=since):
            estimate = estimate_partition(status.partition, status.raw_sizes)
            if self.envelope is not None and not self.envelope.admits(estimate):
                logger.error("partition above the single-function envelope, not compacted: %s", estimate.as_json())
                report["oversized"].append({**estimate.as_json(), "envelope_raw_bytes": self.envelope.max_raw_bytes})
                continue
            due.append(status)
        self._send(due, now, report)
        self._emit(report)
        if report["failed"]:
            raise PlanFailedError(report)
        return report

    def _emit(self, report: dict[str, Any]) -> None:
        dimensions = {FUNCTION_DIMENSION: self.function_name}
        largest = max((o["raw_bytes"] for o in report["oversized"]), default=0)
        oversized = {"oversized": report["oversized"][:20]}  # the log line names them; the metric counts them
        self.metrics(MetricPoint("PartitionsQueued", len(report["queued"]), "Count", dimensions))
        self.metrics(MetricPoint("PartitionsOverEnvelope", len(report["oversized"]), "Count", dimensions, oversized))
        self.metrics(MetricPoint("LargestPartitionOverEnvelopeBytes", largest, "Bytes", dimensions))

    def _send(self, due: list[PartitionStatus], now: datetime, report: dict[str, Any]) -> None:
        fingerprint = self.settings.fingerprint()
        for start in range(0, len(due), _SEND_BATCH):
            chunk = {str(n): status for n, status in enumerate(due[start:start + _SEND_BATCH])}
            answer = self.sqs.send_message_batch(QueueUrl=self.queue_url, Entries=[
                {"Id": n, "MessageBody": PartitionMessage(s.partition, now).body(),
                 "MessageGroupId": s.partition.path, "MessageDeduplicationId": deduplication_id(s, fingerprint)}
                for n, s in chunk.items()
            ])
            report["queued"] += [chunk[entry["Id"]].partition.path for entry in answer.get("Successful", [])]
            report["failed"] += [{"partition": chunk[entry["Id"]].partition.path,
                                  "error": f"{entry.get('Code')}: {entry.get('Message')}"}
                                 for entry in answer.get("Failed", [])]

