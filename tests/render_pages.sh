#!/usr/bin/env bash
# Every page of issue 20 through tests/render_html.sh (headless Chromium: not blank, no
# console messages, no horizontal overflow): the report with its speedup section (the H200
# GEMM baseline), the comparison page (the baseline against the scaled history fixture),
# the history page over the three fixtures, a trace page (a synthetic trace: the real
# one needs a GPU run, see scripts/gpu-round.sh stage `trace`), and the merged training
# page of ours and two PyTorch modes (issue 34), its text read back from the browser's DOM,
# and the kernel timelines of an H200 report with the page's note on them (issue 34).
#
#   tests/render_pages.sh HARNESS_EXE
# Exit 0 pass, 1 fail, 77 skipped (no Chromium).
set -u
exe=${1:?usage: render_pages.sh HARNESS_EXE}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hist=$root/tests/data/reports/history

# The baseline decompressed here: the pages do not depend on a build with zlib.
gunzip -c "$root/reports/baselines/h200/gemm.json.gz" >"$work/gemm-baseline.json"
"$exe" report "$work/gemm-baseline.json" --format html --out "$work/speedup.html" 2>/dev/null || exit 1
"$exe" compare "$work/gemm-baseline.json" "$hist/gemm_run3.json" --format html --out "$work/compare.html" 2>/dev/null
[ $? -eq 1 ] || { echo "FAIL: compare of the slowed fixture should exit 1"; exit 1; }
"$exe" report "$hist/gemm_run1.json" "$hist/gemm_run2.json" "$hist/gemm_run3.json" --out "$work/history.html" 2>/dev/null || exit 1
"$exe" report "$root/reports/baselines/h200/attention-memory.json" --format html --out "$work/memory.html" 2>/dev/null || exit 1
cat >"$work/trace.json" <<'JSON'
{"traceEvents":[
 {"ph":"M","name":"thread_name","pid":2,"tid":7,"args":{"name":"stream 7"}},
 {"ph":"X","pid":1,"tid":1,"name":"t","cat":"suite","ts":0,"dur":1000,"args":{"depth":0}},
 {"ph":"X","pid":1,"tid":1,"name":"square: gemm N=64","cat":"case","ts":10,"dur":900,"args":{"depth":1}},
 {"ph":"X","pid":1,"tid":1,"name":"gemm.tiled N=64","cat":"variant","ts":20,"dur":800,"args":{"depth":2}},
 {"ph":"X","pid":1,"tid":1,"name":"profile","cat":"profile","ts":500,"dur":300,"args":{"depth":3}},
 {"ph":"X","pid":1,"tid":2,"name":"cudaLaunchKernel","cat":"api","ts":520,"dur":4,"args":{"correlation_id":5}},
 {"ph":"X","pid":2,"tid":7,"name":"tiled_kernel","cat":"kernel","ts":530,"dur":120,"args":{"variant":"gemm.tiled N=64","grid":[2,2,1],"block":[16,16,1],"registers_per_thread":32,"static_smem_bytes":8192,"dynamic_smem_bytes":0}},
 {"ph":"s","pid":1,"tid":2,"id":5,"ts":520},{"ph":"f","bp":"e","pid":2,"tid":7,"id":5,"ts":530}]}
JSON
"$exe" report "$work/trace.json" --format trace-html --out "$work/trace.html" 2>/dev/null || exit 1
# Ours next to two PyTorch compile modes (issue 34): the merged training page.
merged=$root/tests/data/reports/merged
"$exe" report "$merged/ours.json" "$merged/pt-default.json" "$merged/pt-reduce-overhead.json" --merge --format html \
  --out "$work/merged.html" 2>/dev/null || exit 1

# Kernel timelines from an H200 run (issue 34), trimmed from
# reports/baselines/h200/2026-11-23/gemm.json.gz: cublas at 256^3 has a 1.536 ms idle gap in its
# traced run, beside a 11.68 us median.
"$exe" report "$root/tests/data/reports/kernel_timelines.json" --format html --out "$work/timelines.html" 2>/dev/null || exit 1

status=0
for page in speedup compare history memory trace merged timelines; do
  echo "== $page"
  "$here/render_html.sh" "$exe" "$work/$page.html"
  rc=$?
  [ $rc -eq 77 ] && exit 77
  [ $rc -eq 0 ] || status=1
done
# The merged page's text as the browser has it (its DOM after loading): both PyTorch modes
# named apart, the step table, a size parameter on the throughput chart's x axis.
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
HOME=$work XDG_CONFIG_HOME=$work XDG_CACHE_HOME=$work timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
  --no-first-run --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/dom-profile" --dump-dom "file://$work/merged.html" >"$work/merged.dom" 2>/dev/null
for text in 'pytorch_bf16_compile compile_mode=reduce-overhead</td>' 'pytorch_bf16_compile compile_mode=default</td>' \
            'Training step: ms/step, tokens/s, MFU, phases' '>seq_len (tokens)<' '>6.08 ms (33%)<'; do
  grep -qF "$text" "$work/merged.dom" || { echo "FAIL: the merged page lacks: $text"; status=1; }
done
# The timelines page says they are the profiling pass's, and cuts the idle stretch.
HOME=$work XDG_CONFIG_HOME=$work XDG_CACHE_HOME=$work timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
  --no-first-run --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/dom-profile" --dump-dom "file://$work/timelines.html" >"$work/timelines.dom" 2>/dev/null
for text in 'From the profiling pass, not the timed samples' 'not kernel time' '>1.543 ms (1.536 ms cut)<' \
            '1.536 ms idle, cut out: host work between launches in the profiling pass'; do
  grep -qF "$text" "$work/timelines.dom" || { echo "FAIL: the timelines page lacks: $text"; status=1; }
done
exit $status
