#!/usr/bin/env bash
# Installs (scripts/setup.sh) and runs the tests; exits non-zero when any test fails.
#
# Usage: bash scripts/test.sh [--quick] [pytest arguments...]
#   (none)   ruff, then the whole suite: every level, local servers, end-to-end (what CI runs)
#   --quick  ruff, then the tests that need no server: unit, constructs and runtime, leaving out the ones
#            marked server, e2e or slow, with a quarter of the Hypothesis examples (tests/support/examples.py)
#            (a few minutes: a signal before the whole suite)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
# Three workers on two cores for the whole suite: its tests spend about a quarter of their time waiting (on local
# servers, subprocesses, the CDK CLI and real-clock windows), which a third worker fills. The quick tier is CPU-bound.
workers=3
if [ "${1:-}" = "--quick" ]; then
  shift
  quick=(tests/unit tests/constructs tests/runtime -m "not server and not e2e and not slow"
         --hypothesis-profile quick)
  workers=2
fi
bash scripts/setup.sh
source scripts/env.sh
.venv/bin/ruff check .
.venv/bin/python -m pytest -n "$workers" "${quick[@]}" "$@"
