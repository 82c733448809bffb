"""Synth time of the sample app vs the floor (its own template loaded as L1 resources); asset sizes; import time.

Run: .venv/bin/python -m bench.synth [--repeat 5]

Besides wall seconds, each synth's CPU seconds are taken: user + system of the whole process tree (Python and
the jsii node processes it starts and reaps), the figure that stays comparable on a shared machine.

The floor is the sample app's synthesized template loaded with ``cloudformation_include``: the same
resources with no construct logic at all, so the ratio is what the constructs (cdk-ts's and
aws-cdk-lib's L2s) cost. It needs no hand-written copy of the stack that would drift from the app.
cdk-nag is left out of both. Each synth runs in a fresh interpreter, as ``cdk synth`` does, and the
two are interleaved in one run so machine noise hits them alike.

Each app synth and the floor synth after it are a pair: the median of the pairs' ratios comes with a
distribution-free 95 % interval (order statistics of the binomial), so a run says how sure its ratio is.
``--samples-out FILE`` writes the pairs as JSON; ``--pool FILE [FILE ...]`` reads such files (or one whose
``runs`` lists several, as ``bench/results/synth_pairs.json``) and gives the ratio and interval over all their
pairs, without synthesizing.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

REPO = Path(__file__).resolve().parents[1]
WITH_LIBRARY = """
import sys
from aws_cdk import App
import app
app.build_app(App(outdir=sys.argv[1]), checks=False).synth()
"""
INCLUDED = """
import sys
from aws_cdk import App, Stack, cloudformation_include
app = App(outdir=sys.argv[1])
stack = Stack(app, "CdkTsSample")
cloudformation_include.CfnInclude(stack, "Template", template_file=sys.argv[2])
app.synth()
"""


def zipped_size(directory: Path) -> int:
    """Bytes of ``directory`` zipped with deflate, every file under it (as the CDK CLI zips an asset)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            archive.write(path, path.relative_to(directory))
    return len(buffer.getvalue())


def _children_cpu() -> float:
    """User + system CPU seconds of every child process reaped so far, with their reaped descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(code: str, *args: str, cwd: Path = REPO) -> tuple[float, float]:
    """Wall and CPU seconds of ``code`` run in a fresh interpreter in ``cwd`` (CPU of its whole process tree).

    ``cdk_ts`` and ``app`` come from ``cwd`` (the script's directory leads ``sys.path``), and ``cdk_ts_runtime``
    from its ``lambdas/`` (``PYTHONPATH`` is searched before the editable install's finder).
    """
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "PYTHONPATH": str(cwd / "lambdas")}
    started, cpu_started = time.perf_counter(), _children_cpu()
    subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - started, _children_cpu() - cpu_started


def _print_ratios(rows: dict[str, list[tuple[float, float]]]) -> None:
    """The median wall and CPU seconds of each row, their ratios to the last row (the floor), and every sample."""
    medians = {
        name: (statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples))
        for name, samples in rows.items()
    }
    floor_wall, floor_cpu = list(medians.values())[-1]
    repeat = len(list(rows.values())[-1])
    validation = "off" if os.environ.get("CDK_VALIDATION") == "false" else "on"  # as aws-cdk-lib reads it
    print(f"aws-cdk-lib's built-in template validation: {validation} (CDK_VALIDATION)\n")
    print(f"| synth, fresh interpreter (median of {repeat}) | wall s | vs the floor | CPU s | vs the floor |")
    print("|---|---|---|---|---|")
    for name, (wall, cpu) in medians.items():
        print(f"| {name} | {wall:.2f} | {wall / floor_wall:.2f}x | {cpu:.2f} | {cpu / floor_cpu:.2f}x |")
    for unit, index in (("wall", 0), ("CPU", 1)):
        print(f"\nall samples ({unit} s): " + "; ".join(
            f"{name.split(' (')[0]} " + ", ".join(f"{sample[index]:.2f}" for sample in samples)
            for name, samples in rows.items()
        ))


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The median of ``values`` and a distribution-free interval that holds the true median with ``confidence``.

    The true median lies below the (d+1)-th smallest of n values when at most d of them fall below it, a
    chance of P(Binomial(n, 1/2) <= d). The interval drops d values from each end, for the largest d whose chance
    is at most half of ``1 - confidence``. Under 6 values even d = 0 does not reach 95 %: the interval is the whole
    range, and covers the median less often than ``confidence`` says.
    """
    ordered = sorted(values)
    n = len(ordered)
    drop = 0
    while drop + 1 < (n + 1) // 2 and sum(math.comb(n, j) for j in range(drop + 2)) / 2**n <= (1 - confidence) / 2:
        drop += 1
    return statistics.median(ordered), ordered[drop], ordered[n - 1 - drop]


def _median_text(values: list[float], unit: str, digits: int) -> str:
    """``median M, 95 % interval L-H`` of ``values`` (the range, labelled so, under 6 values)."""
    middle, low, high = median_interval(values)
    spread = "95 % interval" if len(values) >= 6 else "range (fewer than 6 pairs: not a 95 % interval)"
    return f"median {middle:.{digits}f}{unit}, {spread} {low:.{digits}f}{unit}-{high:.{digits}f}{unit}"


def _print_paired(pairs: list[tuple[float, float]], source: str) -> None:
    """The median of the app/floor ratios of ``pairs`` (wall s) and its 95 % interval (the range under 6 pairs)."""
    ratios = _median_text([app / floor for app, floor in pairs], "x", 3)
    print(f"\npaired ratio ({source}, {len(pairs)} pairs): {ratios}")


def _print_pooled(paths: list[Path]) -> None:
    """The paired wall ratio over every run in ``paths``, then the CPU ratio and the app's excess over the floor."""
    runs = pooled_runs(paths)
    wall = [pair for run in runs for pair in run]
    cpu = [pair for run in pooled_runs(paths, "cpu_pairs") for pair in run]
    _print_paired(wall, f"{len(runs)} runs in {len(paths)} file(s)")
    print(f"paired CPU ratio: {_median_text([app / floor for app, floor in cpu], 'x', 3)}")
    print(f"the app's excess over the floor, wall: {_median_text([app - floor for app, floor in wall], ' s', 2)}")


def pooled_runs(paths: list[Path], kind: str = "wall_pairs") -> list[list[tuple[float, float]]]:
    """Each run's (app, floor) pairs of ``kind`` (``wall_pairs`` or ``cpu_pairs``, seconds) in ``paths``:
    ``--samples-out`` files, or files whose ``runs`` list several."""
    runs = []
    for path in paths:
        data = json.loads(path.read_text())
        runs.extend([(app, floor) for app, floor in run[kind]] for run in data.get("runs") or [data])
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--synth-only", action="store_true", help="skip the asset sizes and handler imports")
    parser.add_argument(
        "--baseline", type=Path, help="also synthesize the sample app of this checkout (e.g. a git archive of main), "
        "interleaved with the others, to measure a change against the same floor in one run"
    )
    parser.add_argument("--samples-out", type=Path, help="write each pair's wall and CPU seconds here as JSON")
    parser.add_argument(
        "--pool", type=Path, nargs="+", help="only print the paired ratios and excess over these --samples-out files"
    )
    args = parser.parse_args()
    if args.pool:
        _print_pooled(args.pool)
        return
    with tempfile.TemporaryDirectory() as tmp:
        library_out = Path(tmp, "lib")
        run(WITH_LIBRARY, str(library_out))  # also warms the file cache
        template = Path(tmp, "floor.template.json")
        body = json.loads((library_out / "CdkTsSample.template.json").read_text())
        body.get("Parameters", {}).pop("BootstrapVersion", None)  # the including stack adds its own
        body.pop("Rules", None)
        template.write_text(json.dumps(body))
        rows: dict[str, list[tuple[float, float]]] = {"sample app with cdk-ts constructs": []}
        if args.baseline:
            rows[f"sample app at {args.baseline} (baseline)"] = []
        rows["same template as L1 resources (CfnInclude), the floor"] = []
        for index in range(args.repeat):
            rows["sample app with cdk-ts constructs"].append(run(WITH_LIBRARY, str(Path(tmp, f"l{index}"))))
            if args.baseline:
                rows[f"sample app at {args.baseline} (baseline)"].append(
                    run(WITH_LIBRARY, str(Path(tmp, f"b{index}")), cwd=args.baseline.resolve())
                )
            rows["same template as L1 resources (CfnInclude), the floor"].append(
                run(INCLUDED, str(Path(tmp, f"i{index}")), str(template))
            )
        _print_ratios(rows)
        app_samples = rows["sample app with cdk-ts constructs"]
        floor_samples = rows["same template as L1 resources (CfnInclude), the floor"]
        wall_pairs = [(app[0], floor[0]) for app, floor in zip(app_samples, floor_samples, strict=True)]
        _print_paired(wall_pairs, "this run")
        if args.samples_out:
            args.samples_out.write_text(json.dumps({
                "wall_pairs": wall_pairs,
                "cpu_pairs": [(app[1], floor[1]) for app, floor in zip(app_samples, floor_samples, strict=True)],
            }) + "\n")

    if args.synth_only:
        return
    from cdk_ts._assets import zipped_asset

    print("\n| asset (the zip the CDK CLI uploads) | KB |\n|---|---|")
    for name, size in (
        ("cdk-ts functions' code (cdk_ts_runtime/)", zipped_asset()[0].stat().st_size),
        ("RuntimeLayer (python/cdk_ts_runtime/)", zipped_asset("python")[0].stat().st_size),
        ("example ingest function (examples/ingest/, zipped by the CLI)", zipped_size(REPO / "examples" / "ingest")),
    ):
        print(f"| {name} | {size / 1024:.1f} |")

    print("\n| handler module | import time, fresh interpreter (median ms) |\n|---|---|")
    for module in ("cdk_ts_runtime.handlers.rotation", "cdk_ts_runtime.handlers.archiver", "examples.ingest.ingest"):
        samples = []
        for _ in range(5):
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import time; t=time.perf_counter(); import {module}; print((time.perf_counter()-t)*1000)",
                ],
                cwd=REPO,
                capture_output=True,
                text=True,
                check=True,
            )
            samples.append(float(out.stdout))
        print(f"| {module} (boto3 included) | {statistics.median(samples):.0f} |")


if __name__ == "__main__":
    main()
