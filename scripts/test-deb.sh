#!/usr/bin/env bash
# The Debian packages (issue 21): cpack -G DEB in the build folder makes
# harness_<v>_amd64.deb and harness-dev_<v>_amd64.deb; they are installed with dpkg (as
# root), the plugin template is built against the installed files only (/usr, no prefix
# given), run with /usr/bin/harness, and the packages are removed again (also on failure).
#   bash scripts/test-deb.sh          # build/release, built already; needs root and dpkg-dev
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build/release}
if [ "$(id -u)" -ne 0 ]; then echo "test-deb: needs root (dpkg -i)" >&2; exit 1; fi
if dpkg-query -W -f='${Status}' harness 2>/dev/null | grep -q "install ok installed"; then
  echo "test-deb: a harness package is installed already; not touching it" >&2; exit 1
fi
show() { echo "+ $*"; "$@"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/harness-deb.XXXXXX")
cleanup() {
  dpkg -r harness-dev harness >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

cmake --build "$build" --target harness >/dev/null
echo "--- cpack"
(cd "$build" && rm -f harness*_amd64.deb && show cpack -G DEB | grep -E "CPack: (- package|Create)")
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
deb=$build/harness_${version}_amd64.deb
dev=$build/harness-dev_${version}_amd64.deb
for f in "$deb" "$dev"; do
  echo "--- dpkg-deb --field $(basename "$f")"
  dpkg-deb --field "$f"
  echo "--- dpkg -c $(basename "$f")"
  dpkg -c "$f" | awk '{print $1, $6, $7, $8}'
done
echo "--- dpkg -i"
show dpkg -i "$deb" "$dev"
show harness --version
echo "--- the template, against the installed package (/usr)"
show cp -r /usr/share/harness/templates/plugin "$work/my-kernels"
cd "$work/my-kernels"
echo "+ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release | grep -E "Found|Build files"
show cmake --build build
show harness list variants --plugin build/my_plugin.so | grep my_axpy
show harness run --plugin build/my_plugin.so suite.yaml --out "$work/deb.json" --no-profile --quiet
cpu=$(jq -r '[.results[] | select(.variant == "cpu") | .status] | unique | join(",")' "$work/deb.json")
[ "$cpu" = passed ] || { echo "test-deb: FAILED: the CPU variant is '$cpu'" >&2; exit 1; }
echo "--- dpkg -r"
show dpkg -r harness-dev harness
[ ! -e /usr/bin/harness ] || { echo "test-deb: FAILED: /usr/bin/harness still there after dpkg -r" >&2; exit 1; }
echo "test-deb: passed"
