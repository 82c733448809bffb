#!/usr/bin/env bash
# Installs everything cdk-ts needs into the checkout: a Python venv (.venv) and the pinned Node tools
# (node_modules: the CDK CLI 2.x and dynalite). Safe to run again; only Python 3.11+, Node 20+ and npm assumed.
#
# Usage: bash scripts/setup.sh            (or: PYTHON=python3.12 bash scripts/setup.sh)
#   PYTHON  the interpreter that makes .venv (default: python3); it must be Python 3.11 or newer.
#           A .venv made earlier with an older Python, or (when PYTHON is given) with another version than
#           PYTHON's, is deleted and made again with PYTHON.
# In a git checkout it also points git at scripts/hooks (core.hooksPath): the commit-msg hook there refuses
# subjects over 72 characters and a second line that is not blank.
set -euo pipefail
cd "$(dirname "$0")/.."
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

usage() {
  cat <<'EOF'
Usage: bash scripts/setup.sh
Makes .venv (Python 3.11+, with cdk-ts and its dev tools installed editable) and node_modules (npm ci).
Environment:
  PYTHON  the interpreter that makes .venv (default: python3); it must be Python 3.11 or newer,
          e.g. PYTHON=python3.12 bash scripts/setup.sh. A .venv of an older Python, or of another
          version than a given PYTHON's, is made again with it.
In a git checkout, git is pointed at scripts/hooks (core.hooksPath): commit subjects of at most 72 characters.
EOF
}
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) usage >&2; exit 2 ;;
esac

# The version of interpreter $1 when it is Python 3.11 or newer (pyproject.toml's requires-python); fails otherwise.
supported_version() {
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2]); sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}

python=${PYTHON:-python3}
if ! version=$(supported_version "$python"); then
  echo "setup.sh: PYTHON=$python is ${version:-not a Python that runs} and cdk-ts needs Python 3.11 or newer:" \
    "set PYTHON to one, e.g. PYTHON=python3.11 bash scripts/setup.sh" >&2
  exit 1
fi
# What the last run installed, by the manifests it installed from: when they have not changed, nothing is installed
# again and a second run takes a second, not a minute (delete .venv/.installed or node_modules/.installed to force it).
python_stamp="$version $({ cat pyproject.toml 2>/dev/null || true; } | sha256sum)"
node_stamp=$({ cat package.json package-lock.json 2>/dev/null || true; } | sha256sum)
# npm and uv each spend most of their time waiting on downloads: npm ci runs while the Python packages install.
npm_pid=""
if [ "$(cat node_modules/.installed 2>/dev/null)" != "$node_stamp" ]; then
  npm ci --no-audit --no-fund --loglevel=error --prefer-offline &
  npm_pid=$!
  trap 'kill "$npm_pid" 2>/dev/null || true' EXIT
fi
if [ -e .venv ]; then
  if ! old=$(supported_version .venv/bin/python); then
    echo "setup.sh: .venv runs Python ${old:-that no longer starts}, older than 3.11: making it again with $python ($version)" >&2
    rm -rf .venv
  elif [ -n "${PYTHON:-}" ] && [ "$old" != "$version" ]; then
    # Only a PYTHON the user gave: test.sh and main.sh run this without one and keep whatever .venv there is.
    echo "setup.sh: .venv runs Python $old, PYTHON=$python is $version: making it again with $python" >&2
    rm -rf .venv
  fi
fi
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
# The venv's own pip (ensurepip's) installs uv; upgrading pip first cost a download and a reinstall.
# uv (from PyPI, at the dev extra's pin) installs the project: on a clean clone pip took 188 s, 86 s of it without
# byte-compiling, and uv 14 s: it downloads in parallel and, like `pip --no-compile`, leaves byte-compiling to the
# first import (aws-cdk-lib alone is 680 modules, 183 MB of source, of which a synth loads a few dozen).
if [ "$(cat .venv/.installed 2>/dev/null)" != "$python_stamp" ]; then
  uv_pin=$(grep -o '"uv==[^"]*"' pyproject.toml 2>/dev/null | tr -d '"' || true)
  .venv/bin/python -m pip install --quiet "${uv_pin:-uv}"
  .venv/bin/python -m uv pip install --quiet --python .venv/bin/python -e ".[dev]"
  echo "$python_stamp" > .venv/.installed
fi
if [ -n "$npm_pid" ]; then
  wait "$npm_pid"
  if [ -d node_modules ]; then echo "$node_stamp" > node_modules/.installed; fi
fi
# The repository's hooks (scripts/hooks/commit-msg), only when this folder is a git checkout's top: an unpacked
# sdist has no .git, and one inside another repository must not change that repository's settings.
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  hooks=$(git config --get core.hooksPath || true)
  if [ -z "$hooks" ] || [ "$hooks" = scripts/hooks ]; then
    git config core.hooksPath scripts/hooks
  else
    echo "setup.sh: git's core.hooksPath is $hooks, kept: scripts/hooks/commit-msg is not run" >&2
  fi
fi
