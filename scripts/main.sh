#!/usr/bin/env bash
# Installs (scripts/setup.sh), then deploys the sample app to a local AWS emulator (moto_server on
# 127.0.0.1), runs the scenario through it, destroys the stack and stops the emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
.venv/bin/python -m examples.scenario "$@"
