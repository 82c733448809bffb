"""Which archive partitions are closed, compacted, or waiting for late records: stdlib + boto3, no pyarrow.

The raw layer is the archiver's gzip JSON Lines, ``{prefix}table=T/dt=D/hour=H/*.jsonl.gz``. The
compacted layer (written by :mod:`cdk_ts_runtime._compaction`) holds one Parquet *generation* per
partition, ``{compacted_prefix}table=T/dt=D[/hour=H]/gen=G/part-NNNNN.parquet``, and one manifest per
partition, ``{compacted_prefix}_manifests/table=T/dt=D[/hour=H].json``, listing the raw objects (key and
ETag) the generation was built from and its files. The manifest is the switch: a raw object the manifest
does not list (a late record, a replay) makes the partition *late* and the next run compacts it again.

A partition is an hour or a day (``granularity``); it is *closed* once its end plus ``grace`` has passed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from cdk_ts_runtime import _environment
from cdk_ts_runtime._aws import LazyClient, client_property, error_code
from cdk_ts_runtime._errors import CdkTsError, ValidationError

#: The compacted layer's settings (set by ``ArchiveCompaction`` on its function), as JSON: see ``CompactionSettings``.
ENV_SETTINGS = _environment.COMPACTION_SETTINGS
#: Where the manifests live, under the compacted prefix.
MANIFESTS = "_manifests/"
MANIFEST_VERSION = 1
_RAW_KEY = re.compile(r"table=(?P<table>[^/]+)/dt=(?P<dt>\d{4}-\d{2}-\d{2})/hour=(?P<hour>\d{2})/[^/]+\.jsonl\.gz$")
_COLUMN_NAME = re.compile(r"[a-z_][a-z0-9_]{0,127}")
_DECIMAL = re.compile(r"decimal\((?P<p>\d{1,2}),\s*(?P<s>\d{1,2})\)")
#: Names the compacted layer uses itself: a declared column may not take them.
FIXED_COLUMNS = (
    "eventid", "eventname", "sequencenumber", "approximatecreationdatetime",
    "keys", "newimage", "oldimage", "useridentity",
)
PARTITION_NAMES = ("table", "dt", "hour")
#: How far back ``since`` may reach when the raw layer has no retention: a typo in the year would list centuries.
MAX_REACH_WITHOUT_RETENTION = timedelta(days=3653)


class PartitionsFailedError(CdkTsError, RuntimeError):
    """Some partitions failed and the others went on; ``report["failed"]`` says which, and why."""

    #: What did not happen to them, for the message.
    outcome = "not compacted"

    def __init__(self, report: dict[str, Any]) -> None:
        self.report = report
        failed = ", ".join(f"{f['partition']}: {f['error']}" for f in report["failed"])
        super().__init__(f"{len(report['failed'])} partition(s) {self.outcome}: {failed}")


class ManifestMissingError(CdkTsError, LookupError):
    """No manifest is stored at the key (the message): the partition was never compacted."""


class Granularity(StrEnum):
    """How much of the archive one compaction unit (one manifest, one Parquet generation) covers."""

    HOUR = "hour"
    DAY = "day"


@dataclass(frozen=True)
class ColumnSpec:
    """A typed column of the compacted layer taken from one attribute of the item (new image, else old image).

    :param name: the column's name (lower case, as Glue and Athena fold names).
    :param type: ``string``, ``bigint``, ``double``, ``boolean`` or ``decimal(P,S)`` (P at most 38).
        Default: ``"string"``.
    :param attribute: the item attribute it comes from.
        Default: None — the attribute called ``name``.
    """

    name: str
    type: str = "string"
    attribute: str | None = None

    @property
    def source(self) -> str:
        """The item attribute this column reads."""
        return self.attribute or self.name

    def problems(self) -> list[str]:
        """Why this column cannot be created (empty when it can)."""
        found = []
        if not _COLUMN_NAME.fullmatch(self.name):
            found.append(f"column name {self.name!r} must be 1-128 of [a-z0-9_], not starting with a digit")
        if self.name in FIXED_COLUMNS + PARTITION_NAMES:
            found.append(f"column name {self.name!r} is one of the compacted layer's own columns; rename it")
        decimal = _DECIMAL.fullmatch(self.type)
        if self.type not in ("string", "bigint", "double", "boolean") and not (
            decimal and 1 <= int(decimal["p"]) <= 38 and int(decimal["s"]) <= int(decimal["p"])
        ):
            found.append(
                f"column {self.name!r} type {self.type!r} must be string, bigint, double, boolean or decimal(P,S) "
                "with P <= 38"
            )
        return found

    @classmethod
    def parse(cls, value: ColumnSpec | Mapping[str, Any]) -> ColumnSpec:
        """A column from its JSON form (``{"name": ..., "type": ..., "attribute": ...}``) or itself."""
        if isinstance(value, ColumnSpec):
            return value
        if not isinstance(value, Mapping) or "name" not in value:
            raise ValidationError(f"column {value!r:.80} must be {{'name': ..., 'type': ..., 'attribute': ...}}")
        return cls(str(value["name"]), str(value.get("type", "string")), value.get("attribute"))

    def as_json(self) -> dict[str, Any]:
        """The JSON form :meth:`parse` reads."""
        return {"name": self.name, "type": self.type, **({"attribute": self.attribute} if self.attribute else {})}


@dataclass(frozen=True)
class CompactionSettings:
    """What the compacted layer looks like and when a partition is compacted.

    :param bucket: the archive bucket (raw and compacted layers).
    :param prefix: the raw layer's prefix (the archiver's ``prefix``).
        Default: ``"dynamodb/"``.
    :param compacted_prefix: where Parquet files and manifests go; must not lie under ``prefix``.
        Default: ``"parquet/dynamodb/"``.
    :param granularity: one compaction unit, an hour or a day.
        Default: ``Granularity.HOUR``.
    :param grace: how long after its end a partition is left open for late records.
        Default: one hour.
    :param lookback: how far back a run looks for raw objects (late records older than this are not
        compacted unless a run is given an earlier ``since``). Default: three days.
    :param columns: typed columns taken from the items (the keys, the event and images are always there).
        Default: none.
    :param target_file_bytes: roll to a new Parquet file once one reaches this size.
        Default: 128 MiB.
    :param row_group_rows: rows per Parquet row group (the unit a reader skips by min/max).
        Default: 65,536.
    :param glue_database: register each compacted partition in this Glue database's ``glue_table``.
        Default: None — no Glue partitions (readers use the manifests).
    :param glue_table: the Parquet layer's Glue table.
        Default: None.
    :param raw_retention: how long the raw layer keeps its objects (``StreamArchiver(raw_expiration=...)``);
        a ``since`` before it is refused, as no raw object can be there.
        Default: None — raw objects are kept until deleted; a ``since`` more than ten years back is refused.
    """

    bucket: str
    prefix: str = "dynamodb/"
    compacted_prefix: str = "parquet/dynamodb/"
    granularity: Granularity = Granularity.HOUR
    grace: timedelta = timedelta(hours=1)
    lookback: timedelta = timedelta(days=3)
    columns: tuple[ColumnSpec, ...] = ()
    target_file_bytes: int = 128 * 1024 * 1024
    row_group_rows: int = 65_536
    glue_database: str | None = None
    glue_table: str | None = None
    raw_retention: timedelta | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "granularity", Granularity(self.granularity))
        object.__setattr__(self, "columns", tuple(ColumnSpec.parse(c) for c in self.columns))
        problems = [p for c in self.columns for p in c.problems()]
        names = [c.name for c in self.columns]
        problems += [f"column {n!r} is declared twice" for n in sorted({n for n in names if names.count(n) > 1})]
        if not self.bucket:
            problems.append("bucket must be a bucket name")
        # with an empty raw prefix the raw layer is table=... at the bucket's root
        under_raw = self.compacted_prefix.startswith(self.prefix or "table=")
        if under_raw or not self.compacted_prefix.endswith("/"):
            problems.append(
                f"compacted_prefix {self.compacted_prefix!r} must end with '/' and lie outside the raw prefix "
                f"{self.prefix!r} (e.g. 'parquet/{self.prefix}')"
            )
        if self.target_file_bytes < 1024 * 1024 or self.row_group_rows < 1000:
            problems.append("target_file_bytes must be at least 1 MiB and row_group_rows at least 1000")
        if (self.glue_database is None) != (self.glue_table is None):
            problems.append("glue_database and glue_table go together")
        if self.raw_retention is not None and self.raw_retention <= timedelta(0):
            problems.append(f"raw_retention {self.raw_retention} must be positive")
        if problems:
            raise ValidationError("; ".join(problems))

    def fingerprint(self) -> str:
        """What the Parquet depends on besides the raw objects: a change recompacts every partition in reach."""
        shape = {"columns": [c.as_json() for c in self.columns], "granularity": self.granularity.value,
                 "target_file_bytes": self.target_file_bytes, "row_group_rows": self.row_group_rows}
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]

    def as_json(self) -> dict[str, Any]:
        """The JSON the construct sets in ``CDK_TS_COMPACTION_SETTINGS`` (:meth:`from_json` reads it)."""
        return {
            "bucket": self.bucket, "prefix": self.prefix, "compacted_prefix": self.compacted_prefix,
            "granularity": self.granularity.value, "grace_seconds": int(self.grace.total_seconds()),
            "lookback_seconds": int(self.lookback.total_seconds()), "columns": [c.as_json() for c in self.columns],
            "target_file_bytes": self.target_file_bytes, "row_group_rows": self.row_group_rows,
            "glue_database": self.glue_database, "glue_table": self.glue_table,
            **({"raw_retention_seconds": int(self.raw_retention.total_seconds())} if self.raw_retention else {}),
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> CompactionSettings:
        """Settings from :meth:`as_json`'s form; absent keys take the defaults."""
        known = dict(document)
        extra = {}
        if "grace_seconds" in known:
            extra["grace"] = timedelta(seconds=int(known.pop("grace_seconds")))
        if "lookback_seconds" in known:
            extra["lookback"] = timedelta(seconds=int(known.pop("lookback_seconds")))
        if "raw_retention_seconds" in known:
            extra["raw_retention"] = timedelta(seconds=int(known.pop("raw_retention_seconds")))
        return cls(**known, **extra)

    def check_since(self, since: datetime, now: datetime) -> None:
        """Refuse a ``since`` before the raw layer's retention (ten years without one), naming the value.

        Each day from ``since`` to ``now`` costs list calls per table: a typo in the year (``1026-03-01``)
        would list a thousand years of empty days.
        """
        reach = self.raw_retention or MAX_REACH_WITHOUT_RETENTION
        earliest = (now - reach).astimezone(UTC).date()
        if since.astimezone(UTC).date() < earliest:
            kept = (f"the raw layer keeps objects {self.raw_retention.days} days" if self.raw_retention
                    else f"without a raw retention, at most {MAX_REACH_WITHOUT_RETENTION.days} days back")
            raise ValidationError(
                f"since {since.date().isoformat()} is before {earliest.isoformat()} ({kept}, as of "
                f"{now.astimezone(UTC).date().isoformat()}): no raw object can be there; give a day from "
                f"{earliest.isoformat()} on"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> CompactionSettings:
        """The settings the construct configured in ``CDK_TS_COMPACTION_SETTINGS``.

        The old name, ``COMPACTION_SETTINGS``, set alone is refused, naming the new one.

        :raises EnvironmentVariableMissingError: (a ``KeyError``) when the variable is not set.
        """
        env = _environment.required(env, (ENV_SETTINGS,), "ArchiveCompaction sets it on its function")
        return cls.from_json(json.loads(env[ENV_SETTINGS]))


@dataclass(frozen=True, order=True)
class Partition:
    """One compaction unit: a table's day, or one hour of it.

    :param table: the source table's name.
    :param dt: the day, ``YYYY-MM-DD``.
    :param hour: the hour, ``HH``.
        Default: None — the whole day (day granularity).
    """

    table: str
    dt: str
    hour: str | None = None

    @property
    def start(self) -> datetime:
        """The first instant the partition covers (UTC)."""
        return datetime.fromisoformat(f"{self.dt}T{self.hour or '00'}:00:00+00:00")

    @property
    def end(self) -> datetime:
        """The first instant after the partition."""
        return self.start + (timedelta(hours=1) if self.hour is not None else timedelta(days=1))

    @property
    def path(self) -> str:
        """``table=T/dt=D[/hour=H]``: the Hive path of the partition in both layers."""
        return f"table={self.table}/dt={self.dt}" + (f"/hour={self.hour}" if self.hour is not None else "")

    def raw_prefix(self, prefix: str) -> str:
        """Where the partition's raw objects lie."""
        return f"{prefix}{self.path}/"

    def manifest_key(self, compacted_prefix: str) -> str:
        """The manifest's key."""
        return f"{compacted_prefix}{MANIFESTS}{self.path}.json"

    def generation_prefix(self, compacted_prefix: str, generation: str) -> str:
        """Where one generation's Parquet files lie (a Glue partition's location)."""
        return f"{compacted_prefix}{self.path}/gen={generation}/"

    def values(self) -> list[str]:
        """The Glue partition values, in key order."""
        return [self.table, self.dt] + ([self.hour] if self.hour is not None else [])

    def closed(self, now: datetime, grace: timedelta) -> bool:
        """True once the partition ended ``grace`` ago."""
        return now >= self.end + grace


@dataclass
class Manifest:
    """What one compacted partition's current generation covers: its raw objects and its Parquet files.

    :param partition: the partition.
    :param generation: the generation's name (a hash of the raw objects and the settings' fingerprint).
    :param raw: raw object key to ETag, every object the generation was built from.
    :param files: the generation's Parquet keys.
    :param rows: rows written (after removing redeliveries).
    :param duplicates: lines dropped because their ``eventID`` was already there.
    :param fingerprint: the settings' fingerprint (``CompactionSettings.fingerprint``).
    :param location: where the files are, a Parquet generation prefix or an Iceberg table and snapshot
        (``iceberg:<table>@<snapshot>``).
        Default: ``""``.
    """

    partition: Partition
    generation: str
    raw: dict[str, str]
    files: list[str]
    rows: int
    duplicates: int
    fingerprint: str
    location: str = ""

    def as_json(self) -> dict[str, Any]:
        """The manifest object's JSON."""
        return {
            "version": MANIFEST_VERSION, "table": self.partition.table, "dt": self.partition.dt,
            "hour": self.partition.hour, "generation": self.generation, "raw": dict(sorted(self.raw.items())),
            "files": self.files, "rows": self.rows, "duplicates": self.duplicates,
            "fingerprint": self.fingerprint, "location": self.location,
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Manifest:
        """A manifest from its JSON; refuses a version this code does not know."""
        if document.get("version") != MANIFEST_VERSION:
            raise ValidationError(f"manifest version {document.get('version')!r} is not {MANIFEST_VERSION}")
        return cls(
            Partition(document["table"], document["dt"], document.get("hour")), document["generation"],
            dict(document["raw"]), list(document["files"]), int(document["rows"]), int(document["duplicates"]),
            document["fingerprint"], document.get("location", ""),
        )


def generation_name(raw: Mapping[str, str], fingerprint: str) -> str:
    """A generation's name from what it is built of, so a rerun over the same objects writes the same keys."""
    digest = hashlib.sha256(fingerprint.encode())
    for key, etag in sorted(raw.items()):
        digest.update(f"{key}\0{etag}\n".encode())
    return digest.hexdigest()[:20]


class PartitionState(StrEnum):
    """Where a partition stands: see :func:`partition_state`."""

    #: Its hour or day (plus the grace period) has not ended: records may still arrive in order.
    OPEN = "open"
    #: Closed, raw objects only: the next run compacts it.
    PENDING = "pending"
    #: The manifest lists exactly the raw objects there are.
    COMPACTED = "compacted"
    #: Compacted, but raw objects arrived since (late records): the next run compacts it again.
    LATE = "late"
    #: Compacted with other settings (columns, granularity, file or row-group sizes): the next run rebuilds it.
    STALE = "stale"
    #: The manifest lists raw objects that are gone (the raw layer's lifecycle expired them): the Parquet
    #: is kept as it is, and late objects, if any, cannot be merged without them.
    RAW_EXPIRED = "raw-expired"


#: The states a run compacts: never compacted, late objects since, or other settings.
DUE_STATES = (PartitionState.PENDING, PartitionState.LATE, PartitionState.STALE)


@dataclass
class PartitionStatus:
    """One partition as a run or ``cdk-ts archive-status`` sees it.

    :param partition: the partition.
    :param state: its ``PartitionState``.
    :param raw: raw object key to ETag, as listed.
    :param manifest: the current manifest.
        Default: None — never compacted.
    :param late: raw objects the manifest does not cover (new keys or changed ETags).
        Default: none.
    :param missing: raw objects the manifest lists that are gone.
        Default: none.
    :param raw_sizes: raw object key to its size in bytes, as listed.
        Default: none (unknown).
    """

    partition: Partition
    state: PartitionState
    raw: dict[str, str]
    manifest: Manifest | None = None
    late: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    raw_sizes: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """A JSON summary (counts, not keys)."""
        return {
            "table": self.partition.table, "dt": self.partition.dt, "hour": self.partition.hour,
            "state": self.state.value, "raw_objects": len(self.raw), "late_objects": len(self.late),
            "missing_raw_objects": len(self.missing), "raw_bytes": sum(self.raw_sizes.values()),
            "compacted_rows": self.manifest.rows if self.manifest else None,
            "generation": self.manifest.generation if self.manifest else None,
        }


def raw_expired_message(status: PartitionStatus) -> str:
    """Why a partition with late objects over expired raw objects is not compacted, and the way out."""
    return (f"{len(status.late)} late raw object(s) but {len(status.missing)} raw object(s) the Parquet was built "
            "from have expired: the Parquet is kept; raise the raw layer's expiration above the lookback")


def partition_state(
    partition: Partition, raw: Mapping[str, str], manifest: Manifest | None, *, now: datetime,
    grace: timedelta, fingerprint: str | None,
) -> PartitionStatus:
    """Classify one partition (see :class:`PartitionState`); ``fingerprint`` None does not judge the settings."""
    if manifest is None:
        state = PartitionState.PENDING if partition.closed(now, grace) else PartitionState.OPEN
        return PartitionStatus(partition, state, dict(raw))
    late = sorted(k for k, etag in raw.items() if manifest.raw.get(k) != etag)
    missing = sorted(set(manifest.raw) - set(raw))
    if missing:
        state = PartitionState.RAW_EXPIRED
    elif late:
        state = PartitionState.LATE
    elif fingerprint is not None and manifest.fingerprint != fingerprint:
        state = PartitionState.STALE
    else:
        state = PartitionState.COMPACTED
    return PartitionStatus(partition, state, dict(raw), manifest, late, missing)


class ArchiveInventory:
    """Lists the raw layer and the manifests of one archive in S3, and classifies its partitions.

    :param settings: the compacted layer's settings.
    :param s3_client: the boto3 S3 client.
        Default: None — one is created on first use.
    """

    def __init__(self, settings: CompactionSettings, *, s3_client=None) -> None:
        self.settings = settings
        self._s3 = LazyClient("s3", s3_client)

    s3 = client_property("_s3", "The S3 client (created on first use).")

    def statuses(
        self, *, now: datetime, since: datetime | None = None, check_settings: bool = True
    ) -> list[PartitionStatus]:
        """Every partition with raw objects or a manifest created from ``since`` on, oldest first.

        :param now: the reference time (a scheduled run's time, not the clock).
        :param since: the earliest day to look at.
            Default: None — ``now`` minus the settings' lookback.
        :param check_settings: report partitions compacted with other settings as ``STALE`` (only the
            function's own settings can say). Default: True.
        """
        if since is not None:
            self.settings.check_since(since, now)
        start = (since or now - self.settings.lookback).astimezone(UTC).date()
        days = [(start + timedelta(days=n)).isoformat() for n in range((now.astimezone(UTC).date() - start).days + 1)]
        raw: dict[Partition, dict[str, str]] = {}
        sizes: dict[str, int] = {}
        manifests: dict[Partition, Manifest] = {}
        for table in self._tables():
            for day in days:
                for key, etag, size in self._list(f"{self.settings.prefix}table={table}/dt={day}/"):
                    partition = self._raw_partition(key)
                    if partition is not None:
                        raw.setdefault(partition, {})[key] = etag
                        sizes[key] = size
                base = f"{self.settings.compacted_prefix}{MANIFESTS}table={table}/dt={day}"
                hourly = self.settings.granularity is Granularity.HOUR
                for key, _etag, _size in self._list(base + ("/" if hourly else "")):
                    if key.endswith(".json") and (key == base + ".json" or key.startswith(base + "/")):
                        manifest = self.manifest_at(key)
                        manifests[manifest.partition] = manifest
        fingerprint = self.settings.fingerprint() if check_settings else None
        found = []
        for p in sorted(set(raw) | set(manifests)):
            status = partition_state(p, raw.get(p, {}), manifests.get(p), now=now, grace=self.settings.grace,
                                     fingerprint=fingerprint)
            status.raw_sizes = {key: sizes[key] for key in status.raw}
            found.append(status)
        return found

    def manifest(self, partition: Partition) -> Manifest | None:
        """The partition's current manifest, or None when it was never compacted."""
        try:
            return self.manifest_at(partition.manifest_key(self.settings.compacted_prefix))
        except LookupError:
            return None

    def manifest_at(self, key: str) -> Manifest:
        """The manifest stored at ``key``; :class:`ManifestMissingError` (a ``LookupError``) when there is none."""
        try:
            body = self.s3.get_object(Bucket=self.settings.bucket, Key=key)["Body"].read()
        except Exception as error:
            if error_code(error) in ("NoSuchKey", "404"):
                raise ManifestMissingError(key) from None
            raise
        return Manifest.from_json(json.loads(body))

    def due(
        self, report: dict[str, Any], *, now: datetime, since: datetime | None = None
    ) -> Iterator[PartitionStatus]:
        """The partitions due for compaction (:data:`DUE_STATES`), oldest first, each partition accounted on the way.

        Each partition's state is counted in ``report["states"]``; one whose late raw objects came after its
        earlier raw objects expired can no longer be compacted and is added to ``report["failed"]`` in its place
        among the partitions, so a caller's own failures interleave in partition order. ``report`` is complete
        once the iteration ends.

        :param report: the run's report, holding ``states`` (a dict) and ``failed`` (a list).
        :param now: the reference time (a scheduled run's time, not the clock).
        :param since: the earliest day to look at.
            Default: None — ``now`` minus the settings' lookback.
        """
        for status in self.statuses(now=now, since=since):
            report["states"][status.state.value] = report["states"].get(status.state.value, 0) + 1
            if status.state is PartitionState.RAW_EXPIRED and status.late:
                report["failed"].append({"partition": status.partition.path, "error": raw_expired_message(status)})
            if status.state in DUE_STATES:
                yield status

    def status(self, partition: Partition, *, now: datetime) -> PartitionStatus:
        """One partition as it stands now: its raw objects (with sizes) and its manifest, classified."""
        listed = [(key, etag, size) for key, etag, size in self._list(partition.raw_prefix(self.settings.prefix))
                  if self._raw_partition(key) == partition]
        status = partition_state(partition, {key: etag for key, etag, _ in listed}, self.manifest(partition),
                                 now=now, grace=self.settings.grace, fingerprint=self.settings.fingerprint())
        status.raw_sizes = {key: size for key, _, size in listed}
        return status

    def raw_objects(self, partition: Partition) -> dict[str, str]:
        """The partition's raw objects as listed now: key to ETag."""
        return {
            key: etag for key, etag, _size in self._list(partition.raw_prefix(self.settings.prefix))
            if self._raw_partition(key) == partition
        }

    def _raw_partition(self, key: str) -> Partition | None:
        match = _RAW_KEY.search(key[len(self.settings.prefix):]) if key.startswith(self.settings.prefix) else None
        if match is None:
            return None
        hour = match["hour"] if self.settings.granularity is Granularity.HOUR else None
        return Partition(match["table"], match["dt"], hour)

    def _tables(self) -> list[str]:
        tables = set()
        for base in (self.settings.prefix, self.settings.compacted_prefix + MANIFESTS):
            for common in self._common_prefixes(base + "table="):
                tables.add(common[len(base) + len("table="):].rstrip("/"))
        return sorted(tables)

    def _common_prefixes(self, prefix: str) -> Iterable[str]:
        kwargs = {"Bucket": self.settings.bucket, "Prefix": prefix, "Delimiter": "/"}
        while True:
            page = self.s3.list_objects_v2(**kwargs)
            yield from (p["Prefix"] for p in page.get("CommonPrefixes", []))
            if not page.get("IsTruncated"):
                return
            kwargs["ContinuationToken"] = page["NextContinuationToken"]

    def _list(self, prefix: str) -> Iterable[tuple[str, str, int]]:
        kwargs = {"Bucket": self.settings.bucket, "Prefix": prefix}
        while True:
            page = self.s3.list_objects_v2(**kwargs)
            yield from ((o["Key"], o["ETag"], o["Size"]) for o in page.get("Contents", []))
            if not page.get("IsTruncated"):
                return
            kwargs["ContinuationToken"] = page["NextContinuationToken"]
