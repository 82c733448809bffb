#!/usr/bin/env bash
# Installs everything cdk-ts needs into the checkout: a Python venv (.venv) and the pinned Node tools
# (node_modules: the CDK CLI 2.x and dynalite). Safe to run again; only Python 3.11+, Node 20+ and npm assumed.
set -euo pipefail
cd "$(dirname "$0")/.."
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev]"
npm ci --no-audit --no-fund --loglevel=error
