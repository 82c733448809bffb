"""One long-lived process that synthesizes CDK apps one after another, each as ``python app.py`` would.

Why: a fresh ``python app.py`` spends about 13 CPU seconds starting Python, jsii's Node process and aws-cdk-lib
before the app does anything; the docs' construct snippets paid that once each. Here it is paid once per runner.

What differs from a fresh process, and how each difference is kept out:

- jsii's Node process resolves a relative ``Code.from_asset("src/...")`` against the working directory it started
  in, so the runner starts in a fixed folder (:attr:`SynthRunner.folder`) and every app runs from there:
  :meth:`SynthRunner.fresh_folder` empties it, the caller writes the app and its asset folders into it.
- ``App()`` reads its default ``outdir`` from ``CDK_OUTDIR`` in the Node process's environment, once, when that
  process starts; so the runner wraps ``aws_cdk.App.__init__`` to give every ``App`` built without an ``outdir``
  the one the request names (``tests/support/synth_runner_process.py``).
- Each app runs as ``__main__`` from its own file (``runpy.run_path``) in a fresh namespace, with ``os.environ``
  restored after it. Modules it imports (aws_cdk, cdk_ts) stay loaded, as they would in one ``cdk synth``.
- A failing app fails only its own call, with its traceback and output: the runner keeps serving the next one.
  If the process itself dies, the call fails with its log and the next call starts a new process.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

_PROCESS = Path(__file__).with_name("synth_runner_process.py")


class SynthRunner:
    """Synthesizes the app written to :attr:`folder` into the outdir each call names, in one process it starts
    on first use; :meth:`stop` ends it."""

    def __init__(self, root: Path, *, timeout: float = 600) -> None:
        self.folder = root / "app"
        self.folder.mkdir(parents=True, exist_ok=True)
        self._log = root / "runner.log"
        self._timeout = timeout
        self._process: subprocess.Popen[str] | None = None

    def fresh_folder(self) -> Path:
        """The runner's folder, emptied: write the app (``app.py``) and its asset folders here."""
        for entry in self.folder.iterdir():
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        return self.folder

    def synth(self, outdir: Path, *, what: str = "app.py") -> Path:
        """Run ``folder/app.py`` with ``outdir`` as its apps' outdir; ``outdir``. ``what`` names the app if it fails."""
        outdir.parent.mkdir(parents=True, exist_ok=True)
        log = outdir.with_name(f"{outdir.name}.log")
        process = self._started()
        process.stdin.write(json.dumps({"app": str(self.folder / "app.py"), "outdir": str(outdir),
                                        "log": str(log)}) + "\n")
        process.stdin.flush()
        answer = self._answer(process)
        output = log.read_text()[-4000:] if log.exists() else ""
        assert answer is not None, f"{what}: the synth process stopped or hung:\n{output}\n{self._runner_log()}"
        assert answer["error"] is None, f"{what} failed:\n{answer['error']}\n{output}"
        return outdir

    def stop(self) -> None:
        """End the process (and jsii's Node process under it), if one runs."""
        if self._process is None:
            return
        process, self._process = self._process, None
        with contextlib.suppress(BrokenPipeError):  # it had already stopped
            process.stdin.close()  # the process ends when its stdin does, and jsii stops Node on the way out
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process.stdout.close()

    def _started(self) -> subprocess.Popen[str]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self.stop()  # one that died: its pipes closed, its exit reaped
        env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
        with open(self._log, "a") as log:
            self._process = subprocess.Popen(
                [sys.executable, str(_PROCESS)], cwd=self.folder, env=env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
            )
        return self._process

    def _answer(self, process: subprocess.Popen[str]) -> dict | None:
        """The process's answer to the request just sent; None, the process stopped, if it died or took too long."""
        ready = select.select([process.stdout], [], [], self._timeout)[0]  # one line a request: no read-ahead
        line = process.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        self.stop()
        return None

    def _runner_log(self) -> str:
        return self._log.read_text()[-2000:] if self._log.exists() else ""
