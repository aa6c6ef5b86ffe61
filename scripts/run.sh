#!/usr/bin/env bash
# Set-up + the main job in one command: dependencies, build, then
#   harness run suites/gemm.yaml    on a machine with a CUDA GPU
#   harness run suites/smoke.yaml   without one
# Any arguments replace the suite: bash scripts/run.sh suites/attention.yaml --quiet
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
if [ $# -gt 0 ]; then
  exec build/release/bin/harness run "$@"
elif nvidia-smi -L >/dev/null 2>&1; then
  exec build/release/bin/harness run suites/gemm.yaml
else
  echo "run.sh: no GPU here: running suites/smoke.yaml (cuda variants are skipped)"
  exec build/release/bin/harness run suites/smoke.yaml
fi
