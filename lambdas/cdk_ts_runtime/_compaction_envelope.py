"""How large a partition is, judged from its raw objects' sizes before it is read, and what one function can take.

The planner lists the raw layer anyway (ListObjectsV2 returns each object's ``Size``), so a partition's
size costs no extra request: :func:`estimate_partition`. :class:`SingleFunctionEnvelope` is the largest
partition one compaction invocation takes within Lambda's limits; a partition above it is reported with
its size (a metric, the plan's report and ``archive-status``) and is never attempted, so it cannot block
the others. The distributed path (a managed engine) is for those partitions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdk_ts_runtime._compaction_plan import Partition
from cdk_ts_runtime._errors import ValidationError

#: Raw gzip bytes per change of the sample telemetry (bench/README.md, compaction limits: 37.2 MB of gzip JSON Lines
#: per million changes): turns a partition's bytes into an estimate of its changes.
RAW_BYTES_PER_CHANGE = 39
#: Changes a second one out-of-core compaction sustains: 39,000-52,000 per CPU second measured at 1-5 million changes
#: (bench/README.md, compaction at scale); kept at 10,000, a margin for Lambda's slower CPU and wall-clock waits (the
#: raw objects are read one GET at a time: 1,000 a million changes).
OUT_OF_CORE_CHANGES_PER_SECOND = 10_000
#: Local disk per change an out-of-core compaction needs: the spill, DuckDB's sort runs and one Parquet file.
OUT_OF_CORE_DISK_BYTES_PER_CHANGE = 500
#: Memory per change and fixed memory of the in-memory sort (bench/README.md: ~224 MB + 1,019 MB per million).
IN_MEMORY_BYTES_PER_CHANGE = 1_100
IN_MEMORY_BASE_MIB = 250
#: The share of the timeout a compaction may plan to use: listing, uploads and the Glue switch need the rest.
_TIME_SHARE = 0.6


@dataclass(frozen=True)
class PartitionEstimate:
    """A partition's size before it is read: its raw objects and their bytes (gzip JSON Lines).

    :param partition: the partition.
    :param raw_objects: how many raw objects it has.
    :param raw_bytes: their total size in bytes.
    """

    partition: Partition
    raw_objects: int
    raw_bytes: int

    @property
    def changes(self) -> int:
        """Changes it holds, estimated at :data:`RAW_BYTES_PER_CHANGE` (redeliveries included)."""
        return -(-self.raw_bytes // RAW_BYTES_PER_CHANGE)

    def as_json(self) -> dict[str, Any]:
        """The estimate as JSON: the partition's path, objects, bytes and estimated changes."""
        return {"partition": self.partition.path, "raw_objects": self.raw_objects, "raw_bytes": self.raw_bytes,
                "estimated_changes": self.changes}


def estimate_partition(partition: Partition, raw_sizes: Mapping[str, int]) -> PartitionEstimate:
    """A partition's size from its raw objects' sizes (key to ``Size``, as ListObjectsV2 returns them)."""
    return PartitionEstimate(partition, len(raw_sizes), sum(raw_sizes.values()))


@dataclass(frozen=True)
class SingleFunctionEnvelope:
    """The largest partition, in raw gzip bytes, that one compaction invocation takes.

    :param max_raw_bytes: a partition with more raw bytes is not attempted.
    :param reason: which limit sets it (memory, ephemeral storage or time), for the report.
        Default: ``""``.
    """

    max_raw_bytes: int
    reason: str = ""

    def __post_init__(self) -> None:
        if self.max_raw_bytes < 1:
            raise ValidationError(f"max_raw_bytes {self.max_raw_bytes!r} must be a positive number of bytes")

    def admits(self, estimate: PartitionEstimate) -> bool:
        """True when one invocation can compact the partition."""
        return estimate.raw_bytes <= self.max_raw_bytes

    @classmethod
    def for_function(
        cls, *, memory_mib: int, timeout_seconds: int, ephemeral_mib: int, out_of_core: bool
    ) -> SingleFunctionEnvelope:
        """The envelope of a compaction function of this size, from the measured rates above.

        :param memory_mib: the function's memory.
        :param timeout_seconds: its timeout.
        :param ephemeral_mib: its ``/tmp`` size (the out-of-core sort spills there).
        :param out_of_core: True when it sorts with DuckDB (memory flat), False when it sorts in memory.
        """
        by_time = int(timeout_seconds * _TIME_SHARE * OUT_OF_CORE_CHANGES_PER_SECOND)
        if out_of_core:
            limits = {"time": by_time, "ephemeral storage": ephemeral_mib * 2**20 // OUT_OF_CORE_DISK_BYTES_PER_CHANGE}
        else:
            usable = max(0, int(memory_mib * 0.9) - IN_MEMORY_BASE_MIB) * 2**20
            limits = {"time": by_time, "memory": usable // IN_MEMORY_BYTES_PER_CHANGE}
        reason, changes = min(limits.items(), key=lambda item: item[1])
        return cls(max(1, changes * RAW_BYTES_PER_CHANGE), f"{reason}: about {changes:,} changes")

    def as_json(self) -> dict[str, Any]:
        """The envelope as JSON (what ``CDK_TS_COMPACTION_ENVELOPE`` holds)."""
        return {"max_raw_bytes": self.max_raw_bytes, "reason": self.reason}

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> SingleFunctionEnvelope:
        """An envelope from :meth:`as_json`'s form."""
        return cls(int(document["max_raw_bytes"]), str(document.get("reason", "")))
