#!/usr/bin/env bash
# Installs (scripts/setup.sh) and runs the whole test suite; exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
.venv/bin/ruff check .
.venv/bin/python -m pytest -n 2 "$@"
