#!/usr/bin/env python3
"""Where a kernel's warps wait, by SASS opcode: Nsight Compute's source page (the SourceCounters
section's warp-state samples per instruction) summed per opcode, with the largest stall
reasons of each ("selected", an issue rather than a stall, left out), the warp instructions
each opcode executed (where the page has "Instructions Executed": two kernels of the same work
compared by instruction mix), and the hottest instructions.

  ncu -k regex:KERNEL -c 1 --section SourceCounters --import-source no -o prof harness run ...
  ncu -i prof.ncu-rep --page source --csv --print-source sass > source.csv
  python3 reports/ncu_source.py source.csv [--top N] [--markdown]

Samples are warp-state samples: every warp of the kernel is sampled, the producer warp of a
warp-specialized kernel included. An opcode is the mnemonic without modifiers and predicate
(`@!P0 BRA ...` counts as BRA, `MUFU.EX2` as MUFU, `WARPGROUP.DEPBAR.LE` as WARPGROUP). The
stall reasons are the page's stall_* columns (all samples; the "(Not Issued)" ones are left
out). docs/PERFORMANCE.md ("Exponentials on the FMA pipe at d = 64") reads one such page.
"""
import argparse
import collections
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_summary  # noqa: E402

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"  # warp-level, summed over the launch


def number(text):
    """A sample count (ncu_summary.number; an empty or non-numeric cell counts 0)."""
    return ncu_summary.number(text) or 0.0


def opcode(source):
    words = source.split()
    if words and words[0].startswith("@"):  # predicate
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def read_page(path):
    """(kernel name, header, instruction rows) of an ncu --page source --csv file."""
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.reader(f))
    kernel = next((r[1] for r in rows if len(r) > 1 and r[0] == "Kernel Name"), "?")
    start = next((i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"]), None)
    if start is None:
        raise SystemExit(f"ncu_source.py: {path}: no 'Address,Source' header (is it ncu --page source --csv?)")
    header = rows[start]
    if SAMPLES not in header:
        raise SystemExit(f"ncu_source.py: {path}: no '{SAMPLES}' column (profile with --section SourceCounters)")
    body = [r for r in rows[start + 1:] if len(r) == len(header)]
    return ncu_summary.short_name(kernel), header, body


def summarize(header, body, top):
    """(total samples, per-opcode rows, hottest-instruction rows); each row a list of cells."""
    src, smp = header.index("Source"), header.index(SAMPLES)
    ex = header.index(EXECUTED) if EXECUTED in header else None
    stalls = [i for i, c in enumerate(header)
              if c.startswith("stall_") and "(Not Issued)" not in c and c != "stall_selected"]
    total = sum(number(r[smp]) for r in body)
    share = lambda v: f"{100 * v / total:.1f}%" if total else "-"  # noqa: E731
    by_op = collections.defaultdict(lambda: [0.0, 0, 0.0, collections.Counter()])
    for r in body:
        entry = by_op[opcode(r[src])]
        entry[0] += number(r[smp])
        entry[1] += 1
        entry[2] += number(r[ex]) if ex is not None else 0.0
        for i in stalls:
            entry[3][header[i][len("stall_"):]] += number(r[i])
    ops = []
    for op, (samples, count, executed, why) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        if samples == 0 and executed == 0:
            continue
        reasons = ", ".join(f"{k} {share(v)}" for k, v in why.most_common(2) if v > 0)
        ops.append([op, share(samples), str(count)] + ([f"{executed / 1e6:.1f} M"] if ex is not None else []) + [reasons])
    hot = []
    for r in sorted(body, key=lambda r: -number(r[smp]))[:top]:
        why = sorted(((number(r[i]), header[i][len("stall_"):]) for i in stalls), reverse=True)[:2]
        hot.append([r[0], " ".join(r[src].split()), share(number(r[smp])),
                    ", ".join(f"{k} {share(v)}" for v, k in why if v > 0)])
    executed = sum(number(r[ex]) for r in body) if ex is not None else None
    return total, ops, hot, executed


def table(head, rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip() for r in [head] + rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("file", help="ncu -i REPORT --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=10, help="hottest instructions to list (default 10)")
    ap.add_argument("--markdown", action="store_true", help="markdown tables instead of aligned text")
    args = ap.parse_args(argv)
    kernel, header, body = read_page(args.file)
    total, ops, hot, executed = summarize(header, body, args.top)
    ran = f", {executed / 1e6:.1f} M warp instructions executed" if executed is not None else ""
    print(f"{kernel}: {total:.0f} warp samples over {len(body)} instructions{ran}")
    print()
    head = ["opcode", "samples", "instructions"] + (["executed (warp)"] if executed is not None else [])
    print(table(head + ["largest stalls (share of all samples)"], ops, args.markdown))
    if hot:
        print()
        print(table(["address", "instruction", "samples", "largest stalls"], hot, args.markdown))


if __name__ == "__main__":
    main()
