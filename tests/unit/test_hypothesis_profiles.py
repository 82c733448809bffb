"""``scripts/test.sh --quick`` runs a quarter of the Hypothesis examples; the full suite runs every one."""

from __future__ import annotations

from hypothesis import settings

from tests.support.examples import QUICK_PROFILE, examples


def test_the_default_profile_runs_the_count_a_test_names_and_quick_runs_a_quarter_of_it():
    current = settings.get_current_profile_name()
    try:
        settings.load_profile("default")
        assert [examples(n) for n in (250, 60, 12, 1)] == [250, 60, 12, 1]
        assert settings.default.max_examples == 100

        settings.load_profile(QUICK_PROFILE)
        assert [examples(n) for n in (250, 60, 12, 1)] == [62, 15, 3, 1]
        assert settings.default.max_examples == 25  # tests that name no count
    finally:
        settings.load_profile(current)
