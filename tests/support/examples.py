"""Hypothesis example counts: every one in the full suite, a quarter in ``scripts/test.sh --quick``.

The quick tier is a first signal before the whole suite, which CI runs: it loads the ``quick`` profile
(``--hypothesis-profile quick``), whose ``max_examples`` is a quarter of Hypothesis's default 100. A test that
asks for its own count writes ``settings(max_examples=examples(250))``: the profile scales it the same way, since
an explicit ``max_examples`` would otherwise win over any profile. Without ``--hypothesis-profile`` every test runs
the count it names, as before.
"""

from __future__ import annotations

from hypothesis import settings

#: Hypothesis's own default ``max_examples``: the count a test's own number is relative to.
_DEFAULT_EXAMPLES = 100
QUICK_PROFILE = "quick"


def register_profiles() -> None:
    """Register the ``quick`` profile (a quarter of the examples, every other setting as the default)."""
    settings.register_profile(QUICK_PROFILE, max_examples=_DEFAULT_EXAMPLES // 4)


def examples(full: int) -> int:
    """``full`` under the default profile; scaled as the loaded profile scales Hypothesis's default (at least 1).

    Read when the test module is imported: Hypothesis's pytest plugin loads the profile before collection.
    """
    return max(1, full * settings.default.max_examples // _DEFAULT_EXAMPLES)
