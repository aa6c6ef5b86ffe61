#!/usr/bin/env bash
# What a user in another repository does, end to end (issue 21): install the harness into
# a temporary prefix, copy templates/plugin out of the tree, configure and build it against
# the installed CMake package, list it, run its suite. The CPU variant must pass its check;
# the CUDA variant must pass where a GPU is usable, else be skipped (`no CUDA device`).
#   bash scripts/test-template.sh                 # uses build/release (built already)
#   BUILD=build/debug REQUIRE_GPU=1 bash scripts/test-template.sh
#   KEEP=1: keep the temporary folder (printed); REPORT_OUT=FILE: copy the run's report there;
#   NO_BUILD=1: do not bring the harness target up to date first (ctest sets it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build/release}
work=$(mktemp -d "${TMPDIR:-/tmp}/harness-template.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
show() { echo "+ $*"; "$@"; }

# Under ctest (NO_BUILD=1) the tree is built already; a relink here, while other tests run the
# harness in parallel, would pull the executable from under them.
[ "${NO_BUILD:-0}" = 1 ] || cmake --build "$build" --target harness >/dev/null
echo "--- install the harness into $prefix"
show cmake --install "$build" --prefix "$prefix" | sed -n '1p;$p'
echo "--- copy the template, as a user starting a repository of their own would"
show cp -r "$prefix/share/harness/templates/plugin" "$work/my-kernels"
cd "$work/my-kernels"
echo "--- configure, build (out of the harness tree, against the installed package only)"
show cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" | grep -vE "^-- (Detecting|Check for working|Looking for)" 
show cmake --build build
echo "--- harness list"
show "$prefix/bin/harness" list my_axpy --plugin build/my_plugin.so
echo "--- harness run"
rc=0
show "$prefix/bin/harness" run --plugin build/my_plugin.so suite.yaml --out "$work/template.json" --no-profile || rc=$?
[ -z "${REPORT_OUT:-}" ] || cp "$work/template.json" "$REPORT_OUT"
# The verdict from the report, not from the console.
cpu=$(jq -r '[.results[] | select(.variant == "cpu") | .status] | unique | join(",")' "$work/template.json")
cuda=$(jq -r '[.results[] | select(.variant == "cuda") | .status] | unique | join(",")' "$work/template.json")
reason=$(jq -r '[.results[] | select(.variant == "cuda") | (.reason // .skip_reason // "")] | unique | join(",")' "$work/template.json")
echo "template: cpu results: $cpu; cuda results: $cuda ${reason:+($reason)}; harness exit code $rc"
[ "$cpu" = passed ] || { echo "test-template: FAILED: the CPU variant did not pass" >&2; exit 1; }
if [ "$cuda" = passed ]; then :
elif [ "$cuda" = skipped ] && [ "${REQUIRE_GPU:-0}" != 1 ]; then :
else echo "test-template: FAILED: the CUDA variant is '$cuda'${REQUIRE_GPU:+ (REQUIRE_GPU=$REQUIRE_GPU)}" >&2; exit 1; fi
[ "$rc" = 0 ] || { echo "test-template: FAILED: harness run exited $rc" >&2; exit 1; }
echo "test-template: passed"
