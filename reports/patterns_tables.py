#!/usr/bin/env python3
"""Markdown tables of the parallel-pattern reports (reduce, scan, histogram, softmax,
optimizer) for docs/PERFORMANCE.md: per case, every variant's median, GB/s, share of the
device copy roof measured in the same run, and speed relative to the vendor variant
(cub / cudnn) or, for the optimizer, to one launch per tensor.

  python3 reports/patterns_tables.py reports/baselines/h200/2026-11-23/{reduce,scan,histogram,softmax,optimizer}.json
"""
import argparse
import json
import sys
from collections import OrderedDict

VENDOR = {"reduce": "cub", "scan": "cub", "histogram": "cub", "softmax": "cudnn", "optimizer": "adam"}


def case_key(r):
    p = r["params"]
    order = r.get("param_order") or list(p)
    skip = {"lr", "beta1", "beta2", "eps", "step", "bias_correction"}
    return " ".join(f"{k}={p[k]}" for k in order if k not in skip)


def table(path):
    rep = json.load(open(path))
    env = rep["environment"]
    roof = (env.get("device_peaks") or {}).get("dram_gbytes_per_s") or 0
    gpu = (env.get("gpu") or {}).get("name", "?")
    cases = OrderedDict()
    for r in rep["results"]:
        if r["status"] != "passed" or not r.get("stats"):
            continue
        cases.setdefault((r["problem"], case_key(r)), []).append(r)
    print(f"\n`{path}`: {gpu}, {env.get('date', '?')}, copy roof {roof:.0f} GB/s (measured in the same run)\n")
    print("| case | variant | median | GB/s | % of copy roof | vs " + "vendor |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (problem, key), rs in cases.items():
        vendor = next((x for x in rs if x["variant"] == VENDOR.get(problem)), None)
        for r in rs:
            t = r["stats"]["median_s"]
            gbs = (r.get("rates") or {}).get("gbytes_per_s", 0)
            rel = f"{vendor['stats']['median_s'] / t:.2f}x" if vendor else "-"
            print(f"| {key} | {r['variant']} | {t * 1e6:.1f} us | {gbs:.0f} | {gbs / roof * 100 if roof else 0:.0f}% | {rel} |")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", metavar="REPORT.json")
    for path in ap.parse_args(argv[1:]).reports:
        table(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
