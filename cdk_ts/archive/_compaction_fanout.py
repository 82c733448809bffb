"""The compaction's fan-out: a planner function on the schedule, a FIFO partition queue, and its dead-letter queue.

The planner lists what is due and sends one message per partition; the compaction function takes them
one at a time through an SQS event source mapping (batch size 1, ``MaximumConcurrency`` bounding how
many partitions are compacted at once: "Limits the number of concurrent instances that the Amazon SQS
event source can invoke", 2-1,000, Lambda API reference ``ScalingConfig``). On a FIFO queue Lambda's
concurrency is also bounded by the number of message groups, here one per partition (Lambda developer
guide, "Configuring scaling behavior for SQS event source mappings").
"""

from __future__ import annotations

import json

from aws_cdk import Duration, Names
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cdk_ts import _perms
from cdk_ts._assets import compaction_code
from cdk_ts._defaults import dead_letter_queue, runtime_function
from cdk_ts._lookups import stack_of
from cdk_ts._nag import acknowledge_wildcard_resources
from cdk_ts_runtime._compaction_envelope import SingleFunctionEnvelope
from cdk_ts_runtime._compaction_fanout import ENV_ENVELOPE, ENV_QUEUE_URL
from cdk_ts_runtime._compaction_plan import ENV_SETTINGS, MANIFESTS, CompactionSettings

#: Messages failing this many receives go to the dead-letter queue (the first try and two retries, as Lambda's
#: own retries of an asynchronous invocation).
MAX_RECEIVES = 3
#: AWS recommends a source queue's visibility timeout of at least six times the function's timeout (Lambda
#: developer guide, "Using Lambda with Amazon SQS"); SQS allows at most 12 hours.
_VISIBILITY_FACTOR = 6
_MAX_VISIBILITY_SECONDS = 43_200


def fifo_name(scope: Construct, suffix: str) -> str:
    """A FIFO queue's name: unique to the construct's path, ending in ``.fifo`` as SQS requires (at most 80 chars).

    Named here rather than left to CloudFormation, whose generated name an emulator does not end in ``.fifo``.
    """
    return f"{Names.unique_resource_name(scope, max_length=74 - len(suffix), separator='-')}-{suffix}.fifo"


class CompactionFanOut(Construct):
    """The planner function, the partition queue (FIFO) and its dead-letter queue, and the worker's event source.

    Exposes ``planner`` (the function on the schedule), ``queue`` and ``dead_letter_queue``.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        worker: lambda_.Function,
        worker_timeout: Duration,
        bucket: s3.IBucket,
        settings: CompactionSettings,
        envelope: SingleFunctionEnvelope,
        max_concurrency: int,
        planner_dead_letter_queue: sqs.IQueue,
    ) -> None:
        """Create the queues and the planner, and connect the worker to the queue.

        :param worker: the compaction function (compacts one partition per message).
        :param worker_timeout: its timeout (sets the queue's visibility timeout).
        :param bucket: the archive bucket.
        :param settings: the compacted layer's settings.
        :param envelope: the largest partition one worker takes; larger ones are reported, not sent.
        :param max_concurrency: partitions compacted at once (2-1,000).
        :param planner_dead_letter_queue: where the planner's failed runs and undelivered schedule events go.
        """
        super().__init__(scope, construct_id)
        self.dead_letter_queue = dead_letter_queue(
            self, "DeadLetterQueue", "the partitions that failed every compaction attempt",
            fifo_name=fifo_name(self, "FailedPartitions"),
        )
        self.queue = sqs.Queue(
            self, "Queue",
            queue_name=fifo_name(self, "Partitions"),
            fifo=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(
                min(_MAX_VISIBILITY_SECONDS, _VISIBILITY_FACTOR * int(worker_timeout.to_seconds()))),
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVES, queue=self.dead_letter_queue),
        )
        worker.add_event_source(sources.SqsEventSource(
            self.queue, batch_size=1, max_concurrency=max_concurrency, report_batch_item_failures=True,
        ))
        self.planner = self._create_planner(bucket, settings, envelope, planner_dead_letter_queue)

    def _create_planner(
        self, bucket: s3.IBucket, settings: CompactionSettings, envelope: SingleFunctionEnvelope,
        failures: sqs.IQueue,
    ) -> lambda_.Function:
        stack = stack_of(self)
        planner = runtime_function(
            self, "Planner",
            handler="cdk_ts_runtime.handlers.compaction.handler",
            code=compaction_code(),
            description="Plans the compaction of a DynamoDB stream archive: one queue message per due partition",
            environment={
                ENV_SETTINGS: stack.to_json_string({**settings.as_json(), "bucket": bucket.bucket_name}),
                ENV_QUEUE_URL: self.queue.queue_url,
                ENV_ENVELOPE: json.dumps(envelope.as_json()),
            },
            memory_size=512,
            timeout=Duration.minutes(5),
            dead_letter_queue=failures,
            retry_attempts=2,
        )
        self.queue.grant_send_messages(planner)
        manifests = bucket.arn_for_objects(f"{settings.compacted_prefix}{MANIFESTS}*")
        planner.add_to_role_policy(iam.PolicyStatement(
            actions=list(_perms.S3_COMPACTION_RAW_READ_ACTIONS), resources=[manifests]))
        planner.add_to_role_policy(iam.PolicyStatement(
            actions=list(_perms.S3_LIST_BUCKET_ACTIONS), resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{settings.prefix}*", f"{settings.compacted_prefix}*"]}},
        ))
        if bucket.encryption_key is not None:
            bucket.encryption_key.grant_decrypt(planner)
        acknowledge_wildcard_resources(
            planner, self, [manifests],
            f"reads the manifests under {settings.compacted_prefix}{MANIFESTS} (one per table, day and hour) to "
            "tell which partitions are due; it lists the raw layer and reads no raw object",
        )
        return planner
