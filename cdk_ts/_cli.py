"""What every cdk-ts command does at its edge: a closed pipe and Ctrl-C end quietly, never with a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

#: The exit status a shell reports for a process ended by SIGPIPE (128 + 13).
EXIT_CLOSED_PIPE = 141
#: The exit status a shell reports for a process ended by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130


def quiet_on_closed_pipe(run: Callable[[], int]) -> int:
    """``run()``'s exit code; a reader that went away (``cdk-ts ... | head``) or Ctrl-C ends it quietly.

    A closed pipe follows Python's documented recipe (library/signal, "Note on SIGPIPE"): stdout is pointed
    at devnull so the interpreter's final flush cannot raise again, and the exit status is 141, as a shell
    reports a process ended by SIGPIPE.
    """
    try:
        code = run()
        sys.stdout.flush()  # a closed pipe shows here, while it can still be handled
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_CLOSED_PIPE
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
