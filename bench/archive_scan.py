"""One simulated day of telemetry: JSON Lines as the archiver writes them vs the compacted Parquet, for one query.

Run: .venv/bin/python -m bench.archive_scan [--records 1000000] [--workdir DIR]

1. Generates ``--records`` stream records of 500 devices spread over 2026-03-01 (``bench.archiver``'s
   readings) and writes them as the archiver would: batches of 1,000, grouped by ``archive_lines``, one
   gzip JSON Lines object per group, under ``WORKDIR/raw/dynamodb/table=telemetry_2026-03-01/dt=/hour=/``.
2. Compacts the day (``granularity=day``) with ``cdk_ts_runtime._compaction`` (the function's code minus S3) into
   ``WORKDIR/parquet/...``.
3. Runs the typical query, one device over the day with three measures, in DuckDB over each layer;
   checks the two return the same rows, and reports the bytes each read (``rchar`` of /proc/self/io:
   every byte the process read from files, cache or disk) and the median time of three runs.

Exits 1 when a goal is missed: Parquet reads >= 10x fewer bytes, runs >= 5x faster, and is <= 50% of the
JSON Lines' bytes. Results are also written to ``bench/results/archive_scan.md``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import duckdb

from bench.archiver import telemetry_record
from cdk_ts_runtime._archive_lines import group_records
from cdk_ts_runtime._compaction import compact_lines, parquet_files
from cdk_ts_runtime._compaction_plan import ColumnSpec, CompactionSettings, Granularity, Partition, generation_name

BATCH = 1000  # StreamArchiver's default batch_size
PREFIX = "dynamodb/"
COLUMNS = (
    ColumnSpec("device_id", "string", attribute="pk"),
    ColumnSpec("ts", "bigint", attribute="sk"),
    ColumnSpec("site", "string"),
    ColumnSpec("temperature_c", "decimal(6,2)"),
    ColumnSpec("humidity_pct", "decimal(5,1)"),
    ColumnSpec("pressure_hpa", "decimal(6,1)"),
    ColumnSpec("vibration_mm_s", "decimal(6,3)"),
    ColumnSpec("rpm", "bigint"),
    ColumnSpec("status", "string"),
)
# A day per partition: 24 times the rows of an hour, so row groups (sorted by key) each hold a few devices and
# the query's device filter skips most of them by their min/max.
SETTINGS = CompactionSettings(bucket="bench", prefix=PREFIX, compacted_prefix="parquet/dynamodb/", columns=COLUMNS,
                              granularity=Granularity.DAY)
DEVICE = "device-0042"


def write_raw_chunk(root: str, start: int, stop: int, per_second: int) -> int:
    """Archive records ``start``..``stop`` in batches of 1,000, one file per group; the bytes written."""
    rng = random.Random(start)
    written = 0
    for first in range(start, stop, BATCH):
        batch = [telemetry_record(i, rng, per_second=per_second) for i in range(first, min(first + BATCH, stop))]
        for group in group_records(batch):
            path = Path(root) / group.key(PREFIX)
            path.parent.mkdir(parents=True, exist_ok=True)
            body = group.body()
            path.write_bytes(body)
            written += len(body)
    return written


def compact_partition(raw_root: Path, out_root: Path, day_dir: Path) -> tuple[int, int, float]:
    """Compact one day's raw files as the function does; rows, Parquet bytes and seconds."""
    started = time.perf_counter()
    files = sorted(day_dir.glob("hour=*/*.jsonl.gz"))
    table_name, dt = (p.split("=", 1)[1] for p in day_dir.relative_to(raw_root / PREFIX).parts)
    partition = Partition(table_name, dt)
    raw = {str(f.relative_to(raw_root)): str(f.stat().st_size) for f in files}
    rows, _duplicates = compact_lines((f.read_bytes() for f in files), SETTINGS)
    location = out_root / partition.generation_prefix(SETTINGS.compacted_prefix, generation_name(raw, "bench"))
    location.mkdir(parents=True, exist_ok=True)
    size = 0
    for number, body in enumerate(parquet_files(rows, SETTINGS)):
        (location / f"part-{number:05d}.parquet").write_bytes(body)
        size += len(body)
    return rows.num_rows, size, time.perf_counter() - started


def rchar() -> int:
    """Bytes this process has read through read()/pread() so far (Linux /proc/self/io)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


def measure(query: str) -> tuple[list[tuple], int, float]:
    """Rows, bytes read (first run) and median seconds of three runs, each on a fresh DuckDB connection."""
    times, read, rows = [], 0, []
    for run in range(3):
        connection = duckdb.connect(config={"threads": 2})
        before, started = rchar(), time.perf_counter()
        rows = connection.execute(query).fetchall()
        times.append(time.perf_counter() - started)
        if run == 0:
            read = rchar() - before
        connection.close()
    return sorted(rows), read, statistics.median(times)


def queries(root: Path) -> tuple[str, str]:
    """The typical query over each layer: one device, one day, three measures, in time order."""
    raw = f"""
        SELECT CAST(json_extract_string(newImage, '$.sk.N') AS BIGINT) AS ts,
               CAST(json_extract_string(newImage, '$.temperature_c.N') AS DECIMAL(6, 2)) AS temperature_c,
               CAST(json_extract_string(newImage, '$.humidity_pct.N') AS DECIMAL(5, 1)) AS humidity_pct,
               CAST(json_extract_string(newImage, '$.pressure_hpa.N') AS DECIMAL(6, 1)) AS pressure_hpa
        FROM read_json('{root}/raw/{PREFIX}**/*.jsonl.gz', format = 'newline_delimited', hive_partitioning = true,
                       hive_types = {{'table': 'VARCHAR', 'dt': 'VARCHAR', 'hour': 'VARCHAR'}},
                       columns = {{eventID: 'VARCHAR', eventName: 'VARCHAR', sequenceNumber: 'VARCHAR',
                                   approximateCreationDateTime: 'VARCHAR', keys: 'VARCHAR', newImage: 'VARCHAR',
                                   oldImage: 'VARCHAR', userIdentity: 'VARCHAR'}})
        WHERE dt = '2026-03-01' AND json_extract_string(keys, '$.pk.S') = '{DEVICE}'
    """
    parquet = f"""
        SELECT ts, temperature_c, humidity_pct, pressure_hpa
        FROM read_parquet('{root}/{SETTINGS.compacted_prefix}**/*.parquet', hive_partitioning = true,
                          hive_types = {{'table': 'VARCHAR', 'dt': 'VARCHAR', 'gen': 'VARCHAR'}})
        WHERE dt = '2026-03-01' AND device_id = '{DEVICE}'
    """
    return raw, parquet


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--workdir", help="keep the files here (default: a temporary directory, removed)")
    args = parser.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="archive-scan-"))
    per_second = max(1, -(-args.records // 86_400))  # the whole day, not less
    try:
        started = time.perf_counter()
        chunks = [(i, min(i + 100_000, args.records)) for i in range(0, args.records, 100_000)]
        with ProcessPoolExecutor(max_workers=2) as pool:
            raw_bytes = sum(pool.map(write_raw_chunk, [str(root / "raw")] * len(chunks),
                                     [c[0] for c in chunks], [c[1] for c in chunks], [per_second] * len(chunks)))
        generated = time.perf_counter() - started
        days = sorted(p for p in (root / "raw" / PREFIX).glob("table=*/dt=*") if p.is_dir())
        results = [compact_partition(root / "raw", root, d) for d in days]
        rows = sum(r[0] for r in results)
        parquet_bytes = sum(r[1] for r in results)
        compaction = sum(r[2] for r in results)
        raw_query, parquet_query = queries(root)
        raw_rows, raw_read, raw_time = measure(raw_query)
        parquet_rows, parquet_read, parquet_time = measure(parquet_query)
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)
    checks = {
        "same rows from both layers": raw_rows == parquet_rows and len(raw_rows) > 0,
        "every record compacted once": rows == args.records,
        "Parquet reads >= 10x fewer bytes": raw_read >= 10 * parquet_read,
        "Parquet runs >= 5x faster": raw_time >= 5 * parquet_time,
        "Parquet <= 50% of the JSON Lines' bytes": parquet_bytes <= 0.5 * raw_bytes,
    }
    table = "\n".join([
        f"{args.records:,} changes of 500 devices over 2026-03-01 ({len(days)} daily partition); "
        f"query: {DEVICE}, one day, three measures ({len(raw_rows):,} rows)",
        "",
        "| layer | bytes stored | bytes the query read | median query s |",
        "|---|---|---|---|",
        f"| gzip JSON Lines | {raw_bytes:,} | {raw_read:,} | {raw_time:.3f} |",
        f"| Parquet (zstd, sorted) | {parquet_bytes:,} | {parquet_read:,} | {parquet_time:.3f} |",
        f"| ratio | {parquet_bytes / raw_bytes:.1%} | {raw_read / max(parquet_read, 1):.0f}x fewer | "
        f"{raw_time / parquet_time:.0f}x faster |",
        "",
        f"Generating and archiving the raw layer: {generated:.0f} s (2 processes); compacting it: "
        f"{compaction:.1f} s in one process ({rows / compaction:,.0f} rows/s).",
        "",
        *[f"- {'ok' if passed else 'MISSED'}: {name}" for name, passed in checks.items()],
    ])
    print(table)
    Path(__file__).with_name("results").joinpath("archive_scan.md").write_text(table + "\n")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
