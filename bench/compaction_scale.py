"""Compaction at scale: an hour of 1 and 5 million changes within 1 GB of address space; 72 partitions fanned out.

Run: .venv/bin/python -m bench.compaction_scale [--sizes 1000000,5000000] [--limit-mib 1024] [--workdir DIR]

1. Writes one simulated hour of the sample telemetry (``bench.archiver``'s readings, the archiver's objects of
   1,000 records, byte for byte: ``bench.raw_hour``) per size, kept in ``--workdir`` for the next run.
2. For each size, a fresh process with ``resource.RLIMIT_AS`` at ``--limit-mib`` compacts the hour as the
   function does (objects read one at a time): out of core (DuckDB), then in memory (today's sort), and reports
   peak resident memory (``ru_maxrss``), peak address space (``VmPeak``), seconds and changes a second.
   ``MALLOC_ARENA_MAX=2`` keeps glibc from reserving 64 MB of address space per thread (mallopt(3)).
3. Checks with DuckDB that the Parquet holds the same rows as the JSON Lines (one per ``eventID``, the same
   keys, sequence numbers and images) in key order.
4. Plans 72 due hourly partitions (moto S3 and SQS), drains the queue one message per invocation, as the
   event source mapping does, and checks that no invocation compacted more than one partition.

Exits 1 when a goal is missed. Results go to ``bench/results/compaction_scale.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import duckdb

from bench.archive_scan import COLUMNS, PREFIX
from bench.raw_hour import check, write_fast_chunk

HOUR = 3600
#: Today's in-memory compaction on this VM (bench/README.md, compaction limits: the fit over 0.1-1 million rows).
TODAY_CHANGES_PER_SECOND = 8_145
RAW_COLUMNS = ("{eventID: 'VARCHAR', sequenceNumber: 'VARCHAR', keys: 'VARCHAR', newImage: 'VARCHAR', "
               "oldImage: 'VARCHAR'}")


def settings():
    """Hourly compaction of the sample telemetry's declared columns."""
    from cdk_ts_runtime._compaction_plan import CompactionSettings

    return CompactionSettings(bucket="bench", prefix=PREFIX, columns=COLUMNS)


def generate(root: Path, changes: int) -> Path:
    """One hour of ``changes`` raw records under ``root`` (reused when complete); the hour's directory."""
    done = root / "complete"
    if not done.exists():
        check()  # the fast writer gives the archiver's bytes
        per_second = -(-changes // HOUR)
        chunks = [(i, min(i + 50_000, changes)) for i in range(0, changes, 50_000)]
        with ProcessPoolExecutor(max_workers=2) as pool:
            list(pool.map(write_fast_chunk, [str(root)] * len(chunks), [c[0] for c in chunks],
                          [c[1] for c in chunks], [per_second] * len(chunks)))
        done.write_text("")
    (hour,) = [p for p in (root / PREFIX).glob("table=*/dt=*/hour=*") if p.is_dir()]
    return hour


def child(engine: str, source: str, out: str, limit_mib: int) -> None:
    """Compact the hour under ``source`` into ``out`` with ``engine`` within ``limit_mib`` of address space."""
    limit = limit_mib * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from cdk_ts_runtime._compaction import compact_lines, write_parquet_files
    from cdk_ts_runtime._compaction_sort import SortedChanges, sorted_changes

    files = sorted(Path(source).glob("*.jsonl.gz"))
    bodies = (f.read_bytes() for f in files)
    started = time.perf_counter()
    try:
        if engine == "in-memory":
            rows = SortedChanges.of_table(*compact_lines(bodies, settings()))
            written = list(write_parquet_files(rows.batches(), rows.schema, settings(), Path(out)))
        else:
            # one DuckDB thread: each thread's allocator reserves address space, which RLIMIT_AS counts
            with sorted_changes(bodies, settings(), memory_limit_mib=limit_mib // 5, directory=out,
                                threads=1) as rows:
                written = list(write_parquet_files(rows.batches(), rows.schema, settings(), Path(out)))
    except MemoryError:
        print(json.dumps({"error": "MemoryError", "seconds": time.perf_counter() - started}))
        return
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "rows": rows.num_rows, "duplicates": rows.duplicates, "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "raw_bytes": sum(f.stat().st_size for f in files), "parquet_bytes": sum(p.stat().st_size for p in written),
        "files": [str(p) for p in written], "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_address_space_mib": vm_peak_mib(),
    }))


def vm_peak_mib() -> float:
    """This process's peak address space (``VmPeak`` of /proc/self/status), the figure RLIMIT_AS bounds."""
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in status if line.startswith("VmPeak")) / 1024


def run_child(engine: str, hour: Path, out: Path, limit_mib: int) -> dict:
    """:func:`child` in a fresh process."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.parquet"):
        stale.unlink()
    answer = subprocess.run(
        [sys.executable, "-m", "bench.compaction_scale", "--child", engine, str(hour), str(out), str(limit_mib)],
        capture_output=True, text=True, check=False,
        # glibc would reserve 64 MB of address space per thread (mallopt(3)); pyarrow's mimalloc reserves large
        # arenas: under RLIMIT_AS both count what is reserved, not what is used
        env={**os.environ, "MALLOC_ARENA_MAX": "2", "ARROW_DEFAULT_MEMORY_POOL": "system"},
    )
    if answer.returncode != 0:
        errors = [line for line in answer.stderr.splitlines() if "Error" in line]
        return {"error": (errors or [f"exit {answer.returncode}"])[-1]}
    return json.loads(answer.stdout.strip().splitlines()[-1])


def same_rows(hour: Path, files: list[str]) -> bool:
    """DuckDB: the Parquet's rows are the JSON Lines' events, once each, with the same fields, in key order."""
    connection = duckdb.connect(config={"threads": 2, "memory_limit": "1GB"})
    connection.execute(f"""CREATE VIEW raw AS SELECT DISTINCT eventID AS eventid, keys, sequenceNumber AS seq
        FROM read_json('{hour}/*.jsonl.gz', format = 'newline_delimited', columns = {RAW_COLUMNS})""")
    connection.execute(
        f"CREATE VIEW compacted AS SELECT eventid, keys, sequencenumber AS seq FROM read_parquet({files!r})")
    (missing,) = connection.execute(
        "SELECT count(*) FROM (SELECT * FROM raw EXCEPT ALL SELECT * FROM compacted)").fetchone()
    (extra,) = connection.execute(
        "SELECT count(*) FROM (SELECT * FROM compacted EXCEPT ALL SELECT * FROM raw)").fetchone()
    (unordered,) = connection.execute(f"""SELECT count(*) FROM (
        SELECT keys, lag(keys) OVER (ORDER BY file_row_number, filename) AS before
        FROM read_parquet({files!r}, file_row_number = true, filename = true)) WHERE keys < before""").fetchone()
    return missing == extra == unordered == 0


def fan_out(partitions: int, changes_each: int) -> dict:
    """Plan ``partitions`` due hours on moto S3 and SQS and drain the queue a message per invocation."""
    from bench.compaction_fanout_run import plan_and_drain

    return plan_and_drain(partitions, changes_each)


def table(results: dict[int, dict[str, dict]], limit_mib: int) -> list[str]:
    """The results as Markdown."""
    lines = [f"Address-space limit {limit_mib:,} MiB (RLIMIT_AS); today's speed {TODAY_CHANGES_PER_SECOND:,} "
             "changes/s (compaction limits).", "",
             "| changes | engine | raw gzip MB | Parquet MB | peak RSS MiB | peak address space MiB | seconds | "
             "CPU seconds | changes/s | vs today | same rows (DuckDB) |", "|---" * 11 + "|"]
    for size, by_engine in results.items():
        for engine, r in by_engine.items():
            if "error" in r:
                lines.append(f"| {size:,} | {engine} | | | | | | | | | {r['error']} |")
                continue
            speed = r["rows"] / r["seconds"]
            lines.append(
                f"| {size:,} | {engine} | {r['raw_bytes'] / 1e6:.1f} | {r['parquet_bytes'] / 1e6:.1f} | "
                f"{r['peak_rss_mib']:.0f} | {r['peak_address_space_mib']:.0f} | {r['seconds']:.1f} | "
                f"{r['cpu_seconds']:.1f} | {speed:,.0f} | "
                f"{speed / TODAY_CHANGES_PER_SECOND:.1f}x | {r.get('same_rows', '')} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000000,5000000")
    parser.add_argument("--limit-mib", type=int, default=1024)
    parser.add_argument("--engines", default="out-of-core,in-memory")
    parser.add_argument("--partitions", type=int, default=72)
    parser.add_argument("--workdir", help="keep the raw hours here for the next run (default: a temporary one)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        engine, source, out, limit = args.child
        child(engine, source, out, int(limit))
        return 0
    root = Path(args.workdir or tempfile.mkdtemp(prefix="compaction-scale-"))
    results: dict[int, dict[str, dict]] = {}
    ok = True
    for size in (int(s) for s in args.sizes.split(",")):
        hour = generate(root / f"raw-{size}", size)
        results[size] = {}
        for engine in args.engines.split(","):
            r = run_child(engine, hour, root / f"out-{size}-{engine}", args.limit_mib)
            if "error" not in r:
                r["same_rows"] = same_rows(hour, r["files"])
            results[size][engine] = r
            print(size, engine, {k: v for k, v in r.items() if k != "files"}, flush=True)
        best = results[size].get("out-of-core", {})
        ok &= "error" not in best and best["same_rows"] and best["peak_address_space_mib"] <= args.limit_mib
    lines = table(results, args.limit_mib)
    if args.partitions:
        spread = fan_out(args.partitions, 200)
        ok &= spread["max_partitions_per_invocation"] == 1 and spread["compacted"] == args.partitions
        lines += ["", f"Fan-out: {spread['partitions']} due hourly partitions planned in "
                  f"{spread['plan_seconds']:.1f} s "
                  f"({spread['queued']} messages), then {spread['invocations']} invocations: each compacted "
                  f"{spread['max_partitions_per_invocation']} partition at most; {spread['compacted']} compacted."]
    text = "\n".join(lines)
    print(text)
    Path(__file__).with_name("results").joinpath("compaction_scale.md").write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
