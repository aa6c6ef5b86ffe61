#!/usr/bin/env bash
# Set-up + tests in one command: dependencies, configure, build, ctest.
#   bash scripts/test.sh            # release preset; GPU tests skip without a device
#   PRESET=asan bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${PRESET:-release}
bash scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" -j "$(nproc)"
