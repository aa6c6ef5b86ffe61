#!/usr/bin/env python3
"""Merge the per-rank reports of a run started by mpirun or srun (one report per rank,
<report>.rank<r>.json) into one report, as `harness run --devices` merges its workers:
each collective result (one with extra.bus_factor) becomes rank 0's result with
extra.ranks = every rank's median, algbw and busbw, and the job's figures as the harness's
merge_collective writes them (harness/src/measure/collective.hpp): samples_s = the ranks'
batches averaged batch by batch (each batch is K ops after one barrier), extra.time_s =
their median (nccl-tests' default -a 1), extra.time_max_s = the median of the slowest
rank's, algbw = bytes / time, busbw = algbw * bus_factor. Reports without samples fall
back to the mean of the ranks' medians. Non-collective results are kept per rank with a
`device` naming the rank. Every rank's environment goes to environment.devices.

    python3 reports/merge_ranks.py --out nccl-merged.json reports/nccl-123.rank*.json
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_report import collective_bandwidth, combine_ranks, stats  # noqa: E402


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
        nbytes, factor = extra.get("bytes", 0), extra.get("bus_factor", 0)
        ranks, times, batches = [], [], []
        for k, names in enumerate(by_name):
            r = names.get(res["name"], {})
            e = {"rank": rank_of(paths[k]), "device": f"rank{rank_of(paths[k])}", "status": r.get("status", "missing")}
            med = (r.get("stats") or {}).get("median_s")
            if med:
                alg, bus = collective_bandwidth(nbytes, med, factor)
                e.update(median_s=med, algbw_gbps=alg, busbw_gbps=bus)
                times.append(med)
                batches.append(r.get("samples_s") or [])
            if e["status"] != "passed" and out["status"] == "passed":
                out["status"], out["reason"] = e["status"], f"rank {e['rank']}: {r.get('reason', 'no result')}"
            ranks.append(e)
        ox = dict(extra, ranks=ranks, world_size=len(reps))
        if len(times) == len(reps):
            c = combine_ranks(batches)
            if c["mean"]:
                t = c["time_s"]
                out["samples_s"] = c["mean"]
                out["stats"] = dict(out.get("stats") or {}, **{k: v for k, v in stats(c["mean"]).items()
                                                             if k not in ("noise_reached", "stop_reason", "wall_time_s")})
                ox.update(time_max_s=c["time_max_s"], samples=len(c["mean"]),
                          busbw_slowest_gbps=collective_bandwidth(nbytes, c["time_max_s"], factor)[1])
                if (out.get("stats") or {}).get("launches_per_sample"):
                    ox["ops_per_sample"] = out["stats"]["launches_per_sample"]
            else:
                t = sum(times) / len(times)
            alg, bus = collective_bandwidth(nbytes, t, factor)
            ox.update(time_s=t)
            if alg:
                ox.update(algbw_gbps=alg, busbw_gbps=bus)
        out["extra"] = ox
        out["device"] = ",".join(e["device"] for e in ranks)
        results.append(out)
    merged["results"] = results
    with open(args.out, "w") as f:
        json.dump(merged, f, indent=2)
    print(f"{args.out}: {len(results)} results from {len(reps)} ranks")


if __name__ == "__main__":
    sys.exit(main())
