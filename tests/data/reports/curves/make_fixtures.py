#!/usr/bin/env python3
"""Trimmed copies of the issue-18 reports for tests/report_curves_test.cpp.

From reports/baselines/h200/2026-11-23/{transformer,pytorch-transformer}-issue18.json
(measured on an H200): a few results, loss curves cut to their first 40 values, clocks and
profiles dropped, summary and benchmarks cut to match (valid for `harness validate`). FIXTURE CHANGE: ours_bf16's curve is every 2nd value of its
first 80 with loss_curve_stride 2 (the real run wrote stride 1), to test the stride.
Run from the repository root: python3 tests/data/reports/curves/make_fixtures.py
"""
import json

SRC = "reports/baselines/h200/2026-11-23/"
OUT = "tests/data/reports/curves/"
SEED = "/batch:100/seq_len:13/"


def trim(r, stride=1):
    r = {k: v for k, v in r.items() if k not in ("clocks", "profile")}
    e = r.get("extra")
    if isinstance(e, dict) and "loss_curve" in e:
        keep = {k: e[k] for k in ("precision", "loss_first", "loss_last", "steps") if k in e}
        keep["loss_curve"] = e["loss_curve"][: 40 * stride : stride]
        keep["loss_curve_stride"] = stride
        r["extra"] = keep
    return r


def pick(results, variant, part, graph=None):
    for r in results:
        if r["variant"] == variant and part in r["name"] and (graph is None or f"/graph:{graph}/" in r["name"]):
            return r
    raise SystemExit(f"no {variant} {part} {graph}")


def write(name, report, results):
    names = {r["name"] for r in results}
    summary = {k: sum(r["status"] == k for r in results) for k in report["summary"]}
    benchmarks = [b for b in report["benchmarks"] if b.get("run_name", b["name"]) in names]
    report = dict(report, results=results, summary=summary, benchmarks=benchmarks)
    with open(OUT + name, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


ours = json.load(open(SRC + "transformer-issue18.json"))
res = ours["results"]
write("transformer.json", ours, [
    trim(pick(res, "cublas_flash", SEED, "false")),
    trim(pick(res, "ours_bf16", SEED, "false"), stride=2),
    trim(pick(res, "ours", SEED, "true")),
    trim(pick(res, "ours_bf16", "/src_len:64/tgt_len:48/")),  # failed: no curve
])
pt = json.load(open(SRC + "pytorch-transformer-issue18.json"))
res = pt["results"]
write("pytorch.json", pt, [trim(pick(res, "pytorch_eager", SEED)), trim(pick(res, "pytorch_bf16", SEED))])
