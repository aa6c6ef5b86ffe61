#!/usr/bin/env python3
"""Merge the per-rank reports of a run started by mpirun or srun (one report per rank,
<report>.rank<r>.json) into one report, as `harness run --devices` merges its workers:
each collective result (one with extra.bus_factor) becomes rank 0's result with
extra.ranks = every rank's median, algbw and busbw, and extra.time_s / algbw_gbps /
busbw_gbps for the job (time per op = mean over ranks, nccl-tests' default; algbw =
bytes / time; busbw = algbw * bus_factor). Non-collective results are kept per rank with
a `device` naming the rank. Every rank's environment goes to environment.devices.

    python3 reports/merge_ranks.py --out nccl-merged.json reports/nccl-123.rank*.json
"""
import argparse
import json
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    def rank_of(path):
        m = re.search(r"rank(\d+)", path)
        return int(m.group(1)) if m else 0

    paths = sorted(args.reports, key=rank_of)
    reps = [json.load(open(p)) for p in paths]
    merged = dict(reps[0])
    env = dict(reps[0]["environment"])
    env["devices"] = [dict(r["environment"], rank=rank_of(p), device=f"rank{rank_of(p)}@{r['environment'].get('host', '?')}")
                      for p, r in zip(paths, reps)]
    merged["environment"] = env
    by_name = [{r["name"]: r for r in rep["results"]} for rep in reps]
    results = []
    for res in reps[0]["results"]:
        extra = res.get("extra") or {}
        if "bus_factor" not in extra and not res.get("problem", "").startswith("nccl_"):
            for k, rep in enumerate(reps):
                r = by_name[k].get(res["name"])
                if r:
                    results.append(dict(r, device=f"rank{rank_of(paths[k])}"))
            continue
        out = dict(res)
        ranks, times = [], []
        for k, names in enumerate(by_name):
            r = names.get(res["name"], {})
            e = {"rank": rank_of(paths[k]), "device": f"rank{rank_of(paths[k])}", "status": r.get("status", "missing")}
            med = (r.get("stats") or {}).get("median_s")
            if med:
                b, f = (r.get("extra") or {}).get("bytes", 0), (r.get("extra") or {}).get("bus_factor", 0)
                e.update(median_s=med, algbw_gbps=b / med / 1e9, busbw_gbps=b / med / 1e9 * f)
                times.append(med)
            if e["status"] != "passed" and out["status"] == "passed":
                out["status"], out["reason"] = e["status"], f"rank {e['rank']}: {r.get('reason', 'no result')}"
            ranks.append(e)
        ox = dict(extra, ranks=ranks, world_size=len(reps))
        if len(times) == len(reps) and "bytes" in extra:
            t = sum(times) / len(times)
            ox.update(time_s=t, algbw_gbps=extra["bytes"] / t / 1e9, busbw_gbps=extra["bytes"] / t / 1e9 * extra["bus_factor"])
        out["extra"] = ox
        out["device"] = ",".join(e["device"] for e in ranks)
        results.append(out)
    merged["results"] = results
    with open(args.out, "w") as f:
        json.dump(merged, f, indent=2)
    print(f"{args.out}: {len(results)} results from {len(reps)} ranks")


if __name__ == "__main__":
    sys.exit(main())
