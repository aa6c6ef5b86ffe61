#!/usr/bin/env python3
"""Helpers for writing harness reports from Python (the PyTorch reference scripts), so
that `harness validate`, `harness compare` and `harness report` accept them.

  python3 reports/harness_report.py --normalize REPORT.json   fill in derived fields
                                                               (statistics from the samples,
                                                               summary counts, suite keys)
"""
import argparse
import datetime
import json
import math
import sys


def stats(samples):
    """The harness's statistics of timing samples (seconds): quartiles interpolated
    linearly between ranks, sample standard deviation."""
    xs = sorted(samples)
    n = len(xs)

    def q(p):
        pos = p * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return {"count": n, "min_s": xs[0], "max_s": xs[-1], "mean_s": mean, "median_s": q(0.5), "stddev_s": sd,
            "q1_s": q(0.25), "q3_s": q(0.75), "rel_noise": sd / mean if mean else 0.0,
            "noise_reached": True, "stop_reason": "pytorch", "wall_time_s": sum(xs)}


def parse_names(text, known, what, words=("all",)):
    """'all' -> every name of `known`; else a comma-separated list of them, in the order
    given, once each. ValueError names an unknown one (`what`: mode, variant; `words`: the
    other accepted words, for the message)."""
    if text.strip() == "all":
        return list(known)
    out = []
    for m in (x.strip() for x in text.split(",")):
        if not m:
            continue
        if m not in known:
            raise ValueError(f"unknown {what} '{m}' ({what}s: {', '.join(known)}, or {', '.join(words)})")
        if m not in out:
            out.append(m)
    if not out:
        raise ValueError(f"no {what} given")
    return out


def cuda_torch(prog):
    """The torch module where PyTorch is installed and sees a CUDA device; else None, after
    saying which on stderr (the PyTorch scripts then exit 2). Imported here, on use, so that
    the scripts' --help and argument checks need no PyTorch."""
    try:
        import torch
    except ImportError:
        print(f"{prog}: PyTorch is not installed (python3 -c 'import torch' fails)", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{prog}: no CUDA device visible to PyTorch", file=sys.stderr)
        return None
    return torch


def environment(torch_module, command_line):
    torch = torch_module
    props = torch.cuda.get_device_properties(0)
    return {"gpu": {"index": 0, "name": props.name, "sm_count": props.multi_processor_count,
                    "compute_capability": f"{props.major}.{props.minor}",
                    "memory_gib": props.total_memory / 2**30},
            "gpu_unavailable_reason": "", "cuda_driver": "", "cuda_runtime": str(torch.version.cuda),
            "host": "", "cpu": "", "cpu_threads": 0, "harness_version": "pytorch " + torch.__version__,
            "git_commit": "", "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command_line": command_line}


def finish(report):
    """Fills the fields derived from the results: statistics from samples_s, summary
    counts, the suite's keys."""
    counts = {s: 0 for s in ("passed", "failed", "skipped", "error", "crashed", "timeout")}
    for r in report["results"]:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        if r.get("samples_s"):
            keep = {k: v for k, v in (r.get("stats") or {}).items() if k not in stats(r["samples_s"])}
            r["stats"] = {**stats(r["samples_s"]), **keep}
    report["summary"] = counts
    suite = report.setdefault("suite", {})
    suite.setdefault("description", "")
    suite.setdefault("settings", {})
    suite.setdefault("cases", len(report["results"]))
    gpu = (report.get("environment") or {}).get("gpu")
    if isinstance(gpu, dict):
        gpu.setdefault("compute_capability", "unknown")
    report.setdefault("benchmarks", [])
    return report


def skipped(reason):
    """The fields of a result that did not run (out of memory, unsupported)."""
    return {"status": "skipped", "reason": reason, "samples_s": [], "stats": None, "rates": None,
            "memory": {"io_device_bytes": 0, "workspace_peak_bytes": 0}}


def write(path, suite_file, results, torch_module, command_line):
    report = finish({"schema": "harness-report", "schema_version": 1,
                     "environment": environment(torch_module, command_line),
                     "suite": {"name": "pytorch-" + suite_file, "file": suite_file},
                     "results": results})
    with open(path, "w") as f:
        json.dump(report, f, indent=1)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--normalize", metavar="REPORT.json", required=True,
                    help="fill in the derived fields of this report, in place")
    args = ap.parse_args(argv[1:])
    with open(args.normalize) as f:
        report = json.load(f)
    with open(args.normalize, "w") as f:
        json.dump(finish(report), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
