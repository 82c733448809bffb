#!/usr/bin/env bash
# Installs everything cdk-ts needs into the checkout: a Python venv (.venv) and the pinned Node tools
# (node_modules: the CDK CLI 2.x and dynalite). Safe to run again; only Python 3.11+, Node 20+ and npm assumed.
set -euo pipefail
cd "$(dirname "$0")/.."
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

# npm and pip each spend most of their time waiting on downloads: npm ci runs while pip installs.
npm ci --no-audit --no-fund --loglevel=error --prefer-offline &
npm_pid=$!
trap 'kill "$npm_pid" 2>/dev/null || true' EXIT

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
# The venv's own pip (ensurepip's) installs everything below; upgrading it first cost a download and a reinstall.
.venv/bin/python -m pip install --quiet -e ".[dev]"
wait "$npm_pid"
