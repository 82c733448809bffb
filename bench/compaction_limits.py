"""How large a partition the compaction function compacts within a memory budget and Lambda's 15 minutes.

Run: .venv/bin/python -m bench.compaction_limits [--sizes 25000,50000,100000,200000]

For each size, the raw layer of one partition (``bench.archiver``'s telemetry, the archiver's objects of
1,000 records) is written to a temporary directory; a fresh process then compacts it exactly as the
function does (``compact_lines`` then ``parquet_files``, objects read one at a time as from S3) and reports
its peak resident memory (``resource.getrusage``: ru_maxrss, the figure Lambda's memory limit applies
to), Arrow's own peak allocation, and the time. A straight line through the points gives the largest
partition for a function memory size, with 10% headroom, and the rows the 15-minute timeout allows.
Results go to ``bench/results/compaction_limits.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.archive_scan import PREFIX, write_raw_chunk

HOUR = 3600
MEMORY_SIZES_MB = (1024, 3008, 10_240)  # Lambda: 3008 is the construct's default, 10,240 the most
TIMEOUT_S = 900


def child(directory: str) -> None:
    """Compact the one partition under ``directory``; print its measurements as JSON."""
    from dataclasses import replace

    import pyarrow as pa

    from bench.archive_scan import SETTINGS
    from cdk_ts_runtime._compaction import compact_lines, parquet_files

    settings = replace(SETTINGS, granularity="hour")
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    files = sorted(Path(directory).rglob("*.jsonl.gz"))
    started = time.perf_counter()
    table, _duplicates = compact_lines((f.read_bytes() for f in files), settings)
    output = sum(len(body) for body in parquet_files(table, settings))
    elapsed = time.perf_counter() - started
    print(json.dumps({
        "rows": table.num_rows, "raw_bytes": sum(f.stat().st_size for f in files), "parquet_bytes": output,
        "seconds": elapsed, "baseline_mb": baseline / 1024,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # Linux: kilobytes
        "arrow_peak_mb": pa.default_memory_pool().max_memory() / 2**20,
    }))


def measure(records: int) -> dict:
    """Write one partition of ``records`` raw records and compact it in a fresh process."""
    root = Path(tempfile.mkdtemp(prefix="compaction-limits-"))
    try:
        write_raw_chunk(str(root), 0, records, per_second=-(-records // HOUR))
        out = subprocess.run([sys.executable, "-m", "bench.compaction_limits", "--child", str(root / PREFIX)],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares ``(intercept, slope)`` of y on x."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    return mean_y - slope * mean_x, slope


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="25000,50000,100000,200000")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    results = [measure(int(size)) for size in args.sizes.split(",")]
    intercept, per_row = fit([(r["rows"], r["peak_mb"]) for r in results])
    rows_per_second = sum(r["rows"] for r in results) / sum(r["seconds"] for r in results)
    lines = [
        "| rows in the partition | raw gzip MB | Parquet MB | peak RSS MB | Arrow peak MB | seconds | rows/s |",
        "|---|---|---|---|---|---|---|",
        *[f"| {r['rows']:,} | {r['raw_bytes'] / 2**20:.1f} | {r['parquet_bytes'] / 2**20:.1f} | {r['peak_mb']:.0f} | "
          f"{r['arrow_peak_mb']:.0f} | {r['seconds']:.1f} | {r['rows'] / r['seconds']:,.0f} |" for r in results],
        "",
        f"Peak memory ~ {intercept:.0f} MB + {per_row * 1e6:.0f} MB per million rows (process start and imports: "
        f"{results[0]['baseline_mb']:.0f} MB); {rows_per_second:,.0f} rows/s on this machine.",
        "",
        "| function memory | largest partition (10% headroom) | rows in 15 minutes at this speed |",
        "|---|---|---|",
        *[f"| {mb:,} MB | {max(0, (0.9 * mb - intercept) / per_row):,.0f} rows | {rows_per_second * TIMEOUT_S:,.0f} |"
          for mb in MEMORY_SIZES_MB],
    ]
    text = "\n".join(lines)
    print(text)
    Path(__file__).with_name("results").joinpath("compaction_limits.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
