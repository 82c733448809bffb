"""jsii round trips and CPU time of one synth of the sample app, attributed to the code that made them.

Run: .venv/bin/python -m bench.synth_trips [--top 25]

Wall time on a shared machine is noise; the number of requests Python sends to the jsii node process is not,
and the CPU seconds of both processes are much less noisy than the wall clock. Each request is counted by kind
(create, get, invoke, ...) and by the innermost frame of cdk-ts (``cdk_ts/``) or the app (``app.py``) on the
stack when it was sent, so a construct's share is visible. Callbacks node makes into Python (overrides) answer
inside a request and are counted as ``complete``.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

REPO = Path(__file__).resolve().parents[1]
_OURS = (str(REPO / "cdk_ts") + os.sep, str(REPO / "app.py"))


def _origin() -> str:
    """``file:line function`` of the innermost cdk-ts or app frame on the stack, or ``(elsewhere)``."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_OURS):
            return f"{os.path.relpath(name, REPO)}:{frame.f_lineno} {frame.f_code.co_name}"
        frame = frame.f_back
    return "(elsewhere)"


def _stat(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (the state is field 0)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _tree_cpu(pid: int) -> float:
    """User + system CPU seconds of a live process and its live descendants (jsii's node runs the kernel in a
    child of the process Python starts)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
            except OSError:
                continue
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        fields = _stat(current)
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        todo.extend(children.get(current, []))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    from jsii._kernel.providers import process

    by_kind: collections.Counter[str] = collections.Counter()
    by_origin: collections.Counter[str] = collections.Counter()
    send = process._NodeProcess.send

    def counted(self, request, response_type):
        by_kind[type(request).__name__.removesuffix("Request")] += 1
        by_origin[_origin()] += 1
        return send(self, request, response_type)

    process._NodeProcess.send = counted
    sys.path.insert(0, str(REPO))
    started, cpu_started = time.perf_counter(), time.process_time()
    from aws_cdk import App

    import app

    imported = sum(by_kind.values())
    with tempfile.TemporaryDirectory() as out:
        app.build_app(App(outdir=out), checks=False).synth()
    wall, python_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    from jsii._kernel import Kernel

    node_cpu = _tree_cpu(Kernel().provider._process._process.pid)
    print(f"round trips: {sum(by_kind.values())} ({imported} while importing)")
    print("by kind: " + ", ".join(f"{kind} {count}" for kind, count in by_kind.most_common()))
    print(f"wall {wall:.2f} s; CPU: python {python_cpu:.2f} s, node {node_cpu:.2f} s")
    print("\n| round trips | innermost cdk-ts / app frame |\n|---|---|")
    for origin, count in by_origin.most_common(args.top):
        print(f"| {count} | {origin} |")


if __name__ == "__main__":
    main()
