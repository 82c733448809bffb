#!/usr/bin/env bash
# Installs (scripts/setup.sh), then deploys the sample app to a local AWS emulator (moto_server on
# 127.0.0.1), runs the scenario through it, destroys the stack and stops the emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
# setup.sh installs without byte-compiling: Python caches each module when first imported (in .venv and the
# checkout's __pycache__, both ignored by git). With PYTHONDONTWRITEBYTECODE set it could not, and every
# process that imports aws-cdk-lib would compile it again from source: about 8 CPU s each time.
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m examples.scenario "$@"
