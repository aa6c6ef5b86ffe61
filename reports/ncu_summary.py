#!/usr/bin/env python3
"""Nsight Compute's raw CSV pages, side by side: one column per file, the counters that
name a kernel's limiter (issue 30's "ncu counters that show the limiter").

  ncu -k regex:KERNEL -c 2 --section WarpStateStats --metrics LIST --csv --page raw \\
      --print-units base harness run ... > ours.csv
  python3 reports/ncu_summary.py ours.csv theirs.csv [--kernel REGEX] [--markdown]

A file may hold the profiled program's own output around ncu's table (as `ncu ... harness run`
prints both to stdout): the table starts at the line that begins with "ID". Of its kernel
rows, the last one whose name matches --kernel (default: any) is shown, since the first
launches of a process can include a warm-up. Rows: time and SM clock, launch shape,
instructions, tensor-pipe and issue activity, L2 traffic (bytes = bytes per second x time),
shared-memory bank conflicts, local memory, and the five largest warp-stall reasons per
issued instruction. A counter the file lacks prints as "-". Times, clocks and byte rates are
read in the unit of ncu's units row (base units with --print-units base; ms, GHz, TB/s and
the like otherwise). The metric list of
scripts/gpu-round.sh's attention-d64-ncu stage (NCU_METRICS there) gives every row.
"""
import argparse
import csv
import io
import os
import re
import sys

TIME = "gpu__time_duration.sum"
CLOCK = "sm__cycles_elapsed.avg.per_second"
L2_RATE = "lts__t_bytes.sum.per_second"
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")

# (label, metric, format) of the rows after the time, clock and launch.
ROWS = [
    ("warp instructions", "smsp__inst_executed.sum", "M"),
    ("tensor pipe active", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "%"),
    ("issue active", "smsp__issue_active.avg.pct_of_peak_sustained_active", "%"),
    ("XU (MUFU) pipe", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "%"),
    ("FMA pipe", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%"),
    ("L2 throughput, % of peak", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
    ("shared bank conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "K"),
    ("shared stores (warp)", "smsp__inst_executed_op_shared_st.sum", "M"),
    ("local loads / stores (warp)", ("smsp__inst_executed_op_local_ld.sum", "smsp__inst_executed_op_local_st.sum"), "pair"),
]


def number(text):
    """ncu's numbers carry thousands separators; None for an empty or non-numeric cell."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


# ncu's unit names -> factor to the base unit (seconds for time; a metric's unit is also its
# rate's numerator: "Tbyte/second", "byte/s").
UNIT_PREFIX = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def unit_factor(unit, base):
    """Factor that turns a value in `unit` into `base` units: ("msecond", "second") -> 1e-3,
    ("ns", "second") -> 1e-9, ("Ghz", "hz") -> 1e9, ("Tbyte/second", "byte") -> 1e12. An empty
    or unknown unit: 1 (taken as base), with base "second" taking a bare number as ns, ncu's default."""
    u = unit.strip()
    if base == "second":
        m = re.fullmatch(r"([num]?)s(?:econd)?", u)
        if not m:
            return 1e-9 if not u else 1.0
        return UNIT_PREFIX[m.group(1)]
    m = re.fullmatch(r"([kKMGT]?)" + re.escape(base) + r"(?:/s(?:econd)?)?", u, re.I)
    return UNIT_PREFIX[m.group(1)] if m else 1.0


def short_name(name):
    """The kernel's name without `void`, the anonymous namespace and the parameter list."""
    name = re.sub(r"^void\s+", "", name)
    name = re.sub(r"(\(anonymous namespace\)|<?unnamed>)::", "", name)
    depth, end = 0, len(name)
    for i, ch in enumerate(name):  # the parameter list: the first "(" outside template brackets
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            end = i
            break
    return name[:end]


def read_kernel(path, kernel=None):
    """The chosen kernel row of one file as {metric: cell}, with the units row under the key
    "__units__"; raises ValueError with the reason."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError(f'{path}: no ncu CSV table (a line starting with "ID"); was ncu run with --csv --page raw?')
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    # The line after the header holds the units; kernel rows have every column.
    units = dict(zip(header, rows[1])) if len(rows) > 1 else {}
    data = [dict(zip(header, r)) for r in rows[2:] if len(r) == len(header)]
    if kernel:
        pattern = re.compile(kernel)
        data = [r for r in data if pattern.search(r.get("Kernel Name", ""))]
    if not data:
        raise ValueError(f"{path}: no kernel row" + (f" whose name matches {kernel!r}" if kernel else ""))
    row = data[-1]
    row["__units__"] = units
    return row


def column(row):
    """The printed cells of one kernel, in the order of labels()."""
    def fmt(metric, how):
        if how == "pair":
            a, b = (number(row.get(m)) for m in metric)
            return "-" if a is None or b is None else f"{a / 1e6:.2f} M / {b / 1e6:.2f} M"
        v = number(row.get(metric))
        if v is None:
            return "-"
        if how == "%":
            return f"{v:.1f}%"
        scale = {"M": 1e6, "K": 1e3}[how]
        return f"{v / scale:.0f} {how}" if v >= scale else f"{v:.0f}"

    units = row.get("__units__", {})

    def scaled(metric, base):  # in base units (seconds, hz, byte/s)
        v = number(row.get(metric))
        return None if v is None else v * unit_factor(units.get(metric, ""), base)

    t, clock, rate = scaled(TIME, "second"), scaled(CLOCK, "hz"), scaled(L2_RATE, "byte")
    cluster = number(row.get("launch__cluster_dim_x"))
    cells = [
        short_name(row.get("Kernel Name", "-")),
        "-" if t is None else f"{t * 1e3:.3f} ms",
        "-" if clock is None else f"{clock / 1e9:.2f} GHz",
        f"{row.get('launch__grid_size', '-')} x {row.get('launch__block_size', '-')}, "
        f"{row.get('launch__registers_per_thread', '-')} registers" +
        (f", clusters of {cluster:.0f}" if cluster and cluster > 1 else ""),
    ]
    cells += [fmt(metric, how) for _, metric, how in ROWS]
    cells.append("-" if rate is None else f"{rate / 1e12:.2f} TB/s")
    cells.append("-" if rate is None or t is None else f"{rate * t / 1e9:.2f} GB")
    stalls = sorted(((number(v) or 0.0, m.group(1)) for k, v in row.items() if k != "__units__" and (m := STALL.match(k))), reverse=True)
    top = [f"{name} {v:.2f}" for v, name in stalls if name != "selected"][:5]
    cells.append(", ".join(top) if top else "-")
    return cells


def labels():
    return (["kernel", "time", "SM clock", "CTAs x threads, registers"] + [label for label, _, _ in ROWS] +
            ["L2 bytes / s", "L2 bytes", "stalls per issue (top 5)"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("files", nargs="+", help="ncu --csv --page raw outputs, one column each")
    ap.add_argument("--kernel", help="regular expression on the kernel name (default: the last kernel row)")
    ap.add_argument("--markdown", action="store_true", help="a markdown table instead of aligned text")
    args = ap.parse_args(argv)
    names, columns = [], []
    for path in args.files:
        try:
            columns.append(column(read_kernel(path, args.kernel)))
        except (OSError, ValueError) as e:
            print(f"ncu_summary: {e}", file=sys.stderr)
            return 2
        names.append(os.path.splitext(os.path.basename(path))[0])
    rows = list(zip(labels(), *columns))
    if args.markdown:
        print("| | " + " | ".join(names) + " |")
        print("|---" * (len(names) + 1) + "|")
        for r in rows:
            print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    else:
        widths = [max(len(c) for c in col) for col in zip(("",) + tuple(names), *rows)]
        for r in [("",) + tuple(names)] + rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
