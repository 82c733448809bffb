#!/usr/bin/env bash
# Installs (scripts/setup.sh) and runs the main job: synthesize the sample app (app.py) with cdk-nag checks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
npx --no-install cdk synth --quiet --app ".venv/bin/python app.py"
echo "Synthesized the sample app into cdk.out/ ($(ls cdk.out/*.template.json | wc -l) template(s))."
