"""``scripts/hooks/commit-msg``, run as git runs it (the executable, given the message file's path).

scripts/setup.sh points git at scripts/hooks (tests/unit/test_setup_script.py); here the hook itself refuses a
subject over 72 characters or a second line that is not blank, and lets git's own merge subjects through.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.processes import run_captured

HOOK = Path(__file__).resolve().parents[2] / "scripts" / "hooks" / "commit-msg"
BODY = "\n\nThe why, in as many lines as it takes, each of them longer than the subject may be if it must.\n"


def run_hook(tmp_path: Path, message: str):
    """The hook's result for a message file holding ``message``."""
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message)
    return run_captured([HOOK, path], cwd=tmp_path)


@pytest.mark.parametrize("message", [
    "Shard metadata: an optional table_name" + BODY,
    "x" * 72 + BODY,
    "Ü" * 72 + BODY,  # 144 bytes in UTF-8: characters are counted
    "A subject alone\n",
    "\n\nLeading blank lines, which git strips\n" + BODY,
    "Subject\n# " + "a comment git strips, however long it is " * 3 + "\n\nBody\n",
    "Merge branch 'i42-release-with-a-rather-long-name' into main, the subject git writes itself\n",
    "fixup! " + "y" * 80 + "\n",
    "Subject\n" + BODY + "# ------------------------ >8 ------------------------\n" + "diff " * 40 + "\n",
    "",
])
def test_good_messages_pass(tmp_path, message):
    result = run_hook(tmp_path, message)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("message", "says"), [
    ("x" * 73 + BODY, "73 characters, more than 72"),
    ("Ü" * 73 + BODY, "73 characters"),  # characters, not bytes (146 of those)
    ("A subject\nand a second line that runs on\n", "second line is not blank"),
    ("Revert \"" + "z" * 70 + "\"\n", "more than 72"),
])
def test_bad_messages_are_refused_saying_why(tmp_path, message, says):
    result = run_hook(tmp_path, message)
    assert result.returncode == 1
    assert says in result.stderr and "COMMIT_EDITMSG" in result.stderr, result.stderr


def test_git_refuses_a_commit_whose_subject_is_too_long(tmp_path):
    # given a repository whose hooks are the project's (as setup.sh sets)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    run_captured(["git", "init", "--quiet"], cwd=tmp_path, env=env, check=True)
    run_captured(["git", "config", "core.hooksPath", HOOK.parent], cwd=tmp_path, env=env, check=True)
    commit = ["git", "commit", "--quiet", "--allow-empty", "-m"]
    # when a commit's subject is 73 characters, then git refuses it; at 72 it is made
    assert run_captured([*commit, "x" * 73], cwd=tmp_path, env=env).returncode != 0
    assert run_captured([*commit, "x" * 72], cwd=tmp_path, env=env).returncode == 0
