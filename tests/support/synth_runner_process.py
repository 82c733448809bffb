"""The process behind :class:`tests.support.synth_runner.SynthRunner`: CDK apps run one after another, each as
``python app.py`` would run it in the folder this process started in.

Run by path (``python synth_runner_process.py``) with that folder as the working directory. Reads one JSON request
a line on stdin, ``{"app": path, "outdir": path, "log": path}``, and answers on the stdout it started with one JSON
line, ``{"error": null}`` or ``{"error": "<traceback>"}``. What the app prints (and jsii's Node process with it)
goes to the request's log file. It exits when stdin closes: when the test process that started it is gone.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback


def main() -> None:
    """Start jsii's Node process in the working directory, then serve requests until stdin closes."""
    answers = os.fdopen(os.dup(1), "w")  # the answers keep the real stdout; fd 1 is each app's log while it runs
    # `python app.py` puts the app's folder first on sys.path; run by path, this process got its own folder there
    sys.path[0] = os.getcwd()
    import aws_cdk  # starts jsii's Node process, here: it resolves relative asset paths against this folder

    outdir: list[str] = [""]
    _write_apps_to(aws_cdk.App, outdir)
    for line in sys.stdin:
        request = json.loads(line)
        outdir[0] = request["outdir"]
        try:
            error = run_app(request["app"], request["log"])
        except Exception:  # a bad request (a log it cannot open) fails that request, not the process
            error = traceback.format_exc()
        answers.write(json.dumps({"error": error}) + "\n")
        answers.flush()


def _write_apps_to(app_class: type, outdir: list[str]) -> None:
    """Give every ``App`` built without an ``outdir`` the current request's: the Node process read ``CDK_OUTDIR``
    once, when it started, so setting the variable per app would not reach it."""
    original = app_class.__init__

    def init(self, *args, **kwargs) -> None:
        if kwargs.get("outdir") is None:
            kwargs["outdir"] = outdir[0]
        original(self, *args, **kwargs)

    app_class.__init__ = init


def run_app(app: str, log: str) -> str | None:
    """Run ``app`` as ``__main__`` in a fresh namespace, its output in ``log``; its traceback if it failed.

    ``os.environ`` is restored afterwards, so one app's variables do not reach the next.
    """
    environ = dict(os.environ)
    saved = os.dup(1), os.dup(2)
    with open(log, "a") as out:
        _flush()
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        try:
            runpy.run_path(app, run_name="__main__")
        except SystemExit as exited:  # as `python app.py` would: exit 0 is success
            return None if exited.code in (None, 0) else traceback.format_exc()
        except Exception:
            return traceback.format_exc()
        finally:
            _flush()
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            os.environ.clear()
            os.environ.update(environ)
    return None


def _flush() -> None:
    sys.stdout.flush()
    sys.stderr.flush()


if __name__ == "__main__":
    main()
