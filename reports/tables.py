#!/usr/bin/env python3
"""Markdown tables for docs/PERFORMANCE.md from harness reports.

  python3 reports/tables.py gemm REPORT.json        GFLOP/s per variant and shape, % of cuBLAS
  python3 reports/tables.py gemm-zoo REPORT.json    the shape zoo (suites/gemm-shapes.yaml): per dtype,
                                                    layout and shape each variant / cuBLAS, auto's choice,
                                                    the geometric mean per dtype (a run's .journal.jsonl too)
  python3 reports/tables.py attention REPORT.json [PYTORCH.json]
  python3 reports/tables.py attention-sdpa REPORT.json PYTORCH.json   ours / SDPA speed per shape
  python3 reports/tables.py attention-pair REPORT.json [REPORT2.json] [--ours V] [--reference V]
                                                    two variants of one report (a Python variant such as
                                                    sdpa_cudnn beside ours, timed in one process) per shape:
                                                    both medians and clocks, the ratio, the reference's noise;
                                                    a second report (a repeat run) as more columns
  python3 reports/tables.py sdpa-agreement REPORT.json PYTORCH.json   the SDPA Python variants' harness timing
                                                    against pytorch_attention.py --as-variants (same calls) per
                                                    shape: both medians and clocks, the ratio, within 2%
  python3 reports/tables.py attention-deterministic REPORT.json [REPORT2.json]   deterministic mode's cost: per
                                                    variant and shape, deterministic:false beside true (both
                                                    medians and clocks, + % in time and in cycles = time x
                                                    median MHz); a second report (a repeat run) as more rows
  python3 reports/tables.py memory REPORT.json      extra memory and the longest N per variant
  python3 reports/tables.py stream REPORT.json      STREAM bandwidth
  python3 reports/tables.py attention-summary REPORT.json   naive vs flash per shape
  python3 reports/tables.py transformer REPORT.json [PYTORCH.json]   + MFU, PyTorch's best mode as the reference
  python3 reports/tables.py nccl REPORT.json TORCH.json   all_reduce: ours vs torch.distributed per size
                                                          (reports/torch_allreduce.py; both timed alike)
  python3 reports/tables.py nccl-torch REPORT.json [--theirs V]   the nccl family's `nccl` and `torch`
                                                          (torch.distributed, examples/python/torch_distributed.py;
                                                          or V) variants of one run per collective, size, dtype:
                                                          us/op, busbw, ratios
  python3 reports/tables.py ddp REPORT.json [--pytorch-ddp P.json ...]   data-parallel training
                                                          (suites/transformer-ddp.yaml) beside PyTorch DDP's runs
                                                          (reports/pytorch_ddp.py, one file per torchrun job):
                                                          ms/step, tokens/s, scaling efficiency, MFU, exposed
                                                          exchange; ours / PyTorch's best tokens/s per precision
  python3 reports/tables.py breakdown REPORT.json PYTORCH.json   the training step kernel by kernel class,
                                                          ours (profile.kernels) beside PyTorch's (extra.kernels,
                                                          pytorch_transformer.py --kernel-steps), per configuration

Every table starts with the GPU, the date, the commit and the command of the report.
PyTorch's reference at an attention shape is the fastest of the SDPA variants of
reports/pytorch_attention.py that passed at the shape's dtype: at bf16 / f16 the faster of
the flash (FlashAttention-2) and cuDNN backends, at f32 sdpa_fp32; the table names it.
PyTorch's reference for a Transformer configuration is, per precision, the fastest mode of
reports/pytorch_transformer.py that finished (eager, or torch.compile in any of its
modes); MFU = the result's model FLOPs per step / its median step / the GPU's dense bf16
peak (docs/models.md, "Model FLOP utilization").
"""
import argparse
import gzip
import json
import math
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness_report  # noqa: E402
import torch_allreduce  # noqa: E402


def load(path):
    """A report, or a run's journal (<report>.journal.jsonl: one result per line, written as
    each finished; a run cut short leaves only it) read as a report of those results; either
    gzip-compressed (.gz, as reports/baselines stores them)."""
    plain = path[:-3] if path.endswith(".gz") else path
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        if not plain.endswith(".jsonl"):
            return json.load(f)
        results = [r for r in (json.loads(line) for line in f if line.strip()) if "problem" in r]
    return {"environment": None, "results": results, "journal": path}


def header(report):
    env = report.get("environment")
    if env is None:
        return (f"From the journal `{os.path.basename(report.get('journal', ''))}` of a run that did not finish: "
                f"{len(report['results'])} results; no environment recorded (GPU, date, commit: see the text).\n")
    gpu = (env.get("gpu") or {}).get("name", "no GPU")
    return (f"GPU: {gpu}, driver CUDA {env.get('cuda_driver')}, runtime {env.get('cuda_runtime')}; "
            f"date {env.get('date')}; commit `{env.get('git_commit')}`; command `{env.get('command_line')}`\n")


def shape_key(params, names):
    return " ".join(f"{n}={params[n]}" for n in names if n in params)


def gemm_rows(report, key_of):
    """The gemm results grouped by key_of(result): ({key: {variant: result}}, variants in order)."""
    rows = OrderedDict()
    variants = []
    for r in report["results"]:
        if r["problem"] != "gemm":
            continue
        rows.setdefault(key_of(r), {})[r["variant"]] = r
        if r["variant"] not in variants:
            variants.append(r["variant"])
    return rows, variants


def gemm(report):
    def key_of(r):
        p = r["params"]
        return f"{p['M']}x{p['N']}x{p['K']}" + ("" if p.get("beta", 0) == 0 else f" a={p['alpha']:g} b={p['beta']:g}")
    results, variants = gemm_rows(report, key_of)
    rows = OrderedDict((key, {v: r["rates"]["gflops"] if r["status"] == "passed" else r["status"]
                              for v, r in vals.items()}) for key, vals in results.items())
    out = [header(report), "GFLOP/s (median time), and % of cuBLAS in the same run:\n",
           "| M x N x K | " + " | ".join(variants) + " |", "|---" * (len(variants) + 1) + "|"]
    for key, vals in rows.items():
        ref = vals.get("cublas") if isinstance(vals.get("cublas"), float) else None
        cells = []
        for v in variants:
            x = vals.get(v)
            if isinstance(x, float):
                cell = f"{x:,.0f}"
                if ref and v != "cublas":
                    cell += f" ({100 * x / ref:.0f}%)"
                cells.append(cell)
            else:
                cells.append(x or "-")
        out.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def gemm_zoo(report):
    """The shape zoo (suites/gemm-shapes.yaml, issue 32 item 5). One row per case, dtype, layout
    and shape: each variant's median time and its speed against cuBLAS of the same row (cuBLAS
    time / its time: above 1.00 is faster), or why it did not run; auto's choice (its config).
    Then per dtype, for each variant, the geometric mean and the minimum of that ratio over the
    rows where both passed (the issue's targets are auto's)."""
    def key_of(r):
        p = r["params"]
        return (r.get("case", ""), p.get("dtype", "f32"), p.get("layout", "nn"), f"{p['M']}x{p['N']}x{p['K']}")
    rows, variants = gemm_rows(report, key_of)
    others = [v for v in variants if v != "cublas"]
    out = [header(report), "Median time per shape, and cuBLAS time / variant time in the same run (above 1.00: faster "
           "than cuBLAS):\n", "| case | dtype | layout | M x N x K | " + " | ".join(variants) + " | auto's choice |",
           "|---" * (len(variants) + 5) + "|"]
    ratios = OrderedDict()  # (dtype, variant) -> [(ratio, shape)]
    for (case, dtype, layout, shape), vals in rows.items():
        ref = vals.get("cublas")
        ref_s = ref["stats"]["median_s"] if ref and ref["status"] == "passed" else None
        cells = []
        for v in variants:
            x = vals.get(v)
            if x is None:
                cells.append("-")
            elif x["status"] != "passed":
                cells.append(x["status"])
            else:
                t = x["stats"]["median_s"]
                cell = f"{t * 1e6:,.1f} us"
                if ref_s and v != "cublas":
                    cell += f" ({ref_s / t:.2f})"
                    ratios.setdefault((dtype, v), []).append((ref_s / t, f"{layout} {shape}"))
                cells.append(cell)
        auto = vals.get("auto")
        choice = str(auto.get("config") or "") if auto and auto["status"] == "passed" else ""
        out.append(f"| {case} | {dtype} | {layout} | {shape} | " + " | ".join(cells) + f" | {choice} |")
    out += ["", "Per dtype: geometric mean (and minimum) of cuBLAS time / variant time over the rows where both passed:\n",
            "| dtype | " + " | ".join(others) + " |", "|---" * (len(others) + 1) + "|"]
    for dtype in OrderedDict((d, 0) for d, _ in ratios):
        cells = []
        for v in others:
            xs = ratios.get((dtype, v))
            if not xs:
                cells.append("-")
                continue
            gm = math.exp(sum(math.log(x) for x, _ in xs) / len(xs))
            lo = min(xs)
            cells.append(f"{gm:.3f} over {len(xs)} (min {lo[0]:.2f} at {lo[1]})")
        out.append(f"| {dtype} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


# dtype of each reports/pytorch_attention.py variant, as the harness' `dtype` param writes it
SDPA_DTYPE = {"sdpa_fp32": "f32", "sdpa_flash_fp16": "f16", "sdpa_cudnn_fp16": "f16",
              "sdpa_flash_bf16": "bf16", "sdpa_cudnn_bf16": "bf16"}


def dtype_of(params):
    return params.get("dtype", "f32")


def sdpa_results(pytorch):
    """{(problem, shape, dtype): {variant: result}} of a pytorch_attention.py report."""
    out = {}
    for r in (pytorch or {}).get("results", []):
        dt = SDPA_DTYPE.get(r["variant"])
        if dt:
            out.setdefault((r["problem"], shape_key(r["params"], PARAMS), dt), {})[r["variant"]] = r
    return out


def clock_text(r):
    """", 1605 MHz": the median SM clock while the result was timed, empty where it was not
    recorded: NVML's (the harness's sensors, sampled every 2 ms; PyTorch's scripts read it
    after each sample) where the result has it, else the harness's clock probe. The probe
    read 1-5% above the device's maximum in about 5% of the H100 results of
    reports/baselines (never on an H200) while NVML read the maximum, so NVML comes first,
    as it does for the report's cycles per launch. Under the power cap two kernels of the
    same work can run at different clocks."""
    mhz = clock_mhz(r)
    return f", {mhz:.0f} MHz" if mhz else ""


def clock_mhz(r):
    """The median SM clock clock_text prints (NVML's first, else the clock probe's), or None."""
    nvml = ((r.get("sensors") or {}).get("sm_clock_mhz") or {}).get("median")
    return nvml or (r.get("clocks") or {}).get("median_mhz")


def fastest(results):
    """(median_s, variant) of the fastest passed result, or None."""
    times = [(r["stats"]["median_s"], v) for v, r in results.items() if r["status"] == "passed" and r.get("stats")]
    return min(times) if times else None


def attention(report, pytorch=None):
    sdpa = {k: fastest(v) for k, v in sdpa_results(pytorch).items()}
    sdpa = {k: v for k, v in sdpa.items() if v}
    out = [header(report), "| problem | shape | variant | median | TFLOP/s | extra memory |" + (" PyTorch SDPA (fastest backend at the dtype) | ours / PyTorch time |" if sdpa else ""),
           "|---|---|---|---|---|---|" + ("---|---|" if sdpa else "")]
    for r in report["results"]:
        if not r["problem"].startswith("attention"):
            continue
        key = shape_key(r["params"], PARAMS)
        if r["status"] == "passed":
            t = r["stats"]["median_s"]
            line = f"| {r['problem']} | {key} | {r['variant']} | {t * 1e3:.3f} ms | {r['rates']['gflops'] / 1e3:.1f} | {r['memory']['workspace_peak_bytes'] / 2**20:.1f} MiB |"
            if sdpa:
                ref = sdpa.get((r["problem"], key, dtype_of(r["params"])))
                line += f" {ref[0] * 1e3:.3f} ms ({ref[1]}) | {t / ref[0]:.2f} |" if ref else " - | - |"
        else:
            line = f"| {r['problem']} | {key} | {r['variant']} | {r['status']}: {r['reason'][:80]} | | |" + (" | |" if sdpa else "")
        out.append(line)
    return "\n".join(out) + "\n"


def attention_sdpa(report, pytorch):
    """Per shape and dtype: our fastest passed variant, every SDPA backend measured at that
    dtype (median, or why it did not run), the reference (the fastest of them) and our
    speed as a multiple of the reference's."""
    sdpa = sdpa_results(pytorch)
    ours = OrderedDict()
    for r in report["results"]:
        if r["problem"].startswith("attention"):
            ours.setdefault((r["problem"], shape_key(r["params"], PARAMS), dtype_of(r["params"])), {})[variant_label(r)] = r
    backends = [v for v in SDPA_DTYPE if any(v in x for x in sdpa.values())]
    out = [header(report), "Reference: the fastest SDPA backend that ran at the shape's dtype (bf16 / f16: flash or cuDNN). "
           "MHz: the median SM clock while each was timed, where recorded.\n",
           "| problem | shape | dtype | ours (fastest variant) | " + " | ".join(backends) + " | reference | ours / reference speed |",
           "|---|---|---|---|" + "---|" * len(backends) + "---|---|"]
    for key, variants in ours.items():
        mine, theirs = fastest(variants), sdpa.get(key, {})
        ref = fastest(theirs)
        cells = []
        for b in backends:
            r = theirs.get(b)
            if r is None:
                cells.append("-")
            elif r["status"] == "passed":
                cells.append(f"{r['stats']['median_s'] * 1e3:.3f} ms")
            else:
                cells.append(f"{r['status']}: {r['reason'][:60]}")
        mine_cell = f"{mine[0] * 1e3:.3f} ms ({mine[1]}{clock_text(variants[mine[1]])})" if mine else "none passed"
        ref_cell = f"{ref[1]}{clock_text(theirs[ref[1]])}" if ref else "-"
        speed = f"{ref[0] / mine[0]:.2f}x" if mine and ref else "-"
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {mine_cell} | " + " | ".join(cells) + f" | {ref_cell} | {speed} |")
    return "\n".join(out) + "\n"


PARAMS = ["batch", "heads", "kv_heads", "seq_len", "head_dim", "causal"]


def variant_label(r):
    """The variant's name plus any parameter outside the shape that is switched on
    (`flash_wgmma deterministic:true`), so that two modes of one variant at one shape are
    two entries rather than the later one replacing the earlier."""
    extra = [f"{k}:{str(v).lower()}" for k, v in r["params"].items()
             if k not in PARAMS and k not in ("dtype", "scale") and v not in (False, 0, None, "")]
    return " ".join([r["variant"]] + extra)


NOISY_REFERENCE = 0.10  # relative noise of the reference's samples above which its median is not a claim


def attention_pair(report, second=None, ours="flash_wgmma", reference="sdpa_cudnn"):
    """Per attention problem, shape and mode (deterministic, ...): `ours` and `reference` from the
    same report (timed in one process, e.g. in rounds), their medians and median SM clocks, the
    ratio reference time / ours (> 1: ours faster) and the reference's relative noise; a second
    report adds the same columns for its run. A reference noisier than NOISY_REFERENCE is marked
    (a Python variant whose launches are host-bound at short shapes reads slow and unsteady);
    the summary line (geometric mean, minimum) leaves such rows out."""
    def pairs(rep):
        out = OrderedDict()
        for r in rep["results"]:
            if r["problem"].startswith("attention") and r["variant"] in (ours, reference):
                extra = variant_label(r)[len(r["variant"]):].strip()
                key = (r["problem"], shape_key(r["params"], PARAMS), dtype_of(r["params"]), extra)
                out.setdefault(key, {})[r["variant"]] = r
        return out

    runs = [pairs(report)] + ([pairs(second)] if second else [])

    def cells(both):
        a, b = both.get(ours), both.get(reference)
        for name, r in ((ours, a), (reference, b)):
            if r is None:
                return f"{name}: not in the report | - | -", None
            if r["status"] != "passed":
                return f"{name} {r['status']}: {(r.get('reason') or '')[:60]} | - | -", None
        ta, tb = a["stats"]["median_s"], b["stats"]["median_s"]
        noise = (b["stats"] or {}).get("rel_noise")
        noisy = noise is not None and noise > NOISY_REFERENCE
        noise_cell = "-" if noise is None else f"{100 * noise:.0f}%" + (" (noisy: not a claim)" if noisy else "")
        return (f"{ta * 1e3:.3f} ms{clock_text(a)} / {tb * 1e3:.3f} ms{clock_text(b)} | {tb / ta:.3f}x | {noise_cell}",
                None if noisy else tb / ta)

    head = "| problem | shape | dtype | mode |"
    rule = "|---|---|---|---|"
    for i in range(len(runs)):
        run = f"run {i + 1}: " if len(runs) > 1 else ""
        head += f" {run}{ours} / {reference} | {run}ratio | {run}{reference} noise |"
        rule += "---|---|---|"
    out = [header(report) + (header(second) if second else ""),
           f"Ratio = {reference}'s median / {ours}'s (> 1: {ours} faster); MHz: the median SM clock of each. "
           f"A reference whose samples' relative noise exceeds {100 * NOISY_REFERENCE:.0f}% is marked and left out of the summary.\n",
           head, rule]
    kept = [[] for _ in runs]
    for key, both in runs[0].items():
        line = f"| {key[0]} | {key[1]} | {key[2]} | {key[3] or '-'} |"
        for i, run in enumerate(runs):
            text, ratio = cells(run.get(key, {}))
            line += f" {text} |"
            if ratio is not None:
                kept[i].append((ratio, key[1]))
        out.append(line)
    out.append("")
    for i, k in enumerate(kept):
        if not k:
            continue
        gm = math.exp(sum(math.log(r) for r, _ in k) / len(k))
        low = min(k)
        out.append(f"{'run ' + str(i + 1) + ': ' if len(runs) > 1 else ''}geometric mean {gm:.3f}x over {len(k)} shapes "
                   f"with a steady reference (minimum {low[0]:.3f}x at {low[1]})")
    return "\n".join(out) + "\n"


def attention_deterministic(reports):
    """Issue 31's deterministic mode: per report (run), attention problem, variant, shape and
    dtype, the result with deterministic:false beside the one with true: both medians and
    median SM clocks, the change in time and in cycles (time x clock). The deterministic
    kernel waits for its turn, draws less power and can run at a higher clock under the power
    cap, so the two columns can differ by several percent: neither is a matched A/B where the
    clocks differ, and the table says by how much they do."""
    out = [header(reports[0]) + "".join(header(r) for r in reports[1:]),
           "Cost = deterministic / default - 1, in median time and in cycles (median time x median SM clock); "
           "clocks: the median SM clock of each result (NVML's where recorded).\n",
           "| run | problem | variant | shape | dtype | default | deterministic | time | cycles | clocks apart |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    rows = 0
    for i, report in enumerate(reports):
        pairs = OrderedDict()
        for r in report["results"]:
            if not r["problem"].startswith("attention") or "deterministic" not in r["params"]:
                continue
            key = (r["problem"], r["variant"], shape_key(r["params"], PARAMS), dtype_of(r["params"]))
            pairs.setdefault(key, {})[is_true(r["params"]["deterministic"])] = r
        for key, both in pairs.items():
            a, b = both.get(False), both.get(True)
            if a is None or b is None:
                continue
            line = f"| {i + 1} | {key[0]} | {key[1]} | {key[2]} | {key[3]} |"
            bad = [(name, r) for name, r in (("default", a), ("deterministic", b)) if r["status"] != "passed"]
            if bad:
                name, r = bad[0]
                out.append(line + f" {name} {r['status']}: {(r.get('reason') or '')[:60]} | | | | |")
                continue
            ta, tb = a["stats"]["median_s"], b["stats"]["median_s"]
            ma, mb = clock_mhz(a), clock_mhz(b)
            cycles = f"{100 * (tb * mb / (ta * ma) - 1):+.1f}%" if ma and mb else "-"
            apart = f"{100 * abs(mb / ma - 1):.1f}%" if ma and mb else "-"
            out.append(line + f" {ta * 1e3:.3f} ms{clock_text(a)} | {tb * 1e3:.3f} ms{clock_text(b)} | "
                              f"{100 * (tb / ta - 1):+.1f}% | {cycles} | {apart} |")
            rows += 1
    if rows == 0:
        out.append("\nNo attention result ran with both deterministic:false and deterministic:true.")
    return "\n".join(out) + "\n"


AGREEMENT = 0.02  # issue 35: a Python variant's harness timing within 2% of the script's, same work


def sdpa_agreement(report, pytorch):
    """The same PyTorch work timed twice: the SDPA variants of a harness report
    (examples/python/torch_sdpa.py) against reports/pytorch_attention.py --as-variants
    (sdpa_ops.py's calls in the script's own loop). Per problem, backend and shape: both
    medians with their median SM clocks, harness / script, and whether it is within
    AGREEMENT; a summary line per backend."""
    script = {}
    for (problem, shape, dtype), by_variant in sdpa_results(pytorch).items():
        for v, r in by_variant.items():
            backend = "sdpa_" + v.split("_")[1]  # sdpa_cudnn_bf16 -> sdpa_cudnn
            script[(problem, shape, dtype, backend)] = r
    out = [header(report) + header(pytorch),
           f"harness / script: the ratio of the medians of the same calls (within {100 * AGREEMENT:.0f}%: "
           "yes); MHz: the median SM clock of each.\n",
           "| problem | shape | dtype | backend | harness | script | harness / script | within |",
           "|---|---|---|---|---|---|---|---|"]
    within = OrderedDict()
    for r in report["results"]:
        key = (r["problem"], shape_key(r["params"], PARAMS), dtype_of(r["params"]), r["variant"])
        s = script.get(key)
        if s is None or r["status"] != "passed" or s["status"] != "passed":
            continue
        a, b = r["stats"]["median_s"], s["stats"]["median_s"]
        ok = abs(a / b - 1) <= AGREEMENT
        within.setdefault(r["variant"], []).append(ok)
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {a * 1e3:.4f} ms{clock_text(r)} | "
                   f"{b * 1e3:.4f} ms{clock_text(s)} | {a / b:.3f} | {'yes' if ok else '**no**'} |")
    out.append("")
    for backend, oks in within.items():
        out.append(f"{backend}: {sum(oks)} of {len(oks)} shapes within {100 * AGREEMENT:.0f}%")
    if not within:
        out.append("no shape passed in both reports")
    return "\n".join(out) + "\n"


def nccl_torch(report, ours="nccl", theirs="torch"):
    """Markdown: every collective of one harness report with both the harness's NCCL calls
    (`ours`) and torch.distributed's (`theirs`, examples/python/torch_distributed.py), timed
    alike in the same run: time per op and busbw of each, ours / torch's, per collective,
    size, dtype and in-place form; all_reduce rows carry issue 33's targets (8 B time <= 1.1x,
    busbw >= 0.95x at >= 1 MiB)."""
    pairs = OrderedDict()
    for r in report.get("results", []):
        if r.get("problem", "").startswith("nccl_") and r.get("variant") in (ours, theirs):
            p = r["params"]
            key = (r["problem"][5:], int(p.get("bytes", 0)), p.get("dtype"), str(p.get("in_place", False)).lower())
            pairs.setdefault(key, {})[r["variant"]] = r
    ranks = next((len((r.get("extra") or {}).get("ranks", [])) for both in pairs.values() for r in both.values()
                  if (r.get("extra") or {}).get("ranks")), "?")
    out = [header(report),
           f"{ours} (the harness's NCCL calls) and {theirs} (torch.distributed, its own communicator) in one run, "
           f"{ranks} ranks. Time per op: per sample a barrier, then K ops between one event pair, / K; the median "
           "over samples of the mean over ranks. Ratios are ours / torch's.\n",
           "| collective | bytes | dtype | in place | ours us/op | torch us/op | time ratio | ours busbw GB/s "
           "| torch busbw GB/s | busbw ratio | target |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    unpaired = OrderedDict()  # reason -> rows: a form one side lacks (torch's all_reduce: in place only)
    for (coll, nbytes, dtype, in_place), both in pairs.items():
        a, b = both.get(ours), both.get(theirs)
        if a is None or b is None:
            missing = theirs if b is None else ours
            unpaired.setdefault(f"no {missing} result in the report", []).append(
                f"{coll} {nbytes} {dtype} in_place={in_place}")
            continue
        if a["status"] != "passed" or b["status"] != "passed":
            for v, r in ((ours, a), (theirs, b)):
                if r["status"] != "passed":
                    unpaired.setdefault(f"{v} {r['status']}: {r.get('reason', '')}", []).append(
                        f"{coll} {nbytes} {dtype} in_place={in_place}")
            continue
        xa, xb = a.get("extra") or {}, b.get("extra") or {}
        tr = torch_allreduce.ratio(xa.get("time_s"), xb.get("time_s"))
        br = torch_allreduce.ratio(xa.get("busbw_gbps"), xb.get("busbw_gbps"))
        goal = torch_allreduce.target(nbytes, tr, br) if coll == "all_reduce" else ""
        out.append(f"| {coll} | {nbytes} | {dtype} | {in_place} | {torch_allreduce.fmt_us(xa.get('time_s'))} "
                   f"| {torch_allreduce.fmt_us(xb.get('time_s'))} | {tr:.3f} | {xa.get('busbw_gbps', 0):.2f} "
                   f"| {xb.get('busbw_gbps', 0):.2f} | {br:.3f} | {goal} |")
    if unpaired:
        out.append("")
        for why, rows in unpaired.items():
            out.append(f"Not paired, {len(rows)} rows ({rows[0]}{', ...' if len(rows) > 1 else ''}): {why}")
    return "\n".join(out) + "\n"


def attention_summary(report):
    """naive vs flash per shape: median ms, TFLOP/s and the speedup, forward and backward."""
    cells = OrderedDict()
    for r in report["results"]:
        if not r["problem"].startswith("attention") or r["status"] != "passed":
            continue
        p = r["params"]
        key = (r["problem"], p["batch"], p["heads"], p["kv_heads"] or p["heads"], p["seq_len"], p["head_dim"], p["causal"])
        cells.setdefault(key, {})[r["variant"]] = (r["stats"]["median_s"], r["rates"]["gflops"])
    out = [header(report), "| problem | B | H | Hkv | N | d | causal | naive | flash | flash TFLOP/s | flash speed-up |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, v in cells.items():
        if "flash" not in v:
            continue
        naive = v.get("naive")
        fl = v["flash"]
        out.append("| " + " | ".join(str(k).lower() for k in key) +
                   f" | {naive[0] * 1e3:.3f} ms" if naive else "| " + " | ".join(str(k).lower() for k in key) + " | -")
        out[-1] += f" | {fl[0] * 1e3:.3f} ms | {fl[1] / 1e3:.1f} | " + (f"{naive[0] / fl[0]:.2f}x |" if naive else "- |")
    return "\n".join(out) + "\n"


def attention_fp8(report):
    """fp8_e4m3 beside bf16 per shape (suites/attention-fp8.yaml): each passed fp8 result of an
    attention variant with the bf16 result of the same variant and shape; speed-up = bf16 time /
    fp8 time (the issue's target: >= 1.3 at d = 128, N >= 4096), both clocks."""
    runs = {}
    for r in report["results"]:
        if r["problem"] == "attention" and dtype_of(r["params"]) in ("bf16", "fp8_e4m3"):
            runs[(r["variant"], shape_key(r["params"], PARAMS), dtype_of(r["params"]))] = r
    out = [header(report), "| variant | shape | bf16 TFLOP/s | fp8 TFLOP/s | fp8 speed-up over bf16 |",
           "|---|---|---|---|---|"]
    for (variant, key, dt), r in runs.items():
        if dt != "fp8_e4m3":
            continue
        b = runs.get((variant, key, "bf16"))
        if r["status"] != "passed":
            out.append(f"| {variant} | {key} | | {r['status']}: {r.get('reason', '')[:80]} | |")
            continue
        fp8 = f"{r['rates']['gflops'] / 1e3:.1f}{clock_text(r)}"
        if b is None or b["status"] != "passed":
            out.append(f"| {variant} | {key} | {b['status'] if b else '-'} | {fp8} | - |")
            continue
        speedup = b["stats"]["median_s"] / r["stats"]["median_s"]
        out.append(f"| {variant} | {key} | {b['rates']['gflops'] / 1e3:.1f}{clock_text(b)} | {fp8} | {speedup:.2f}x |")
    return "\n".join(out) + "\n"


def transformer_config(p):
    """B=100 N=13, or B=100 src=64 tgt=48 where the lengths differ (src_len / tgt_len, 0 or
    absent meaning seq_len); " world=2" for a data-parallel result."""
    src, tgt = p.get("src_len") or p["seq_len"], p.get("tgt_len") or p["seq_len"]
    cfg = f"B={p['batch']} N={src}" if src == tgt else f"B={p['batch']} src={src} tgt={tgt}"
    world = int(p.get("world_size") or 1)
    return cfg + (f" world={world}" if world > 1 else "")


def transformer_precision(r):
    """bf16 or fp32: the engine's extra.precision (f32 / bf16) or a PyTorch result's
    (fp32 / bf16), else the variant's name."""
    x = r.get("extra") or {}
    return "bf16" if "bf16" in str(x.get("precision") or r["variant"]) else "fp32"


def is_true(v):
    return v is True or str(v).lower() == "true"


def engine_label(r):
    """The engine's variant, with the execution parameters that tell rows of one
    configuration apart (graph: true, fused: false)."""
    p = r["params"]
    return r["variant"] + (" graph" if is_true(p.get("graph")) else "") + \
        (" unfused" if "fused" in p and not is_true(p["fused"]) else "")


def pytorch_label(t):
    """A PyTorch result's variant, with its compile mode where an older report's name does
    not carry it (pytorch_bf16_compile measured with --compile-mode reduce-overhead)."""
    cm = (t.get("extra") or {}).get("compile_mode")
    suffix = "_" + cm.replace("-", "_") if cm and cm != "default" else ""
    name = t["variant"] if not suffix or t["variant"].endswith(suffix) else f"{t['variant']} [{cm}]"
    return f"{name} (PyTorch)"


def result_peak(r, env_peak):
    """(TFLOP/s or None, source): the result's own peak fields, else its report's
    environment's (the same formula)."""
    x = r.get("extra") or {}
    if x.get("peak_tflops"):
        return x["peak_tflops"], x.get("peak_source", "")
    if x.get("peak_source"):
        return None, x["peak_source"]
    return env_peak


def phases_cell(ph):
    """forward / backward / optimizer ms, or why not (a CUDA-graph step has no phase times)."""
    if ph.get("forward") is None:
        return "- (graph)" if ph else "-"
    return f"{ph['forward']:.2f} / {ph['backward']:.2f} / {ph['optimizer']:.2f}"


def mfu_cell(r, peak):
    m = harness_report.mfu(r["work"]["flops"], r["stats"]["median_s"], peak[0]) if r.get("work") else None
    return f"{m:.1%}" if m is not None else "peak unknown"


def pytorch_references(pytorch):
    """{(config, precision): (median_s, label, result)}: the fastest PyTorch result that
    passed, per configuration and precision."""
    best = {}
    for t in (pytorch or {}).get("results", []):
        if t.get("problem") != "train_transformer" or t["status"] != "passed" or not t.get("stats"):
            continue
        key = (transformer_config(t["params"]), transformer_precision(t))
        cand = (t["stats"]["median_s"], pytorch_label(t), t)
        if key not in best or cand[0] < best[key][0]:
            best[key] = cand
    return best


def transformer(report, pytorch=None, metrics_lines=None):
    """metrics_lines: the $HARNESS_TRAIN_METRICS JSON lines, for reports written before
    results carried them in `extra`. Rows are grouped by configuration: the engine's
    variants, then every PyTorch result of the same configuration (the modes of
    reports/pytorch_transformer.py, one per torch.compile mode). MFU: model FLOPs per step
    (`work`) / the median step / the dense bf16 peak, the same for both sides and both
    precisions. Reference: per configuration and precision, PyTorch's fastest result that
    finished; `vs PyTorch best` = its median / the row's (above 1: the row is faster)."""
    by_variant = {}
    for m in metrics_lines or []:
        by_variant[(m["variant"], str(m["params"]["batch"]), str(m["params"]["seq_len"]))] = m
    refs = pytorch_references(pytorch)
    ours_peak = harness_report.peak_of_environment(report.get("environment"))
    theirs_peak = harness_report.peak_of_environment((pytorch or {}).get("environment"))
    peaks = OrderedDict()
    out = [header(report), "| config | variant | ms/step (median) | tokens/s | MFU | forward / backward / optimizer ms | "
           "peak memory | cudaMalloc after warm-up | loss first -> last | vs PyTorch best |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    groups = {}

    def versus(cfg, r):
        ref = refs.get((cfg, transformer_precision(r)))
        if ref is None:
            return "-"
        if ref[2] is r:
            return "reference"
        return f"{ref[0] / r['stats']['median_s']:.2f}x"

    for r in report["results"]:
        if r["problem"] != "train_transformer":
            continue
        p = r["params"]
        cfg = transformer_config(p)
        rows = groups.setdefault(cfg, [])
        if r["status"] != "passed":
            rows.append(f"| {cfg} | {engine_label(r)} | {r['status']}: {r['reason'][:100]} | | | | | | | |")
            continue
        x = r.get("extra") or by_variant.get((r["variant"], str(p["batch"]), str(p["seq_len"])), {})
        ph = x.get("phase_ms", {})
        al = x.get("allocator", {})
        peak = result_peak(dict(r, extra=x), ours_peak)
        peaks.setdefault(peak[1], peak[0])
        rows.append(f"| {cfg} | {engine_label(r)} | {r['stats']['median_s'] * 1e3:.2f} | {x.get('tokens_per_s', 0):,.0f} | "
                    f"{mfu_cell(r, peak)} | "
                    f"{phases_cell(ph)} | "
                    f"{al.get('peak_bytes_in_use', 0) / 2**20:,.0f} MiB | {al.get('cuda_malloc_calls_after_check_steps', '-')} | "
                    f"{x.get('loss_first', 0):.3f} -> {x.get('loss_last', 0):.3f} | {versus(cfg, r)} |")
    for t in (pytorch or {}).get("results", []):
        if t.get("problem", "train_transformer") != "train_transformer":
            continue
        cfg = transformer_config(t["params"])
        name = pytorch_label(t)
        rows = groups.setdefault(cfg, [])
        if t["status"] != "passed":
            rows.append(f"| {cfg} | {name} | {t['status']}: {t['reason'][:100]} | | | | | | | |")
            continue
        x = t.get("extra") or {}
        ph = x.get("phase_ms", {})
        peak = result_peak(t, theirs_peak)
        peaks.setdefault(peak[1], peak[0])
        comp = f" (compile {x['compile_s']:.0f} s)" if x.get("compile_s") is not None else ""
        rows.append(f"| {cfg} | {name} | {t['stats']['median_s'] * 1e3:.2f}{comp} | {x.get('tokens_per_s', 0):,.0f} | "
                    f"{mfu_cell(t, peak)} | "
                    f"{phases_cell(ph)} | "
                    f"{x.get('peak_bytes_allocated', 0) / 2**20:,.0f} MiB | - | "
                    f"{x.get('loss_first', 0):.3f} -> {x.get('loss_last', 0):.3f} | {versus(cfg, t)} |")
    out += [row for rows in groups.values() for row in rows]
    notes = ["", "MFU: model FLOPs per step (the result's `work`: GEMMs x3, attention x3.5) / the median step / the "
             "dense bf16 tensor-core peak, for FP32 and bf16 rows alike. Peak: " +
             "; ".join(f"{v:.1f} TFLOP/s ({k})" if v else k for k, v in peaks.items()) + "."]
    if refs:
        notes += ["", "PyTorch reference per configuration and precision (its fastest result that finished; "
                  "`vs PyTorch best` = its median / the row's, above 1 the row is faster):", ""]
        notes += [f"- {cfg} {prec}: {label} {med * 1e3:.2f} ms" for (cfg, prec), (med, label, _) in refs.items()]
    elif pytorch is not None:
        notes += ["", "PyTorch reference: none (no PyTorch result finished)."]
    return "\n".join(out + notes) + "\n"


def memory(report):
    longest = {}
    out = [header(report), "| problem | N | variant | status | extra memory | median |", "|---|---|---|---|---|---|"]
    for r in report["results"]:
        if not r["problem"].startswith("attention"):
            continue
        n = r["params"]["seq_len"]
        extra = r["memory"]["workspace_peak_bytes"] / 2**30
        med = f"{r['stats']['median_s'] * 1e3:.2f} ms" if r["status"] == "passed" else ""
        status = r["status"] if r["status"] == "passed" else f"{r['status']}: {r['reason'][:70]}"
        out.append(f"| {r['problem']} | {n} | {r['variant']} | {status} | {extra:.3f} GiB | {med} |")
        if r["status"] == "passed":
            k = (r["problem"], r["variant"])
            longest[k] = max(longest.get(k, 0), n)
    out += ["", "Longest N that ran (passed its check):", "", "| problem | variant | longest N |", "|---|---|---|"]
    out += [f"| {p} | {v} | {n} |" for (p, v), n in sorted(longest.items())]
    return "\n".join(out) + "\n"


def stream(report):
    out = [header(report), "| op | n | variant | median | GB/s |", "|---|---|---|---|---|"]
    for r in report["results"]:
        if r["problem"] != "stream" or r["status"] != "passed":
            continue
        out.append(f"| {r['params']['op']} | {r['params']['n']} | {r['variant']} | {r['stats']['median_s'] * 1e6:.1f} us | {r['rates']['gbytes_per_s']:.1f} |")
    return "\n".join(out) + "\n"


# Kernel classes of a training step (issue 36 item 2), first match wins. A name is matched
# lower-cased; Triton kernels of torch.compile (triton_poi/red/per_fused_<ops>) by the ops
# their name lists, so a fused LayerNorm backward is LayerNorm, not "elementwise".
KERNEL_CLASSES = (
    ("attention backward", ("flash_bprop", "flash_tc_backward", "flash_backward", "flash_wgmma_backward",
                            "hopper_backward", "fmha_bwd", "attention_backward", "compute_dot_do_o", "convert_dq",
                            "dot_do_o", "attention::(anonymous namespace)::preprocess",
                            "attention::(anonymous namespace)::convert")),
    ("attention forward", ("flash_fprop", "flash_tc_forward", "flash_forward", "hopper_forward", "fmha_fwd",
                           "attention_forward", "sdpa", "flash", "fmha")),
    ("GEMM", ("gemm", "nvjet", "cutlass", "xmma", "gemv", "cublas", "sm90_", "sm80_", "splitk")),
    ("LayerNorm (and fused add)", ("layer_norm", "layernorm", "add_ln", "ln_dx", "ln_param", "ln_forward")),
    ("softmax + cross-entropy", ("cross_entropy", "ce_rows", "ce_finish", "softmax", "nll_loss", "log_softmax")),
    ("optimizer", ("adam", "multi_tensor_apply", "clip_multi", "sum_squares", "_foreach", "lerp", "sgd")),
    ("bias + activation", ("bias_act", "relu", "gelu", "threshold_backward", "silu")),
    ("head reshapes / transposes", ("heads_kernel", "transpose", "permute")),
    ("embedding + positions", ("embedding", "positional", "index_select", "gather", "scatter")),
    ("casts and copies", ("to_f32", "to_bf16", "multi_cast", "convert_kernel", "copy", "memcpy", "memset", "fill",
                          "_to_copy", "cast")),
    ("reductions (bias gradients, sums)", ("fused_sum", "sum_kernel", "reduce_kernel", "bias_grad")),
    ("elementwise (add, scale)", ("add_kernel", "map_kernel", "mul_kernel", "triton_poi")),
)


def gemm_layout(name):
    """The layout of a GEMM kernel where its name gives it: ours gemm_wgmma_kernel<T, TA, TB>
    (TA: A stored K x M, TB: B stored N x K) as nn / nt / tn / tt; cuBLAS nvjet_..._XYZ by
    its last letters; else ''."""
    low = name.lower()
    if "gemm_wgmma_kernel<" in low or "gemm_mma_kernel<" in low:
        args = [a.strip() for a in low.split("<", 1)[1].rstrip(">").split(",")]
        flags = [a for a in args if a in ("true", "false", "0", "1")]
        if len(flags) >= 2:
            ta, tb = (f in ("true", "1") for f in flags[-2:])
            return ("t" if ta else "n") + ("t" if tb else "n")
    if low.startswith("nvjet_"):
        tail = low.rsplit("_", 1)[-1]
        if len(tail) == 3 and set(tail) <= {"n", "t"}:
            return f"cuBLAS {tail.upper()}"
    return ""


def kernel_class(name):
    """The class of a kernel name (KERNEL_CLASSES); "other"."""
    low = name.lower()
    for cls, keys in KERNEL_CLASSES:
        if any(k in low for k in keys):
            return cls
    return "other"


def class_times(kernels, by_layout=None):
    """{class: [calls per step, seconds per step]} of a per-step kernel list ([{name, calls,
    time_s}]); `by_layout` (a dict) gets the GEMMs per layout the same way."""
    def add(table, key, k):
        c = table.setdefault(key, [0.0, 0.0])
        c[0] += float(k.get("calls") or 0)
        c[1] += float(k.get("time_s") or 0)

    out = {}
    for k in kernels or []:
        cls = kernel_class(k["name"])
        add(out, cls, k)
        if cls == "GEMM" and by_layout is not None:
            split_k = "splitk" in k["name"].lower()
            add(by_layout, gemm_layout(k["name"]) or ("split-K finish" if split_k else "other"), k)
    return out


def layout_text(layouts):
    return ", ".join(f"{k} {v[1] * 1e3:.3f} ms ({v[0]:.0f})" for k, v in sorted(layouts.items(), key=lambda x: -x[1][1]))


def breakdown(report, pytorch):
    """The step by kernel class, ours beside PyTorch's, per configuration: ms per step, and
    the difference (positive: ours slower). Ours from a profiled engine result
    (profile.kernels: one traced step), PyTorch's from extra.kernels (torch.profiler over
    --kernel-steps steps)."""
    ours = [r for r in report.get("results", []) if r.get("problem") == "train_transformer" and r["status"] == "passed"
            and ((r.get("profile") or {}).get("kernels") or {}).get("kernels")]
    theirs = [t for t in (pytorch or {}).get("results", []) if t.get("problem") == "train_transformer"
              and t["status"] == "passed" and (t.get("extra") or {}).get("kernels")]
    out = [header(report)]
    if pytorch:
        out.append(f"PyTorch: {header(pytorch).splitlines()[0]}")
    if not ours:
        out.append("No engine result with a kernel breakdown (run with the profiling pass: not --no-profile, not graph).")
        return "\n".join(out)
    for r in ours:
        cfg, prec = transformer_config(r["params"]), transformer_precision(r)
        mine_lay, other_lay = {}, {}
        mine = class_times(r["profile"]["kernels"]["kernels"], mine_lay)
        # PyTorch's fastest mode with a breakdown at this configuration and precision.
        peers = [t for t in theirs if transformer_config(t["params"]) == cfg and transformer_precision(t) == prec]
        peer = min(peers, key=lambda t: t["stats"]["median_s"]) if peers else None
        other = class_times(peer["extra"]["kernels"], other_lay) if peer else {}
        who = pytorch_label(peer) if peer else "no PyTorch breakdown at this configuration"
        out += ["", f"**{cfg} {prec}: {engine_label(r)} vs {who}** (ms per step; + = ours slower)", "",
                "| kernel class | ours calls | ours ms | PyTorch calls | PyTorch ms | ours - PyTorch |",
                "|---|---|---|---|---|---|"]
        classes = sorted(set(mine) | set(other), key=lambda c: -max(mine.get(c, [0, 0])[1], other.get(c, [0, 0])[1]))
        for c in classes:
            a, b = mine.get(c, [0, 0]), other.get(c, [0, 0])
            pc = f"{b[0]:.0f}" if peer else "-"
            pm = f"{b[1] * 1e3:.3f}" if peer else "-"
            d = f"{(a[1] - b[1]) * 1e3:+.3f}" if peer else "-"
            out.append(f"| {c} | {a[0]:.0f} | {a[1] * 1e3:.3f} | {pc} | {pm} | {d} |")
        k_ours = sum(v[1] for v in mine.values())
        k_peer = sum(v[1] for v in other.values())
        step_ours = r["stats"]["median_s"]
        out.append(f"| **kernels, sum** | {sum(v[0] for v in mine.values()):.0f} | {k_ours * 1e3:.3f} | "
                   + (f"{sum(v[0] for v in other.values()):.0f} | {k_peer * 1e3:.3f} | {(k_ours - k_peer) * 1e3:+.3f} |"
                      if peer else "- | - | - |"))
        line = f"| step (median) and host gaps (step - kernels) | | {step_ours * 1e3:.3f} ({(step_ours - k_ours) * 1e3:.3f}) | "
        if peer:
            step_peer = peer["stats"]["median_s"]
            line += f"| {step_peer * 1e3:.3f} ({(step_peer - k_peer) * 1e3:.3f}) | {(step_ours - step_peer) * 1e3:+.3f} |"
        else:
            line += "| - | - |"
        out.append(line)
        out += ["", f"GEMMs by layout (ms per step, calls): ours {layout_text(mine_lay) or '-'}"
                + (f"; PyTorch {layout_text(other_lay) or '-'}" if peer else "")
                + ". Ours name the stored layout of A and B (nn, nt, tn); cuBLAS names its column-major "
                  "operations, so the two are not paired row by row."]
    return "\n".join(out)


def ddp_row_key(r):
    """(precision, world_size): rows of one precision together, by GPUs."""
    return transformer_precision(r), int(r["params"].get("world_size") or (r.get("extra") or {}).get("world_size") or 1)


def ddp(report, pytorch_reports=()):
    """Data-parallel training, ours and PyTorch DDP. Ours' efficiency is the result's own
    (data_parallel.scaling_efficiency: against every rank alone in the same case);
    PyTorch's is its tokens/s over world_size x its 1-GPU run of the same precision and
    all-reduce type among the given files (none given: no figure)."""
    ours = [r for r in report.get("results", []) if r.get("problem") == "train_transformer" and r["status"] == "passed"]
    theirs = [t for rep in pytorch_reports for t in rep.get("results", [])
              if t.get("problem") == "train_transformer" and t["status"] == "passed"]
    lines = [header(report), "",
             "| variant | precision | GPUs | exchange | ms/step (median) | tokens/s (job) | scaling efficiency "
             "| MFU per GPU | exposed exchange (ms) |",
             "|---|---|---|---|---|---|---|---|---|"]

    def pct(x):
        return f"{x:.1%}" if isinstance(x, (int, float)) else "-"

    def exchange(r):  # the all-reduce's type; none on one GPU
        return (r["params"].get("grad_reduce") or "f32") if ddp_row_key(r)[1] > 1 else "-"

    for r in sorted(ours, key=lambda r: (ddp_row_key(r), r["variant"], exchange(r) != "f32")):
        x, (prec, world) = r.get("extra") or {}, ddp_row_key(r)
        dp = x.get("data_parallel") or {}
        eff = f"{dp['scaling_efficiency']:.3f}" if world > 1 and dp.get("scaling_efficiency") else "-"
        exch = (x.get("phase_ms") or {}).get("exchange_wait")
        lines.append(f"| {r['variant']} | {prec} | {world} | {exchange(r)} | "
                     f"{r['stats']['median_s'] * 1e3:.2f} | {x.get('tokens_per_s', 0):,.0f} | {eff} | {pct(x.get('mfu'))} | "
                     f"{f'{exch:.2f}' if isinstance(exch, (int, float)) else '-'} |")
    one_gpu = {}
    for t in theirs:
        x = t.get("extra") or {}
        if int(x.get("world_size") or 1) == 1:
            one_gpu[(transformer_precision(t), x.get("grad_reduce") or "f32")] = x.get("tokens_per_s")
    for t in sorted(theirs, key=lambda t: (ddp_row_key(t), t["variant"])):
        x, (prec, world) = t.get("extra") or {}, ddp_row_key(t)
        # The 1-GPU run of the same precision (DDP's hook does nothing on one GPU: f32's).
        base = one_gpu.get((prec, "f32"))
        eff = f"{x['tokens_per_s'] / (world * base):.3f}" if world > 1 and base else "-"
        if world > 1 and base and x["tokens_per_s"] > world * base:  # not a scaling: a slower 1-GPU job
            eff += " (above 1: its 1-GPU job ran slower per GPU)"
        lines.append(f"| {t['variant']} (PyTorch) | {prec} | {world} | {(x.get('grad_reduce') or 'f32') if world > 1 else '-'} | "
                     f"{t['stats']['median_s'] * 1e3:.2f} | {x.get('tokens_per_s', 0):,.0f} | {eff} | {pct(x.get('mfu'))} | - |")
    # Ours against PyTorch's fastest job, per precision and GPUs.
    best = {}
    for t in theirs:
        key = ddp_row_key(t)
        if key not in best or t["extra"]["tokens_per_s"] > best[key]["extra"]["tokens_per_s"]:
            best[key] = t
    lines.append("")
    for r in sorted(ours, key=ddp_row_key):
        key = ddp_row_key(r)
        if key in best:
            b = best[key]
            lines.append(f"- {r['variant']} ({key[0]}, {key[1]} GPU, exchange {exchange(r)}): "
                         f"{r['extra']['tokens_per_s'] / b['extra']['tokens_per_s']:.3f}x the tokens/s of "
                         f"{b['variant']} (PyTorch's fastest job there)")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=("gemm", "gemm-zoo", "attention", "attention-sdpa", "attention-pair", "sdpa-agreement",
                                     "attention-deterministic", "memory", "stream",
                                     "attention-summary",
                                     "attention-fp8", "transformer", "nccl", "nccl-torch", "breakdown", "ddp"))
    ap.add_argument("report", metavar="REPORT.json")
    ap.add_argument("pytorch", nargs="?", metavar="PYTORCH.json",
                    help="attention, attention-sdpa, transformer; nccl: reports/torch_allreduce.py's JSON; "
                         "attention-pair, attention-deterministic: a second run's report")
    ap.add_argument("metrics", nargs="?", metavar="METRICS.jsonl", help="transformer: $HARNESS_TRAIN_METRICS lines")
    ap.add_argument("--ours", default="flash_wgmma", help="attention-pair: our variant (default flash_wgmma)")
    ap.add_argument("--reference", default="sdpa_cudnn", help="attention-pair: the reference variant (default sdpa_cudnn)")
    ap.add_argument("--theirs", default="torch", help="nccl-torch: the variant beside `nccl` (default torch)")
    ap.add_argument("--pytorch-ddp", action="append", default=[], metavar="P.json",
                    help="ddp: a reports/pytorch_ddp.py report (repeat for each torchrun job)")
    args = ap.parse_args(argv[1:])
    report = load(args.report)
    extra = load(args.pytorch) if args.pytorch else None
    if args.kind == "attention":
        print(attention(report, extra))
    elif args.kind == "attention-pair":
        print(attention_pair(report, extra, args.ours, args.reference))
    elif args.kind == "attention-deterministic":
        print(attention_deterministic([report] + ([extra] if extra else [])), end="")
    elif args.kind == "attention-sdpa":
        if extra is None:
            ap.error("attention-sdpa needs the PyTorch report (reports/pytorch_attention.py)")
        print(attention_sdpa(report, extra))
    elif args.kind == "sdpa-agreement":
        if extra is None:
            ap.error("sdpa-agreement needs the script's report (reports/pytorch_attention.py --as-variants)")
        print(sdpa_agreement(report, extra), end="")
    elif args.kind == "nccl":
        if extra is None:
            ap.error("nccl needs torch.distributed's figures (reports/torch_allreduce.py --out)")
        print(torch_allreduce.compare_table(report, extra), end="")
    elif args.kind == "breakdown":
        if extra is None:
            ap.error("breakdown needs the PyTorch report (reports/pytorch_transformer.py --kernel-steps N)")
        print(breakdown(report, extra))
    elif args.kind == "ddp":
        print(ddp(report, [load(f) for f in args.pytorch_ddp]))
    elif args.kind == "transformer":
        lines = [json.loads(l) for l in open(args.metrics)] if args.metrics else None
        print(transformer(report, extra, lines))
    else:
        print({"gemm": gemm, "gemm-zoo": gemm_zoo, "nccl-torch": lambda r: nccl_torch(r, theirs=args.theirs), "memory": memory, "stream": stream, "attention-summary": attention_summary,
               "attention-fp8": attention_fp8}[args.kind](report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
