"""The scenario's progress output, shared by its entry point and its step modules, and where functions write."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

#: Each deployed function's own output while the scenario runs its handler: build/ is ignored by git.
LOG_DIR = Path(__file__).resolve().parents[1] / "build" / "scenario-logs"
_started: set[Path] = set()  # files this run has written: the first write of a run starts the file afresh


def say(text: str = "") -> None:
    """Progress output a person can follow."""
    print(text, flush=True)


@contextlib.contextmanager
def function_output(function: str, log_dir: Path = LOG_DIR) -> Iterator[Path]:
    """Send what a handler writes to ``log_dir/<function>.log``, as Lambda sends it to the function's log stream.

    In Lambda a function's stdout and stderr go to CloudWatch Logs, which reads the EMF metric lines among them
    (its JSON log lines too); here they go to a file of the function's own, so the scenario's output stays the
    steps a person follows. Yields the file's path.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / f"{function}.log"
    mode = "a" if path in _started else "w"
    _started.add(path)
    with path.open(mode) as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        yield path
