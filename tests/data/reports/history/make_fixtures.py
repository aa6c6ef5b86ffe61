#!/usr/bin/env python3
"""TEST FIXTURES, NOT MEASUREMENTS: three "runs" of the GEMM suite for the history page,
derived from the committed H200 baseline (reports/baselines/h200/gemm.json.gz).

Each run keeps 100 of every result's measured samples (every k-th, a different offset
per run, so runs 1 and 2 differ by the baseline's own noise) and recomputes the stats and
rates from them. Run 3 then scales the samples of two variants to fake a change:
  tiled      x 1.15  (15% slower: a regression step)
  coarsened  x 0.90  (10% faster)
Dates and commits are made up (2026-11-22/23/24, fixture-a/b/c) and the suite's
description says FIXTURE. The profile objects are dropped (their kernel times would no
longer match). Regenerate with:  python3 tests/data/reports/history/make_fixtures.py
Check that the committed fixtures are what it makes (ctest history_fixtures):  ... --check
"""
import argparse
import copy
import gzip
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
BASE = os.path.join(ROOT, "reports", "baselines", "h200", "gemm.json.gz")
KEEP = 100
RUNS = [("2026-11-22T03:37:27Z", "fixture-a", {}),
        ("2026-11-23T03:40:02Z", "fixture-b", {}),
        ("2026-11-24T03:38:45Z", "fixture-c", {"tiled": 1.15, "coarsened": 0.90})]


def quantile(sorted_v, p):
    pos = p * (len(sorted_v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def stats(samples, old):
    s = sorted(samples)
    n = len(s)
    mean = sum(s) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in s) / (n - 1)) if n > 1 else 0.0
    out = dict(old)
    out.update({"count": n, "min_s": s[0], "max_s": s[-1], "mean_s": mean, "median_s": quantile(s, 0.5),
                "q1_s": quantile(s, 0.25), "q3_s": quantile(s, 0.75), "stddev_s": sd,
                "rel_noise": sd / mean if mean > 0 else 0.0})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 where a committed fixture differs from what this makes")
    check = parser.parse_args().check
    differ = 0
    base = json.load(gzip.open(BASE, "rt"))
    for i, (date, commit, scale) in enumerate(RUNS):
        run = copy.deepcopy(base)
        run["environment"]["date"] = date
        run["environment"]["git_commit"] = commit
        run["environment"]["command_line"] = "TEST FIXTURE derived from reports/baselines/h200/gemm.json (not a run)"
        run["suite"]["description"] = ("FIXTURE (not a measurement): the H200 GEMM baseline's samples, thinned"
                                       + (", tiled x1.15 and coarsened x0.90" if scale else ""))
        run["benchmarks"] = []  # the Google Benchmark mirror would keep the old times
        for r in run["results"]:
            r.pop("profile", None)
            samples = r.get("samples_s") or []
            if not samples:
                continue
            step = max(1, len(samples) // KEEP)
            kept = samples[i % step::step][:KEEP] or samples[:KEEP]
            f = scale.get(r["variant"], 1.0)
            kept = [x * f for x in kept]
            r["samples_s"] = kept
            old_median = r["stats"]["median_s"]
            r["stats"] = stats(kept, r["stats"])
            ratio = old_median / r["stats"]["median_s"] if r["stats"]["median_s"] > 0 else 1.0
            for k in ("gflops", "gbytes_per_s"):
                if k in r.get("rates", {}):
                    r["rates"][k] *= ratio
        path = os.path.join(HERE, f"gemm_run{i + 1}.json")
        text = json.dumps(run, indent=None, separators=(",", ":"), sort_keys=True) + "\n"
        if check:
            same = os.path.exists(path) and open(path).read() == text
            differ += not same
            print(path, "same" if same else "DIFFERS from what make_fixtures.py makes")
            continue
        with open(path, "w") as f:
            f.write(text)
        print(path, os.path.getsize(path))
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
