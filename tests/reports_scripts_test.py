#!/usr/bin/env python3
"""Every reports/*.py script on a machine without a GPU and without PyTorch (ctest
`reports_scripts_py`, label cpu; issue 36).

For each script: `--help` exits 0 with its usage, and importing it as a module works, both
with `import torch` made to fail (a blocking import hook, so the tests mean the same where
PyTorch is installed); every `from <reports module> import NAME` and `<reports module>.NAME`
in the scripts names something that module defines (the check that catches a script
importing a name its sibling no longer exports, as pytorch_ddp.py did with
pytorch_transformer's `Model`); then each script runs on a tiny configuration that needs
no GPU: the table scripts on small reports written here, the PyTorch scripts' argument
checks, parsers, result entries and their "PyTorch is not installed" exit. The GPU
measurements themselves run on the device machine (scripts/gpu-round.sh).

pytorch_transformer.py's compiled modes run in a child process under --compile-timeout:
here fake children (this file's FAKE_CHILD: the script's own child_main with a fake torch
and a runner that sleeps, fails, crashes or returns measurements) show that a compilation
past a tiny limit is a skipped result with the reason, its process group (a stand-in for
inductor's compile workers included) ended. MFU: harness_report's dense bf16 peak (the
figures of models_cpu_test) and the transformer table's MFU and PyTorch-best reference.
"""
import ast
import contextlib
import csv
import glob
import importlib
import io
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest
import warnings
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORTS = os.path.join(ROOT, "reports")
SCRIPTS = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPORTS, "*.py")))
sys.path.insert(0, REPORTS)

# Runs a script (argv[1]) as __main__, or imports it (argv[1] = "--import NAME"), with every
# import of torch failing as on a machine without PyTorch.
NO_TORCH = r"""
import importlib, runpy, sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch' (blocked by reports_scripts_test)", name=name)
        return None
sys.meta_path.insert(0, NoTorch())
if sys.argv[1] == "--import":
    sys.path.insert(0, sys.argv[2])
    importlib.import_module(sys.argv[3])
    print("imported", sys.argv[3])
else:
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


def script(name):
    return os.path.join(REPORTS, name + ".py")


def no_torch(*argv, cwd=None):
    """Runs `python3 -c NO_TORCH argv...`: (returncode, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-c", NO_TORCH, *argv], capture_output=True, text=True, cwd=cwd or ROOT,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def harness_exe():
    exe = os.environ.get("HARNESS_EXE", "")
    return exe if exe and os.access(exe, os.X_OK) else ""


def load(path):
    with open(path) as f:
        return json.load(f)


def write_json(d, name, obj):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


ENV = {"gpu": {"name": "Test GPU"}, "cuda_driver": "13.0", "cuda_runtime": "13.0", "date": "2026-11-26T00:00:00Z",
       "git_commit": "abc1234", "command_line": "harness run test.yaml", "host": "h",
       "device_peaks": {"dram_gbytes_per_s": 1000.0}}


def result(problem, variant, params, median_s=None, status="passed", reason="", **more):
    r = {"name": f"{problem}/{variant}/" + "/".join(f"{k}:{v}" for k, v in params.items()), "problem": problem,
         "variant": variant, "params": params, "status": status, "reason": reason, "backend": "cuda",
         "memory": {"io_device_bytes": 0, "workspace_peak_bytes": 2 << 20}}
    if median_s is not None:
        r.update(samples_s=[median_s] * 3, stats={"median_s": median_s},
                 rates={"gflops": 1e-9 / median_s, "gbytes_per_s": 500.0})
    else:
        r.update(samples_s=[], stats=None, rates=None)
    r.update(more)
    return r


def attention_params(dtype, causal=False):
    return {"batch": 4, "heads": 16, "kv_heads": 0, "seq_len": 2048, "head_dim": 128, "causal": causal,
            "scale": 0, "dtype": dtype}


class EveryScript(unittest.TestCase):
    def test_every_script_has_a_tiny_run_here(self):
        # A new reports/*.py must get its tiny configuration in this file (class Tiny<Name>).
        tested = {n[4:] for n in globals() if n.startswith("Tiny")}
        want = {"".join(w.capitalize() for w in s.split("_")) for s in SCRIPTS}
        self.assertEqual(sorted(want - tested), [])
        self.assertGreaterEqual(len(SCRIPTS), 9)

    def test_help_exits_0_with_the_usage_without_torch(self):
        for name in SCRIPTS:
            with self.subTest(script=name):
                rc, out, err = no_torch(script(name), "--help")
                self.assertEqual(rc, 0, f"{name} --help: {err[-2000:]}")
                self.assertTrue(out.startswith("usage: "), f"{name} --help printed: {out[:200]!r}")
                self.assertIn(name + ".py", out.splitlines()[0])

    def test_import_as_a_module_without_torch(self):
        for name in SCRIPTS:
            with self.subTest(script=name):
                rc, out, err = no_torch("--import", REPORTS, name)
                self.assertEqual(rc, 0, f"import {name}: {err[-2000:]}")
                self.assertEqual(out.strip(), f"imported {name}")

    def test_names_taken_from_sibling_modules_exist(self):
        # `from pytorch_transformer import Model` (at the top or inside a function) and
        # `harness_report.stats`: each name must be defined by the sibling module.
        checked = 0
        for name in SCRIPTS:
            with open(script(name)) as f:
                tree = ast.parse(f.read(), script(name))
            aliases = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        if a.name in SCRIPTS:
                            aliases[a.asname or a.name] = a.name
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module in SCRIPTS and node.level == 0:
                    mod = importlib.import_module(node.module)
                    for a in node.names:
                        with self.subTest(script=name, line=node.lineno, name=a.name):
                            self.assertTrue(hasattr(mod, a.name),
                                            f"{name}.py:{node.lineno}: {node.module} has no '{a.name}'")
                            checked += 1
                elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id in aliases):
                    mod = importlib.import_module(aliases[node.value.id])
                    with self.subTest(script=name, line=node.lineno, name=node.attr):
                        self.assertTrue(hasattr(mod, node.attr),
                                        f"{name}.py:{node.lineno}: {aliases[node.value.id]} has no '{node.attr}'")
                        checked += 1
        self.assertGreater(checked, 10)

    def test_the_check_sees_a_missing_name(self):
        # The check above on the line pytorch_ddp.py had before the fix.
        tree = ast.parse("from pytorch_transformer import DEFAULTS, Model\n")
        node = tree.body[0]
        mod = importlib.import_module(node.module)
        self.assertEqual([a.name for a in node.names if not hasattr(mod, a.name)], ["Model"])
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "broken_script.py"), "w") as f:
                f.write("import sys\nsys.path.insert(0, %r)\nfrom pytorch_transformer import Model\n" % REPORTS)
            rc, _, err = no_torch("--import", d, "broken_script")
        self.assertNotEqual(rc, 0)
        self.assertIn("cannot import name 'Model' from 'pytorch_transformer'", err)


class TinyHarnessReport(unittest.TestCase):
    def test_normalize_fills_statistics_and_counts(self):
        with tempfile.TemporaryDirectory() as d:
            rep = {"schema": "harness-report", "schema_version": 1, "environment": {"gpu": {"name": "x"}},
                   "results": [result("attention", "sdpa_fp32", attention_params("f32"), 1e-3,
                                       samples_s=[1e-3, 2e-3, 3e-3]),
                               result("attention", "sdpa_cudnn_bf16", attention_params("bf16"), status="skipped",
                                      reason="RuntimeError: No available kernel")]}
            path = write_json(d, "r.json", rep)
            rc, out, err = no_torch(script("harness_report"), "--normalize", path)
            self.assertEqual(rc, 0, err)
            got = load(path)
        self.assertEqual(got["summary"]["passed"], 1)
        self.assertEqual(got["summary"]["skipped"], 1)
        self.assertAlmostEqual(got["results"][0]["stats"]["median_s"], 2e-3)
        self.assertEqual(got["results"][0]["stats"]["count"], 3)
        self.assertEqual(got["environment"]["gpu"]["compute_capability"], "unknown")

    def test_no_arguments_is_a_usage_error(self):
        rc, _, err = no_torch(script("harness_report"))
        self.assertEqual(rc, 2)
        self.assertIn("--normalize", err)

    def test_dense_bf16_peak_is_the_engines_formula(self):
        # The figures of models_cpu_test DenseBf16PeakAndModelFlopsUtilization, word for word.
        hr = importlib.import_module("harness_report")
        tflops, source = hr.dense_bf16_peak(9, 0, 132, 1980000, "NVIDIA H200")
        self.assertAlmostEqual(tflops, 132 * 4096 * 1.98e9 * 1e-12)
        self.assertEqual(source, "sm_90 dense bf16 tensor cores: 132 SMs x 4096 FLOP/clk x 1980 MHz "
                                 "(cudaDevAttrClockRate, the maximum SM clock)")
        self.assertAlmostEqual(hr.dense_bf16_peak(9, 0, 132, 1830000)[0], 989.4, places=0)  # the datasheet's
        for cc, name in (((8, 0), "NVIDIA A100-SXM4-80GB"), ((8, 9), "NVIDIA L4"), ((10, 0), "NVIDIA B200"),
                         ((9, 0), "NVIDIA H20")):
            t, why = hr.dense_bf16_peak(*cc, 100, 1500000, name)
            self.assertIsNone(t, name)
            self.assertTrue(why.startswith("peak unknown: "), why)
        self.assertIn("sm_80 is not in the table", hr.dense_bf16_peak(8, 0, 108, 1410000)[1])
        self.assertIsNone(hr.dense_bf16_peak(9, 0, 132, 0)[0])
        self.assertAlmostEqual(hr.mfu(4.14e12, 0.0189, tflops), 4.14e12 / 0.0189 / (tflops * 1e12))
        self.assertIsNone(hr.mfu(4.14e12, 0.0189, None))
        self.assertIsNone(hr.mfu(4.14e12, 0, tflops))
        # A report's environment as `harness run` writes it; one without a clock: unknown.
        env = {"gpu": {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "sm_clock_max_mhz": 1980}}
        self.assertEqual(hr.peak_of_environment(env), (tflops, source))
        self.assertIsNone(hr.peak_of_environment({"gpu": {"compute_capability": "9.0", "sm_count": 132}})[0])
        self.assertIsNone(hr.peak_of_environment(ENV)[0])
        x = hr.mfu_fields(4.14e12, 18.9, {"peak_tflops": tflops, "peak_source": source})
        self.assertAlmostEqual(x["mfu"], 4.14e12 / 0.0189 / (tflops * 1e12))
        self.assertEqual((x["model_flops_per_step"], x["peak_source"]), (4.14e12, source))
        self.assertIsNone(hr.mfu_fields(4.14e12, 18.9, None)["mfu"])


class TinyMergeRanks(unittest.TestCase):
    def test_two_ranks_become_one_collective_result(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for rank, med in ((0, 1e-3), (1, 3e-3)):
                r = result("nccl_all_reduce", "nccl", {"bytes": 1 << 20, "dtype": "f32"}, med,
                           extra={"bytes": 1 << 20, "bus_factor": 1.0})
                paths.append(write_json(d, f"nccl.rank{rank}.json", {"environment": dict(ENV), "results": [r]}))
            out = os.path.join(d, "merged.json")
            rc, text, err = no_torch(script("merge_ranks"), "--out", out, *reversed(paths))
            self.assertEqual(rc, 0, err)
            merged = load(out)
        self.assertIn("1 results from 2 ranks", text)
        x = merged["results"][0]["extra"]
        self.assertEqual([e["rank"] for e in x["ranks"]], [0, 1])
        self.assertAlmostEqual(x["time_s"], 2e-3)
        self.assertAlmostEqual(x["busbw_gbps"], (1 << 20) / 2e-3 / 1e9)
        self.assertEqual(len(merged["environment"]["devices"]), 2)

    def test_batches_are_averaged_batch_by_batch(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for rank, samples in ((0, [1e-3, 3e-3, 2e-3, 2e-3]), (1, [3e-3, 1e-3, 2e-3, 4e-3])):
                r = result("nccl_all_reduce", "nccl", {"bytes": 1 << 20, "dtype": "f32"}, sorted(samples)[2],
                           extra={"bytes": 1 << 20, "bus_factor": 1.0})
                r.update(samples_s=samples)
                r["stats"]["launches_per_sample"] = 98
                paths.append(write_json(d, f"nccl.rank{rank}.json", {"environment": dict(ENV), "results": [r]}))
            out = os.path.join(d, "merged.json")
            rc, _, err = no_torch(script("merge_ranks"), "--out", out, *paths)
            self.assertEqual(rc, 0, err)
            merged = load(out)["results"][0]
        self.assertEqual(merged["samples_s"], [2e-3, 2e-3, 2e-3, 3e-3])
        self.assertAlmostEqual(merged["stats"]["median_s"], 2e-3)
        x = merged["extra"]
        self.assertAlmostEqual(x["time_s"], 2e-3)
        self.assertAlmostEqual(x["time_max_s"], 3e-3)
        self.assertEqual((x["ops_per_sample"], x["samples"]), (98, 4))
        self.assertAlmostEqual(x["busbw_slowest_gbps"], (1 << 20) / 3e-3 / 1e9)


class TinyNvmlClock(unittest.TestCase):
    def setUp(self):
        self.nc = importlib.import_module("nvml_clock")

    def test_without_nvml_nothing_fails_and_the_reason_is_kept(self):
        s = self.nc.GpuSensors(library="libnvidia-ml-does-not-exist.so.1")
        self.assertFalse(s.ok)
        self.assertIn("NVML not available", s.why)
        self.assertIsNone(s.sm_mhz())
        self.assertIsNone(s.power_w())
        rc, out, err = no_torch(script("nvml_clock"))
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("SM clock ") or out.startswith("no clock: "), out)

    def test_clock_stats_are_the_harness_clocks_object(self):
        c = self.nc.clock_stats([1980, 1500, None, 1400], 1980)
        self.assertEqual(c["mhz"], [1980.0, 1500.0, 1400.0])
        self.assertEqual((c["min_mhz"], c["median_mhz"], c["max_mhz"]), (1400.0, 1500.0, 1980.0))
        self.assertEqual(c["throttled_batches"], 1)  # 1400 < 0.75 x 1980
        self.assertTrue(c["throttled"])
        self.assertIsNone(self.nc.clock_stats([None], 1980))


class TinyNcuSource(unittest.TestCase):
    """A real ncu source page of session 15 (H100, the d = 64 forward), cut to 135 of its 2752
    instructions (the first 30 and every one with 250 samples or more)."""
    PAGE = os.path.join(ROOT, "tests", "data", "ncu", "flash-d64-source.csv")

    def test_samples_by_opcode_and_the_hottest_instructions(self):
        rc, out, err = no_torch(script("ncu_source"), self.PAGE, "--top", "2", "--markdown")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("kernels::attention::flash_hopper_forward_kernel<__nv_bfloat16, (int)64"),
                        lines[0])
        self.assertTrue(lines[0].endswith(": 75763 warp samples over 135 instructions, 69.8 M warp instructions executed"),
                        lines[0])
        # Largest first; predicates and modifiers stripped; "selected" is not a stall; the warp
        # instructions each opcode executed (MUFU: 44,728,320 over its 65 rows of the page; all
        # 135 rows: 69,794,176, opcodes never sampled included).
        self.assertEqual(lines[2], "| opcode | samples | instructions | executed (warp) | largest stalls (share of all samples) |")
        self.assertEqual(lines[4], "| MUFU | 38.8% | 65 | 44.7 M | wait 16.4%, mio 13.8% |")
        self.assertEqual(lines[5], "| WARPGROUP | 20.3% | 3 | 1.4 M | barrier 15.1%, not_selected 2.6% |")
        self.assertIn("| BRA | 17.4% | 6 | 2.2 M | long_sb 15.9%, wait 0.8% |", lines)
        self.assertNotIn("selected ", out.replace("not_selected", ""))
        hot = [line for line in lines if line.startswith("| 0x")]
        self.assertEqual(hot, ["| 0x7fb9977b66b0 | @!P0 BRA 0x7fb9977b69c0 | 11.8% | long_sb 11.8%, wait 0.0% |",
                               "| 0x7fb9977b24a0 | WARPGROUP.DEPBAR.LE gsb0, 0x0 | 10.1% | barrier 8.5%, "
                               "not_selected 1.4% |"])

    def test_a_page_without_executed_counts_leaves_that_column_out(self):
        with open(self.PAGE, newline="", errors="replace") as f:
            rows = list(csv.reader(f))
        start = next(i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"])
        drop = rows[start].index("Instructions Executed")
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "source.csv")
            with open(page, "w", newline="") as f:
                csv.writer(f).writerows(r[:drop] + r[drop + 1:] if i >= start else r for i, r in enumerate(rows))
            rc, out, err = no_torch(script("ncu_source"), page, "--markdown")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[2], "| opcode | samples | instructions | largest stalls (share of all samples) |")
        self.assertEqual(lines[4], "| MUFU | 38.8% | 65 | wait 16.4%, mio 13.8% |")
        self.assertTrue(lines[0].endswith(": 75763 warp samples over 135 instructions"), lines[0])

    def test_a_raw_page_is_refused_with_the_reason(self):
        raw = os.path.join(ROOT, "tests", "data", "ncu", "flash-d64-default.csv")
        rc, out, err = no_torch(script("ncu_source"), raw)
        self.assertNotEqual(rc, 0)
        self.assertIn("no 'Address,Source' header (is it ncu --page source --csv?)", err)


class TinyNcuSummary(unittest.TestCase):
    """Two real ncu outputs of session 14 (H100, d = 64 forward, harness output above the table)."""
    DATA = os.path.join(ROOT, "tests", "data", "ncu")

    def run_summary(self, *args):
        return no_torch(script("ncu_summary"), *args)

    def test_two_kernels_side_by_side_with_the_limiter_counters(self):
        files = [os.path.join(self.DATA, f) for f in ("flash-d64-default.csv", "flash-d64-cluster.csv")]
        rc, out, err = self.run_summary(*files, "--markdown")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[0], "| | flash-d64-default | flash-d64-cluster |")
        rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}
        self.assertIn("| 1.160 ms | 1.152 ms |", rows["time"])
        self.assertIn("| 51.5% | 51.6% |", rows["tensor pipe active"])
        self.assertIn("| 474 M | 487 M |", rows["warp instructions"])
        # L2 bytes = bytes per second x time: 4.62 TB/s x 1.160 ms and 2.78 TB/s x 1.152 ms.
        self.assertIn("| 5.35 GB | 3.20 GB |", rows["L2 bytes"])
        self.assertIn("| 132 x 384, 168 registers | 132 x 384, 168 registers, clusters of 2 |",
                      rows["CTAs x threads, registers"])
        # The names tell the instantiations apart (no "void", namespace or parameter list).
        self.assertIn("| flash_hopper_forward_kernel<__nv_bfloat16, 64, 2, 192, 0, 2, 1> |"
                      " flash_hopper_forward_kernel<__nv_bfloat16, 64, 2, 192, 0, 2, 2> |", rows["kernel"])
        # The largest stall first, "selected" (an issue, not a stall) left out.
        self.assertIn("| wait 1.28, long_scoreboard 0.60, barrier 0.56,", rows["stalls per issue (top 5)"])
        self.assertNotIn("selected 1.00", out)

    def edited_copy(self, d, edit):
        """The default fixture with its table's columns edited: edit(header, units, row) -> the three."""
        with open(os.path.join(self.DATA, "flash-d64-default.csv")) as f:
            lines = f.read().splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
        header, units, *rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
        header, units, row = edit(header, units, rows[-1])
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL).writerows([header, units, row])
        path = os.path.join(d, "edited.csv")
        with open(path, "w") as f:
            f.write("\n".join(lines[:start]) + "\n" + out.getvalue())
        return path

    def test_a_missing_counter_prints_a_dash_and_other_units_are_converted(self):
        def drop_l2_and_use_ms(header, units, row):
            keep = [i for i, h in enumerate(header) if h != "lts__t_bytes.sum.per_second"]
            header, units, row = ([x[i] for i in keep] for x in (header, units, row))
            t = header.index("gpu__time_duration.sum")
            units[t], row[t] = "msecond", "1.16"  # ncu's auto units: 1,160,032 ns
            c = header.index("sm__cycles_elapsed.avg.per_second")
            units[c], row[c] = "Ghz", "1.78"
            return header, units, row

        with tempfile.TemporaryDirectory() as d:
            rc, out, err = self.run_summary(self.edited_copy(d, drop_l2_and_use_ms), "--markdown")
        self.assertEqual(rc, 0, err)
        rows = {line.split(" | ")[0].lstrip("| "): line for line in out.splitlines()[2:]}
        self.assertIn("| 1.160 ms |", rows["time"])
        self.assertIn("| 1.78 GHz |", rows["SM clock"])
        self.assertIn("| - |", rows["L2 bytes / s"])
        self.assertIn("| - |", rows["L2 bytes"])
        self.assertIn("| 51.5% |", rows["tensor pipe active"])

    def test_a_file_without_the_table_or_the_kernel_is_an_error_that_says_why(self):
        with tempfile.TemporaryDirectory() as d:
            plain = os.path.join(d, "plain.csv")
            with open(plain, "w") as f:
                f.write("==PROF== Disconnected\n")
            rc, out, err = self.run_summary(plain)
            self.assertEqual(rc, 2)
            self.assertIn('no ncu CSV table (a line starting with "ID")', err)
        rc, out, err = self.run_summary(os.path.join(self.DATA, "flash-d64-default.csv"), "--kernel", "gemm_")
        self.assertEqual(rc, 2)
        self.assertIn("no kernel row whose name matches 'gemm_'", err)
        rc, out, err = self.run_summary(os.path.join(self.DATA, "flash-d64-default.csv"), "--kernel", "flash_hopper")
        self.assertEqual(rc, 0, err)
        self.assertIn("1.160 ms", out)


class TinyPatternsTables(unittest.TestCase):
    def test_vendor_relative_speed(self):
        with tempfile.TemporaryDirectory() as d:
            rs = [result("reduce", "cub", {"n": 1024}, 2e-6), result("reduce", "tree", {"n": 1024}, 1e-6)]
            path = write_json(d, "reduce.json", {"environment": ENV, "results": rs})
            rc, out, err = no_torch(script("patterns_tables"), path)
        self.assertEqual(rc, 0, err)
        self.assertIn("copy roof 1000 GB/s", out)
        self.assertIn("| n=1024 | cub | 2.0 us | 500 | 50% | 1.00x |", out)
        self.assertIn("| n=1024 | tree | 1.0 us | 500 | 50% | 2.00x |", out)


class TinyTables(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        bf, bfc, f32 = attention_params("bf16"), attention_params("bf16", causal=True), attention_params("f32")
        self.ours = write_json(d, "ours.json", {"environment": ENV, "results": [
            result("attention", "flash", bf, 0.5e-3), result("attention", "flash", bfc, 0.3e-3),
            result("attention", "flash", f32, 3.0e-3), result("attention", "flash_3xtf32", f32, 2.0e-3),
            result("gemm", "cublas", {"M": 64, "N": 64, "K": 64, "alpha": 1, "beta": 0}, 1e-5),
            result("gemm", "tiled", {"M": 64, "N": 64, "K": 64, "alpha": 1, "beta": 0}, 2e-5),
            result("stream", "copy", {"op": "copy", "n": 1 << 20}, 1e-5),
        ]})
        self.sdpa = write_json(d, "sdpa.json", {"environment": ENV, "results": [
            # cuDNN faster than flash at the non-causal shape; cuDNN skipped at the causal one
            result("attention", "sdpa_flash_bf16", bf, 0.45e-3), result("attention", "sdpa_cudnn_bf16", bf, 0.4e-3),
            result("attention", "sdpa_flash_bf16", bfc, 0.33e-3),
            result("attention", "sdpa_cudnn_bf16", bfc, status="skipped",
                   reason="RuntimeError: No available kernel. Aborting execution."),
            result("attention", "sdpa_fp32", f32, 3.0e-3),
            result("attention", "sdpa_flash_fp16", f32, 0.1e-3),  # another dtype: never f32's reference
        ]})

    def tearDown(self):
        self.dir.cleanup()

    def tables(self, *argv):
        rc, out, err = no_torch(script("tables"), *argv)
        self.assertEqual(rc, 0, err)
        return out

    def test_attention_sdpa_reference_is_the_faster_backend_at_the_dtype(self):
        out = self.tables("attention-sdpa", self.ours, self.sdpa)
        self.assertIn("| sdpa_fp32 | sdpa_flash_fp16 | sdpa_flash_bf16 | sdpa_cudnn_bf16 | reference |", out)
        rows = {tuple(c.strip() for c in l.split("|")[2:4]): l for l in out.splitlines() if l.startswith("| attention |")}
        shape = "batch=4 heads=16 kv_heads=0 seq_len=2048 head_dim=128 causal="
        self.assertIn("| 0.500 ms (flash) | - | - | 0.450 ms | 0.400 ms | sdpa_cudnn_bf16 | 0.80x |",
                      rows[(shape + "False", "bf16")])
        self.assertIn("| 0.300 ms (flash) | - | - | 0.330 ms | skipped: RuntimeError: No available kernel",
                      rows[(shape + "True", "bf16")])
        self.assertTrue(rows[(shape + "True", "bf16")].endswith("| sdpa_flash_bf16 | 1.10x |"))
        self.assertIn("| 2.000 ms (flash_3xtf32) | 3.000 ms | - | - | - | sdpa_fp32 | 1.50x |",
                      rows[(shape + "False", "f32")])

    def test_a_second_mode_of_one_variant_does_not_replace_the_first(self):
        # The backward's deterministic mode is a second result of flash at the same shape: it
        # is its own entry, and the faster default is what meets the reference.
        with tempfile.TemporaryDirectory() as d:
            fast, det = attention_params("bf16"), dict(attention_params("bf16"), deterministic=True)
            fast["deterministic"] = False
            ours = write_json(d, "ours.json", {"environment": ENV, "results": [
                result("attention_backward", "flash", fast, 0.5e-3), result("attention_backward", "flash", det, 0.6e-3)]})
            theirs = result("attention_backward", "sdpa_cudnn_bf16", attention_params("bf16"), 0.55e-3)
            theirs["clocks"] = {"median_mhz": 1650.4}  # both sides' clocks are shown where recorded
            sdpa = write_json(d, "sdpa.json", {"environment": ENV, "results": [theirs]})
            out = self.tables("attention-sdpa", ours, sdpa)
        self.assertIn("| 0.500 ms (flash) | 0.550 ms | sdpa_cudnn_bf16, 1650 MHz | 1.10x |", out)

    def test_attention_table_names_the_reference(self):
        out = self.tables("attention", self.ours, self.sdpa)
        self.assertIn("| 0.500 ms | 0.0 | 2.0 MiB | 0.400 ms (sdpa_cudnn_bf16) | 1.25 |", out)
        self.assertIn("| 3.000 ms | 0.0 | 2.0 MiB | 3.000 ms (sdpa_fp32) | 1.00 |", out)

    def test_other_kinds(self):
        self.assertIn("| M x N x K | cublas | tiled |\n|---|---|---|\n| 64x64x64 | 0 | 0 (50%) |", self.tables("gemm", self.ours))
        self.assertIn("| copy | 1048576 | copy |", self.tables("stream", self.ours))
        self.assertIn("Longest N that ran", self.tables("memory", self.ours))
        self.assertIn("| problem | B | H |", self.tables("attention-summary", self.ours))
        self.assertIn("| config | variant |", self.tables("transformer", self.ours))

    def test_attention_fp8_beside_bf16_per_shape(self):
        fp8, bf = attention_params("fp8_e4m3"), attention_params("bf16")
        fp8_odd = dict(attention_params("fp8_e4m3"), seq_len=13)
        report = write_json(self.dir.name, "fp8.json", {"environment": ENV, "results": [
            result("attention", "flash_wgmma", bf, 0.6e-3, clocks={"median_mhz": 1755.0}),
            result("attention", "flash_wgmma", fp8, 0.4e-3),
            result("attention", "flash_wgmma", fp8_odd, status="skipped", reason="flash_wgmma (fp8_e4m3): not sm_90"),
        ]})
        out = self.tables("attention-fp8", report)
        self.assertIn("| flash_wgmma | batch=4 heads=16 kv_heads=0 seq_len=2048 head_dim=128 causal=False | "
                      "0.0, 1755 MHz | 0.0 | 1.50x |", out)
        self.assertIn("seq_len=13 head_dim=128 causal=False | | skipped: flash_wgmma (fp8_e4m3): not sm_90 | |", out)

    def test_attention_pair_two_variants_of_one_report_per_shape_with_the_references_noise(self):
        long, short = attention_params("bf16"), dict(attention_params("bf16"), seq_len=1024)
        det = dict(attention_params("bf16"), deterministic=True)

        def run(ref_long, name, gz=False):
            results = [
                result("attention", "flash_wgmma", long, 1.0e-3, clocks={"median_mhz": 1600.0}),
                result("attention", "sdpa_cudnn", long, ref_long, clocks={"median_mhz": 1650.0}),
                result("attention", "flash_wgmma", short, 0.1e-3),
                result("attention", "sdpa_cudnn", short, 0.2e-3),
                result("attention_backward", "flash_wgmma", det, 2e-3),
                result("attention_backward", "sdpa_cudnn", det, status="skipped", reason="deterministic: not asked"),
            ]
            results[1]["stats"]["rel_noise"] = 0.02
            results[3]["stats"]["rel_noise"] = 0.40  # host-bound Python launches: not a claim
            path = write_json(self.dir.name, name, {"environment": ENV, "results": results})
            if gz:
                import gzip
                with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
                    g.write(f.read())
                path += ".gz"
            return path

        out = self.tables("attention-pair", run(1.1e-3, "one.json"))
        self.assertIn("| attention | batch=4 heads=16 kv_heads=0 seq_len=2048 head_dim=128 causal=False | bf16 | - | "
                      "1.000 ms, 1600 MHz / 1.100 ms, 1650 MHz | 1.100x | 2% |", out)
        self.assertIn("| 2.000x | 40% (noisy: not a claim) |", out)
        self.assertIn("| deterministic:true | sdpa_cudnn skipped: deterministic: not asked | - | - |", out)
        self.assertIn("geometric mean 1.100x over 1 shapes with a steady reference (minimum 1.100x at batch=4", out)
        # A second run (gzip-compressed, as reports/baselines stores them) as more columns.
        out = self.tables("attention-pair", run(1.1e-3, "one.json"), run(0.9e-3, "two.json", gz=True))
        self.assertIn("| run 2: flash_wgmma / sdpa_cudnn | run 2: ratio |", out)
        self.assertIn("| 1.100x | 2% | 1.000 ms, 1600 MHz / 0.900 ms, 1650 MHz | 0.900x | 2% |", out)
        self.assertIn("run 2: geometric mean 0.900x over 1 shapes", out)
        # Other variant names.
        out = self.tables("attention-pair", run(1.1e-3, "one.json"), "--ours", "sdpa_cudnn", "--reference", "flash_wgmma")
        self.assertIn("Ratio = flash_wgmma's median / sdpa_cudnn's", out)

    def test_attention_deterministic_cost_in_time_and_cycles_per_shape_and_run(self):
        def p(causal, det):
            return dict(attention_params("bf16", causal), deterministic=det)

        def run(det_s, name):
            results = [
                result("attention_backward", "flash_wgmma", p(False, False), 2.0e-3, clocks={"median_mhz": 1800.0}),
                result("attention_backward", "flash_wgmma", p(False, True), det_s, clocks={"median_mhz": 1900.0},
                       sensors={"sm_clock_mhz": {"median": 1980.0}}),  # NVML's clock first
                result("attention_backward", "flash_wgmma", p(True, False), 1.0e-3),
                result("attention_backward", "flash_wgmma", p(True, True), status="failed", reason="dQ differs"),
                result("attention_backward", "sdpa_cudnn", p(False, False), 2.5e-3),  # no deterministic pair
                result("attention", "flash_wgmma", attention_params("bf16"), 1.0e-3),  # no deterministic parameter
            ]
            return write_json(self.dir.name, name, {"environment": ENV, "results": results})

        out = self.tables("attention-deterministic", run(2.2e-3, "det1.json"))
        self.assertIn("| run | problem | variant | shape | dtype | default | deterministic | time | cycles | clocks apart |", out)
        # 2.2 / 2.0 = +10.0% in time; x 1980 / 1800 = +21.0% in cycles; clocks 10.0% apart.
        self.assertIn("| 1 | attention_backward | flash_wgmma | batch=4 heads=16 kv_heads=0 seq_len=2048 head_dim=128 "
                      "causal=False | bf16 | 2.000 ms, 1800 MHz | 2.200 ms, 1980 MHz | +10.0% | +21.0% | 10.0% |", out)
        self.assertIn("causal=True | bf16 | deterministic failed: dQ differs | | | | |", out)
        self.assertNotIn("sdpa_cudnn", out)
        self.assertEqual(out.count("| attention_backward |"), 2)
        # A second report: its rows as run 2.
        out = self.tables("attention-deterministic", run(2.2e-3, "det1.json"), run(3.0e-3, "det2.json"))
        self.assertIn("| 2 | attention_backward | flash_wgmma | batch=4 heads=16 kv_heads=0 seq_len=2048 head_dim=128 "
                      "causal=False | bf16 | 2.000 ms, 1800 MHz | 3.000 ms, 1980 MHz | +50.0% | +65.0% | 10.0% |", out)
        # Nothing to pair: said, not an empty table passed off as a result.
        lone = write_json(self.dir.name, "lone.json", {"environment": ENV, "results": [
            result("attention_backward", "flash_wgmma", p(False, False), 2.0e-3)]})
        self.assertIn("No attention result ran with both deterministic:false and deterministic:true.",
                      self.tables("attention-deterministic", lone))

    def test_gemm_zoo_ratio_per_shape_and_geometric_mean_per_dtype_from_a_report_or_a_journal(self):
        def gp(dtype, layout, M, N, K):
            return {"M": M, "N": N, "K": K, "alpha": 1, "beta": 0, "dtype": dtype, "layout": layout}
        a, b, c = gp("bf16", "nt", 8192, 512, 512), gp("bf16", "tn", 512, 512, 8192), gp("f16", "nn", 64, 64, 64)
        results = [
            result("gemm", "auto", a, 20e-6, case="layers", config="wgmma"),
            result("gemm", "cublas", a, 10e-6, case="layers"),
            result("gemm", "auto", b, 10e-6, case="layers", config="wgmma"),
            result("gemm", "cublas", b, 20e-6, case="layers"),
            result("gemm", "auto", c, status="skipped", reason="no kernel", case="ragged"),
            result("gemm", "cublas", c, 5e-6, case="ragged"),
        ]
        out = self.tables("gemm-zoo", write_json(self.dir.name, "zoo.json", {"environment": ENV, "results": results}))
        self.assertIn("GPU: Test GPU", out)
        self.assertIn("| layers | bf16 | nt | 8192x512x512 | 20.0 us (0.50) | 10.0 us | wgmma |", out)
        self.assertIn("| layers | bf16 | tn | 512x512x8192 | 10.0 us (2.00) | 20.0 us | wgmma |", out)
        self.assertIn("| ragged | f16 | nn | 64x64x64 | skipped | 5.0 us |  |", out)
        # geometric mean of 0.5 and 2.0 is 1; f16 has no row where both passed
        self.assertIn("| bf16 | 1.000 over 2 (min 0.50 at nt 8192x512x512) |", out)
        self.assertNotIn("\n| f16 |", out)
        # A journal of a run cut short: its result lines (the run line skipped), no environment.
        journal = os.path.join(self.dir.name, "zoo.json.journal.jsonl")
        with open(journal, "w") as f:
            f.write(json.dumps({"event": "run", "seed": 42}) + "\n")
            for r in results[:2]:
                f.write(json.dumps(r) + "\n")
        out = self.tables("gemm-zoo", journal)
        self.assertIn("of a run that did not finish: 2 results", out)
        self.assertIn("| bf16 | 0.500 over 1 (min 0.50 at nt 8192x512x512) |", out)

    def test_breakdown_by_kernel_class_ours_beside_pytorchs_fastest_mode(self):
        d = self.dir.name
        params = {"batch": 4, "seq_len": 2048, "src_len": 0, "tgt_len": 0}
        ours_k = [
            {"name": "kernels::attention::(anonymous namespace)::flash_tc_backward_kernel<__nv_bfloat16, 64, 4, 2, 32>",
             "calls": 18, "time_s": 5.0e-3},
            {"name": "kernels::attention::(anonymous namespace)::preprocess_kernel<__nv_bfloat16>", "calls": 18,
             "time_s": 0.2e-3},
            {"name": "kernels::gemm::(anonymous namespace)::gemm_wgmma_kernel<__nv_bfloat16, true, false>", "calls": 73,
             "time_s": 2.0e-3},
            {"name": "kernels::gemm::(anonymous namespace)::splitk_finish_kernel<__nv_bfloat16>", "calls": 72,
             "time_s": 0.2e-3},
            {"name": "kernels::nn::(anonymous namespace)::bias_act_forward_kernel<__nv_bfloat16, float, 8>", "calls": 73,
             "time_s": 1.0e-3},
            {"name": "kernels::nn::(anonymous namespace)::adam_multi_kernel<float>", "calls": 4, "time_s": 0.4e-3},
        ]
        pt_k = [
            {"name": "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26", "calls": 18, "time_s": 3.0e-3},
            {"name": "void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*)", "calls": 18,
             "time_s": 0.1e-3},
            {"name": "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", "calls": 42, "time_s": 0.8e-3},
            {"name": "triton_poi_fused_relu_threshold_backward_view_11", "calls": 12, "time_s": 0.2e-3},
            {"name": "triton_per_fused__to_copy_add_native_layer_norm_backward_view_12", "calls": 12, "time_s": 0.2e-3},
            {"name": "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<...>", "calls": 4,
             "time_s": 1.3e-3},
        ]
        ours = write_json(d, "bd-ours.json", {"environment": ENV, "results": [
            result("train_transformer", "ours_bf16", params, 0.0100, extra={"precision": "bf16"},
                   profile={"kernels": {"kernels": ours_k}})]})
        theirs = write_json(d, "bd-pt.json", {"environment": ENV, "results": [
            result("train_transformer", "pytorch_bf16_compile", params, 0.0200,
                   extra={"precision": "bf16", "compile_mode": "default", "kernels": pt_k}),
            result("train_transformer", "pytorch_bf16_compile_reduce_overhead", params, 0.0080,
                   extra={"precision": "bf16", "compile_mode": "reduce-overhead", "kernels": pt_k[:3]})]})
        out = self.tables("breakdown", ours, theirs)
        # The fastest PyTorch mode with a breakdown is the peer.
        self.assertIn("**B=4 N=2048 bf16: ours_bf16 vs pytorch_bf16_compile_reduce_overhead (PyTorch)**", out)
        self.assertIn("| attention backward | 36 | 5.200 | 36 | 3.100 | +2.100 |", out)
        self.assertIn("| GEMM | 145 | 2.200 | 42 | 0.800 | +1.400 |", out)
        self.assertIn("| optimizer | 4 | 0.400 | 0 | 0.000 | +0.400 |", out)
        self.assertIn("| **kernels, sum** | 258 | 8.800 | 78 | 3.900 | +4.900 |", out)
        self.assertIn("| step (median) and host gaps (step - kernels) | | 10.000 (1.200) | | 8.000 (4.100) | +2.000 |", out)
        self.assertIn("ours tn 2.000 ms (73), split-K finish 0.200 ms (72); PyTorch cuBLAS TNT 0.800 ms (42)", out)
        # Classes of the other Triton kernels.
        default = write_json(d, "bd-pt1.json", {"environment": ENV, "results": [
            result("train_transformer", "pytorch_bf16_compile", params, 0.0200,
                   extra={"precision": "bf16", "compile_mode": "default", "kernels": pt_k})]})
        out = self.tables("breakdown", ours, default)
        self.assertIn("| bias + activation | 73 | 1.000 | 12 | 0.200 | +0.800 |", out)
        self.assertIn("| LayerNorm (and fused add) | 0 | 0.000 | 12 | 0.200 | -0.200 |", out)
        self.assertIn("| optimizer | 4 | 0.400 | 4 | 1.300 | -0.900 |", out)
        rc, _, err = no_torch(script("tables"), "breakdown", ours)
        self.assertEqual(rc, 2)
        self.assertIn("breakdown needs the PyTorch report", err)

    def test_transformer_mfu_and_pytorchs_best_mode_as_the_reference(self):
        d = self.dir.name
        params = {"batch": 4, "seq_len": 2048, "src_len": 0, "tgt_len": 0}
        flops = 4.0e12
        peak = {"peak_tflops": 1000.0, "peak_source": "sm_90 dense bf16 tensor cores: test figures"}

        def tr(variant, med, precision, extra_params=None, status="passed", reason="", **x):
            extra = dict(precision=precision, tokens_per_s=8192 / med if med else 0,
                         phase_ms={"forward": 1.0, "backward": 2.0, "optimizer": 0.5}, loss_first=9.8,
                         loss_last=8.8, **x)
            return result("train_transformer", variant, dict(params, **(extra_params or {})), med, status, reason,
                          work={"flops": flops, "bytes": 0}, extra=extra)

        ours = write_json(d, "tr.json", {"environment": ENV, "results": [
            tr("ours_bf16", 0.020, "bf16", {"graph": True}, **peak),
            tr("cublas_flash", 0.050, "f32", {"graph": False, "fused": False}, **peak),
            tr("ours", 0.040, "f32"),  # no peak fields, none in ENV: unknown
        ]})
        theirs = write_json(d, "pt.json", {"environment": ENV, "results": [
            tr("pytorch_bf16", 0.030, "bf16", **peak),
            tr("pytorch_bf16_compile", 0.024, "bf16", compile_mode="default", compile_s=50.0, **peak),
            tr("pytorch_bf16_compile_reduce_overhead", 0.018, "bf16", compile_mode="reduce-overhead",
               compile_s=60.0, **peak),
            tr("pytorch_bf16_compile_max_autotune_no_cudagraphs", None, "bf16", status="skipped",
               reason="torch.compile (mode max-autotune-no-cudagraphs) did not compile within 600 s"),
            tr("pytorch_eager", 0.045, "fp32", **peak),
        ]})
        out = self.tables("transformer", ours, theirs)
        rows = {l.split("|")[2].strip(): l for l in out.splitlines() if l.startswith("| B=4 N=2048 |")}
        self.assertIn("| MFU |", out)
        self.assertIn("| vs PyTorch best |", out)
        # MFU = 4e12 FLOP / 20 ms / 1000 TFLOP/s = 20%; the reference of bf16 is the fastest
        # mode that finished (reduce-overhead, 18 ms), of fp32 the eager 45 ms.
        self.assertIn("| 20.00 | 409,600 | 20.0% | 1.00 / 2.00 / 0.50 |", rows["ours_bf16 graph"])
        self.assertTrue(rows["ours_bf16 graph"].endswith("| 0.90x |"), rows["ours_bf16 graph"])
        self.assertIn("| 8.0% |", rows["cublas_flash unfused"])
        self.assertTrue(rows["cublas_flash unfused"].endswith("| 0.90x |"))
        self.assertIn("| peak unknown |", rows["ours"])
        self.assertTrue(rows["ours"].endswith("| 1.12x |"))
        self.assertIn("| 18.00 (compile 60 s) | 455,111 | 22.2% |",
                      rows["pytorch_bf16_compile_reduce_overhead (PyTorch)"])
        self.assertTrue(rows["pytorch_bf16_compile_reduce_overhead (PyTorch)"].endswith("| reference |"))
        self.assertTrue(rows["pytorch_eager (PyTorch)"].endswith("| reference |"))
        self.assertTrue(rows["pytorch_bf16 (PyTorch)"].endswith("| 0.60x |"))
        self.assertIn("skipped: torch.compile (mode max-autotune-no-cudagraphs) did not compile",
                      rows["pytorch_bf16_compile_max_autotune_no_cudagraphs (PyTorch)"])
        self.assertIn("- B=4 N=2048 bf16: pytorch_bf16_compile_reduce_overhead (PyTorch) 18.00 ms", out)
        self.assertIn("- B=4 N=2048 fp32: pytorch_eager (PyTorch) 45.00 ms", out)
        self.assertIn("Peak: 1000.0 TFLOP/s (sm_90 dense bf16 tensor cores: test figures)", out)
        # An older report: the compile mode only in extra, the peak from the environment.
        old = write_json(d, "old.json", {"environment": dict(ENV, gpu={
            "name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "sm_clock_max_mhz": 1980}),
            "results": [tr("pytorch_bf16_compile", 0.018, "bf16", compile_mode="reduce-overhead")]})
        out = self.tables("transformer", ours, old)
        self.assertIn("| pytorch_bf16_compile [reduce-overhead] (PyTorch) | 18.00 | 455,111 | 20.8% |", out)

    def test_bad_arguments_exit_2(self):
        for argv, message in ((("attention-sdpa", "x.json"), "attention-sdpa needs the PyTorch report"),
                              (("speed", "x.json"), "invalid choice: 'speed'"), ((), "required")):
            with self.subTest(argv=argv):
                if argv and argv[0] == "attention-sdpa":
                    argv = (argv[0], self.ours)
                rc, _, err = no_torch(script("tables"), *argv)
                self.assertEqual(rc, 2)
                self.assertIn(message, err)

    def test_tables_ddp_ours_beside_pytorch_ddp(self):
        # tables.py ddp: ours' efficiency from the result, PyTorch's against its 1-GPU job of the
        # same precision, the exposed exchange where recorded, ours over PyTorch's fastest job.
        env = {"gpu": {"name": "Test GPU"}, "date": "2026-11-27", "git_commit": "abc", "command_line": "harness run ddp"}

        def ours(variant, prec, world, ms, tok, eff=None, reduce="f32", exch=None):
            x = {"precision": prec, "tokens_per_s": tok, "mfu": 0.2, "phase_ms": {"backward": 14.0}}
            if exch is not None:
                x["phase_ms"]["exchange_wait"] = exch
            if eff is not None:
                x["data_parallel"] = {"scaling_efficiency": eff}
            return result("train_transformer", variant, {"world_size": world, "grad_reduce": reduce}, ms / 1e3, extra=x)

        def theirs(variant, prec, world, ms, tok, reduce="f32"):
            x = {"precision": prec, "world_size": world, "tokens_per_s": tok, "mfu": 0.05, "grad_reduce": reduce}
            return {"results": [result("train_transformer", variant, {"world_size": world}, ms / 1e3, extra=x)]}
        with tempfile.TemporaryDirectory() as d:
            rep = write_json(d, "ddp.json", {"environment": env, "results": [
                ours("ours_bf16", "bf16", 1, 18.5, 440000.0),
                ours("ours_bf16", "bf16", 2, 20.0, 820000.0, eff=0.925, exch=0.4),
                ours("ours_bf16", "bf16", 2, 19.9, 814000.0, eff=0.92, reduce="bf16")]})
            files = [write_json(d, f"t{i}.json", t) for i, t in enumerate((
                theirs("pytorch_ddp_bf16", "bf16", 1, 33.0, 240000.0),
                theirs("pytorch_ddp_bf16", "bf16", 2, 57.0, 280000.0),
                theirs("pytorch_ddp_bf16_bf16_reduce", "bf16", 2, 42.0, 336000.0, reduce="bf16")))]
            out = self.tables("ddp", rep, *[a for f in files for a in ("--pytorch-ddp", f)])
        self.assertIn("Test GPU", out)
        self.assertIn("| ours_bf16 | bf16 | 1 | - | 18.50 | 440,000 | - | 20.0% | - |", out)
        self.assertIn("| ours_bf16 | bf16 | 2 | f32 | 20.00 | 820,000 | 0.925 | 20.0% | 0.40 |", out)
        self.assertIn("| ours_bf16 | bf16 | 2 | bf16 | 19.90 | 814,000 | 0.920 | 20.0% | - |", out)
        self.assertIn("| pytorch_ddp_bf16 (PyTorch) | bf16 | 2 | f32 | 57.00 | 280,000 | 0.583 | 5.0% | - |", out)
        self.assertIn("| pytorch_ddp_bf16_bf16_reduce (PyTorch) | bf16 | 2 | bf16 | 42.00 | 336,000 | 0.700 |", out)
        self.assertIn("- ours_bf16 (bf16, 2 GPU, exchange f32): 2.440x the tokens/s of pytorch_ddp_bf16_bf16_reduce", out)
        self.assertLess(out.index("| 2 | f32 | 20.00"), out.index("| 2 | bf16 | 19.90"))



class TinyTrust(unittest.TestCase):
    def test_agreement_and_tiny(self):
        with tempfile.TemporaryDirectory() as d:
            def rep(med, launches):
                r = result("gemm", "tiled", {"M": 64}, med, profile={"kernels": {"kernel_time_s": 100e-6}})
                r["stats"]["launches_per_sample"] = launches
                return {"environment": ENV, "results": [r]}
            ev, gr = write_json(d, "ev.json", rep(101e-6, 1)), write_json(d, "gr.json", rep(100.5e-6, 20))
            rc, out, err = no_torch(script("trust"), ev)
            self.assertEqual(rc, 0, err)
            self.assertIn("event median within 2% of CUPTI: 1 (100%)", out)
            rc, out, err = no_torch(script("trust"), "--tiny", ev, gr)
            self.assertEqual(rc, 0, err)
            self.assertIn("101.00us", out)
            self.assertIn("100.50us", out)
            rc, _, err = no_torch(script("trust"), "--tiny", ev)
            self.assertNotEqual(rc, 0)
            self.assertIn("--tiny takes two reports", err)

    def test_a_fixed_per_launch_gap_is_measured_and_explains_the_short_misses(self):
        # Events 3 us above CUPTI at every size: outside 2% at 60 and 100 us, inside at 300 and 1000.
        with tempfile.TemporaryDirectory() as d:
            rs = [result("gemm", "tiled", {"M": k}, (k + 3) * 1e-6, profile={"kernels": {"kernel_time_s": k * 1e-6}})
                  for k in (60, 100, 300, 1000)]
            rs.append(result("gemm", "tiled", {"M": 1}, 500e-6, profile={"kernels": {"kernel_time_s": 550e-6}}))
            path = write_json(d, "gap.json", {"environment": ENV, "results": rs})
            rc, out, err = no_torch(script("trust"), path)
        self.assertEqual(rc, 0, err)
        self.assertIn("event median within 2% of CUPTI: 2 (40%)", out)
        self.assertIn("event - CUPTI per launch: median 3.00 us", out)
        self.assertIn("with the median subtracted, within 2%: 4 (80%)", out)
        self.assertIn("-9.6%  event - 3.00 us      497.0 us  cupti      550.0 us  gemm/tiled/M:1", out)

    def test_matched_clocks(self):
        # Timed at 1470 MHz (power cap), profiled at 1980: CUPTI's 100 us is 134.7 us at 1470.
        with tempfile.TemporaryDirectory() as d:
            r = result("gemm", "wgmma", {"M": 64}, 135e-6,
                       profile={"kernels": {"kernel_time_s": 100e-6}, "clock": {"sm_mhz_median": 1980}})
            r["sensors"] = {"sm_clock_mhz": {"median": 1470}}
            path = write_json(d, "capped.json", {"environment": ENV, "results": [r]})
            rc, out, err = no_torch(script("trust"), path)
            self.assertEqual(rc, 0, err)
            self.assertIn("event median within 2% of CUPTI: 0 (0%)", out)
            self.assertIn("1 with both clocks: within 2%: 1 (100%)", out)
            self.assertIn("at 1470 MHz", out)
            self.assertIn("(profiled at 1980 MHz)", out)

    def test_traced_round(self):
        # Timed in rounds at 1811 us; the profiling pass (alone) saw 1514 us; the traced
        # round right after the rounds: 1800 us of kernels, its own events 0.3% above them.
        with tempfile.TemporaryDirectory() as d:
            r = result("gemm", "wgmma", {"M": 8192}, 1811e-6, profile={
                "kernels": {"kernel_time_s": 1514e-6},
                "traced_round": {"launches": 10, "event_median_s": 1805.4e-6, "kernel_median_s": 1800e-6,
                                 "event_over_kernel": 1.003}})
            path = write_json(d, "rounds.json", {"environment": ENV, "results": [r]})
            rc, out, err = no_torch(script("trust"), path)
            self.assertEqual(rc, 0, err)
            self.assertIn("event median within 2% of CUPTI: 0 (0%)", out)
            self.assertIn("timed in rounds, with a traced round (1): event median within 2% of the round's "
                          "CUPTI kernel median: 1 (100%); the round's own events within 2% of its kernels: 1", out)
            self.assertIn("(same launches  +0.3%)", out)
            self.assertNotIn("matched clocks (round CUPTI", out)  # no clock recorded by the round

    def test_traced_round_at_matched_clocks(self):
        # The rounds timed 1650 us at 1500 MHz; the traced round saw 1500 us of kernels at
        # 1650 MHz: 10% apart as measured, equal at matched clocks (1500 x 1650 / 1500 = 1650).
        with tempfile.TemporaryDirectory() as d:
            r = result("gemm", "wgmma", {"M": 8192}, 1650e-6, profile={
                "kernels": {"kernel_time_s": 1514e-6},
                "traced_round": {"launches": 34, "event_median_s": 1503e-6, "kernel_median_s": 1500e-6,
                                 "event_over_kernel": 1.002,
                                 "clock": {"source": "nvml", "during": "traced launches", "samples": 10,
                                           "sm_mhz_median": 1650.0}}})
            r["sensors"] = {"source": "nvml", "sm_clock_mhz": {"median": 1500.0}}
            path = write_json(d, "rounds.json", {"environment": ENV, "results": [r]})
            rc, out, err = no_torch(script("trust"), path)
            self.assertEqual(rc, 0, err)
            self.assertIn("event median within 2% of the round's CUPTI kernel median: 0 (0%)", out)
            self.assertIn("the same at matched clocks (round CUPTI x round clock / timed clock), 1 with both clocks: "
                          "within 2%: 1 (100%)", out)
            self.assertIn("(round at 1650 MHz)", out)


class TinyTorchAllreduce(unittest.TestCase):
    def nccl_reports(self, d):
        ours = write_json(d, "nccl.json", {"environment": dict(ENV), "results": [
            result("nccl_all_reduce", "nccl", {"bytes": 8, "dtype": "f32", "in_place": True}, 20e-6,
                   extra={"bytes": 8, "time_s": 20e-6, "time_max_s": 21e-6, "busbw_gbps": 0.0004, "ops_per_sample": 200,
                          "ranks": [{"busbw_gbps": 0.0004}, {"busbw_gbps": 0.00039}]}),
            result("nccl_all_reduce", "nccl", {"bytes": 1 << 30, "dtype": "f32", "in_place": True}, 3e-3,
                   extra={"bytes": 1 << 30, "time_s": 3e-3, "busbw_gbps": 357.0, "ops_per_sample": 5}),
            result("nccl_all_reduce", "nccl", {"bytes": 1 << 30, "dtype": "f32", "in_place": False}, 3e-3,
                   extra={"bytes": 1 << 30, "time_s": 3.3e-3, "busbw_gbps": 325.0, "ops_per_sample": 5}),
            # torch.distributed as a variant of the same run (--python): not one of "ours" here
            result("nccl_all_reduce", "torch", {"bytes": 8, "dtype": "f32", "in_place": True}, 60e-6,
                   extra={"bytes": 8, "time_s": 60e-6, "busbw_gbps": 0.0001, "ops_per_sample": 200})]})
        theirs = write_json(d, "torch.json", {"world_size": 2, "torch": "2.11", "nccl": "2.28.9", "results": [
            {"bytes": 8, "dtype": "f32", "time_s": 40e-6, "busbw_gbps": 0.0002},
            {"bytes": 1 << 30, "dtype": "f32", "time_s": 3e-3, "busbw_gbps": 350.0}]})
        return ours, theirs

    def test_compare_needs_no_torch(self):
        with tempfile.TemporaryDirectory() as d:
            ours, theirs = self.nccl_reports(d)
            rc, out, err = no_torch(script("torch_allreduce"), "--compare", ours, theirs)
            self.assertEqual(rc, 0, err)
            rc2, out2, err2 = no_torch(script("tables"), "nccl", ours, theirs)
        self.assertEqual(rc2, 0, err2)
        self.assertEqual(out.strip(), out2.strip())  # one table, two ways to ask for it
        self.assertIn("2 ranks on Test GPU", out)
        # 8 B: 20 us against 40 us, time ratio 0.5 (target <= 1.1x: met).
        self.assertRegex(out, r"\| 8 \| f32 \| true \| 200 \| 20\.00 \| 40\.00 \| 0\.500 \| 0\.00 \| 0\.00 \| 2\.000 \| 21\.00 "
                              r"\| 0\.00 / 0\.00 \| met \|")
        self.assertRegex(out, r"\| 1073741824 \| f32 \| true \| 5 \| 3000\.00 \| 3000\.00 \| 1\.000 \| 357\.00 \| 350\.00 \| 1\.020 .*\| met \|")
        self.assertRegex(out, r"\| 1073741824 \| f32 \| false \| 5 \| 3300\.00 .* \| 0\.929 .*\| missed \|")
        self.assertNotIn("60.00", out)  # the torch variant's row of the same harness report: not ours

    def test_tables_nccl_torch_pairs_the_two_variants_of_one_run(self):
        def x(nbytes, t, bw):
            return {"bytes": nbytes, "time_s": t, "busbw_gbps": bw, "collective": "all_reduce",
                    "ranks": [{"busbw_gbps": bw}, {"busbw_gbps": bw}]}
        small, big = {"bytes": 8, "dtype": "f32", "in_place": True}, {"bytes": 1 << 21, "dtype": "bf16", "in_place": True}
        out_of_place = {"bytes": 8, "dtype": "f32", "in_place": False}
        with tempfile.TemporaryDirectory() as d:
            rep = write_json(d, "nccl.json", {"environment": dict(ENV), "results": [
                result("nccl_all_reduce", "nccl", small, 20e-6, extra=x(8, 20e-6, 0.0004)),
                result("nccl_all_reduce", "torch", small, 25e-6, extra=x(8, 25e-6, 0.0003)),
                result("nccl_all_reduce", "nccl", big, 1e-5, extra=x(1 << 21, 1e-5, 190.0)),
                result("nccl_all_reduce", "torch", big, 1e-5, extra=x(1 << 21, 1e-5, 200.0)),
                result("nccl_all_reduce", "nccl", out_of_place, 20e-6, extra=x(8, 20e-6, 0.0004)),
                result("nccl_all_reduce", "torch", out_of_place, status="skipped",
                       reason="torch.distributed.all_reduce works in place only (the in_place: true rows)"),
                result("nccl_broadcast", "nccl", small, 20e-6, extra=x(8, 20e-6, 0.0004))]})
            rc, out, err = no_torch(script("tables"), "nccl-torch", rep)
        self.assertEqual(rc, 0, err)
        self.assertIn("2 ranks", out)
        self.assertIn("| all_reduce | 8 | f32 | true | 20.00 | 25.00 | 0.800 | 0.00 | 0.00 | 1.333 | met |", out)
        self.assertIn("| all_reduce | 2097152 | bf16 | true | 10.00 | 10.00 | 1.000 | 190.00 | 200.00 | 0.950 | met |", out)
        self.assertIn("Not paired, 1 rows (all_reduce 8 f32 in_place=false): torch skipped: torch.distributed.all_reduce "
                      "works in place only (the in_place: true rows)", out)
        self.assertNotIn("| all_reduce | 8 | f32 | false |", out)
        self.assertNotIn("| broadcast |", out)  # no torch result to pair with: listed instead
        self.assertIn("Not paired, 1 rows (broadcast 8 f32 in_place=true): no torch result in the report", out)
        with tempfile.TemporaryDirectory() as d:  # another variant beside nccl: --theirs
            rep = write_json(d, "ab.json", {"environment": dict(ENV), "results": [
                result("nccl_all_reduce", "nccl", small, 20e-6, extra=x(8, 20e-6, 0.0004)),
                result("nccl_all_reduce", "torch_set_stream", small, 40e-6, extra=x(8, 40e-6, 0.0002))]})
            rc, out, err = no_torch(script("tables"), "nccl-torch", rep, "--theirs", "torch_set_stream")
        self.assertEqual(rc, 0, err)
        self.assertIn("| all_reduce | 8 | f32 | true | 20.00 | 40.00 | 0.500 |", out)
        self.assertIn("nccl (the harness's NCCL calls) and torch_set_stream", out)

    def test_tables_sdpa_agreement_per_shape_and_backend(self):
        bf = attention_params("bf16")
        long = dict(bf, seq_len=4096)
        with tempfile.TemporaryDirectory() as d:
            ours = write_json(d, "variants.json", {"environment": dict(ENV), "results": [
                result("attention", "flash", bf, 1.0e-3),
                # NVML's clock (sensors) before the probe's (clocks) where a result has both
                result("attention", "sdpa_cudnn", bf, 1.01e-3, clocks={"median_mhz": 1700.0},
                       sensors={"sm_clock_mhz": {"median": 1690.0}}),
                result("attention", "sdpa_cudnn", long, 1.05e-3),
                result("attention", "sdpa_flash", bf, 2.0e-3)]})
            script_rep = write_json(d, "script.json", {"environment": dict(ENV), "results": [
                result("attention", "sdpa_cudnn_bf16", bf, 1.0e-3, clocks={"median_mhz": 1710.0}),
                result("attention", "sdpa_cudnn_bf16", long, 1.0e-3),
                result("attention", "sdpa_flash_bf16", bf, status="skipped", reason="x")]})
            rc, out, err = no_torch(script("tables"), "sdpa-agreement", ours, script_rep)
            rc2, _, err2 = no_torch(script("tables"), "sdpa-agreement", ours)
        self.assertEqual(rc, 0, err)
        self.assertIn("| sdpa_cudnn | 1.0100 ms, 1690 MHz | 1.0000 ms, 1710 MHz | 1.010 | yes |", out)
        self.assertIn("| sdpa_cudnn | 1.0500 ms | 1.0000 ms | 1.050 | **no** |", out)
        self.assertIn("sdpa_cudnn: 1 of 2 shapes within 2%", out)
        self.assertNotIn("sdpa_flash:", out)  # skipped in the script: no pair
        self.assertEqual(rc2, 2)
        self.assertIn("sdpa-agreement needs the script's report", err2)

    def test_tables_nccl_needs_torchs_figures(self):
        with tempfile.TemporaryDirectory() as d:
            ours, _ = self.nccl_reports(d)
            rc, _, err = no_torch(script("tables"), "nccl", ours)
        self.assertEqual(rc, 2)
        self.assertIn("nccl needs torch.distributed's figures", err)

    def test_k_and_the_ranks_combined_as_the_harness(self):
        # The table of tests/collective_timing_test.cpp (CollectiveOps): both sides batch alike.
        hr = importlib.import_module("harness_report")
        sizes = [8, 64, 512, 4096, 32768, 262144, 1048576, 2097152, 16777216, 134217728, 1073741824]
        self.assertEqual([hr.collective_ops_per_sample(b) for b in sizes], [200, 200, 200, 200, 194, 159, 98, 65, 12, 5, 5])
        self.assertEqual(hr.collective_ops_per_sample(float("nan")), 200)
        c = hr.combine_ranks([[1e-3, 3e-3, 2e-3, 2e-3], [3e-3, 1e-3, 2e-3, 4e-3]])  # CombineRanks in the same file
        self.assertEqual(c["mean"], [2e-3, 2e-3, 2e-3, 3e-3])
        self.assertEqual(c["slowest"], [3e-3, 3e-3, 2e-3, 4e-3])
        self.assertAlmostEqual(c["time_s"], 2e-3)
        self.assertAlmostEqual(c["time_max_s"], 3e-3)
        self.assertEqual(c["rank_median"], [2e-3, 2.5e-3])
        self.assertEqual(hr.collective_bandwidth(1 << 30, 4e-3, 1.5), ((1 << 30) / 4e-3 / 1e9, (1 << 30) / 4e-3 / 1e9 * 1.5))
        ta = importlib.import_module("torch_allreduce")
        row = ta.row(8, "f32", 200, [[20e-6, 22e-6], [24e-6, 20e-6]], 4)
        self.assertAlmostEqual(row["time_s"], 21.5e-6)
        self.assertAlmostEqual(row["time_max_s"], 23e-6)
        self.assertAlmostEqual(row["busbw_gbps"], 8 / 21.5e-6 / 1e9 * 1.5)  # 2(n-1)/n at 4 ranks
        self.assertEqual([r["rank"] for r in row["ranks"]], [0, 1])

    def test_measure_with_a_fake_torch_times_batches_between_one_event_pair(self):
        # A stand-in for torch and torch.distributed: a clock that every all_reduce of the
        # timed tensor advances by 10 us (the barrier's one-int all_reduce by 1 us), two ranks.
        clock = {"t": 0.0, "barriers": 0, "ops": 0}

        class Tensor:
            def __init__(self, n, dtype):
                self.n, self.dtype, self.values = n, dtype, [0.0] * n

            def element_size(self):
                return 4 if self.dtype == "f32" else (2 if self.dtype == "bf16" else 8)

            def tolist(self):
                return list(self.values)

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = clock["t"]

            def synchronize(self):
                pass

            def elapsed_time(self, other):
                return (other.at - self.at) * 1e3

        def all_reduce(x):
            if x.dtype == "i32":
                clock["barriers"] += 1
                clock["t"] += 1e-6
            else:
                clock["ops"] += 1
                clock["t"] += 10e-6

        def all_gather(out, t):
            for o in out:
                o.values = list(t.values)

        def tensor(values, dtype=None, device=None):
            x = Tensor(len(values), dtype)
            x.values = list(values)
            return x

        cuda = types.SimpleNamespace(set_device=lambda d: None, synchronize=lambda: None, Event=Event,
                                     get_device_name=lambda d: "Fake GPU",
                                     nccl=types.SimpleNamespace(version=lambda: (2, 28, 9)))
        dist = types.SimpleNamespace(init_process_group=lambda backend: None, get_rank=lambda: 0,
                                     get_world_size=lambda: 2, all_reduce=all_reduce, all_gather=all_gather,
                                     destroy_process_group=lambda: None)
        torch = types.SimpleNamespace(float32="f32", bfloat16="bf16", int32="i32", float64="f64", __version__="fake",
                                      cuda=cuda, distributed=dist, tensor=tensor,
                                      zeros=lambda n, dtype=None, device=None: Tensor(n, dtype),
                                      zeros_like=lambda t: Tensor(t.n, t.dtype))
        ta = importlib.import_module("torch_allreduce")
        saved = {k: sys.modules.get(k) for k in ("torch", "torch.distributed")}
        sys.modules["torch"], sys.modules["torch.distributed"] = torch, dist
        try:
            with tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "t.json")
                args = types.SimpleNamespace(dtypes="f32", sizes=[8, 1 << 30], warmup=5, samples=3, out=out)
                with contextlib.redirect_stdout(io.StringIO()) as printed:
                    self.assertEqual(ta.measure(args), 0)
                rep = load(out)
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        self.assertEqual(clock["barriers"], 2 * 3)             # one per sample and size
        self.assertEqual(clock["ops"], (200 + 3 * 200) + (5 + 3 * 5))  # warm-up max(5, K), then 3 batches of K
        small, big = rep["results"]
        self.assertEqual((small["ops_per_sample"], big["ops_per_sample"]), (200, 5))
        self.assertAlmostEqual(small["time_s"], 10e-6)         # the barrier stays outside the events
        self.assertAlmostEqual(big["busbw_gbps"], (1 << 30) / 10e-6 / 1e9 * 1.0)  # 2(n-1)/n = 1 at 2 ranks
        self.assertEqual(len(small["ranks"]), 2)
        self.assertEqual(rep["world_size"], 2)
        self.assertIn("Fake GPU", rep["gpu"])
        self.assertIn("200", printed.getvalue())

    def test_measuring_without_torch_says_so(self):
        rc, _, err = no_torch(script("torch_allreduce"), "--sizes", "8")
        self.assertEqual(rc, 2)
        self.assertIn("PyTorch is not installed", err)


DRY_RUN = """\
fwd-h16  attention/flash/batch:4/heads:16/kv_heads:0/seq_len:1024/head_dim:64/causal:false/scale:0/dtype:f32
fwd-h16  attention/flash_3xtf32/batch:4/heads:16/kv_heads:0/seq_len:1024/head_dim:64/causal:false/scale:0/dtype:f32
fwd-h16  attention/flash/batch:4/heads:16/kv_heads:0/seq_len:1024/head_dim:64/causal:false/scale:0/dtype:bf16
bwd-h16  attention_backward/flash/batch:4/heads:16/kv_heads:2/seq_len:1024/head_dim:128/causal:true/scale:0/dtype:bf16
"""


def fake_torch():
    """The parts of torch that pytorch_attention.measure touches around the runner."""
    class OutOfMemoryError(RuntimeError):
        pass
    return types.SimpleNamespace(cuda=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError))


class TinyPytorchAttention(unittest.TestCase):
    def setUp(self):
        self.pa = importlib.import_module("pytorch_attention")

    def test_auto_runs_both_backends_at_bf16_and_f16(self):
        pa = self.pa
        shapes = pa.parse_dry_run(DRY_RUN)
        self.assertEqual([(p, s["dtype"]) for p, s in shapes],
                         [("attention", "f32"), ("attention", "bf16"), ("attention_backward", "bf16")])
        self.assertEqual(pa.variants_for(shapes[0][1], None), ["sdpa_fp32"])
        self.assertEqual(pa.variants_for(shapes[1][1], None), ["sdpa_flash_bf16", "sdpa_cudnn_bf16"])
        self.assertEqual(pa.variants_for({"dtype": "f16"}, None), ["sdpa_flash_fp16", "sdpa_cudnn_fp16"])
        self.assertEqual(pa.variants_for({}, None), ["sdpa_fp32"])  # suites without a dtype param: FP32
        self.assertEqual(pa.variants_for({"dtype": "fp8_e4m3"}, None), [])  # no SDPA backend takes FP8
        self.assertEqual(pa.parse_variants("all"), list(pa.VARIANTS))
        self.assertEqual(pa.parse_variants("sdpa_cudnn_bf16, sdpa_fp32,sdpa_cudnn_bf16"), ["sdpa_cudnn_bf16", "sdpa_fp32"])
        self.assertEqual(pa.VARIANTS["sdpa_cudnn_bf16"], ("bfloat16", ("CUDNN_ATTENTION",)))
        self.assertEqual(pa.VARIANTS["sdpa_flash_bf16"], ("bfloat16", ("FLASH_ATTENTION",)))

    def test_samples_are_timed_back_to_back_one_sync_per_batch(self):
        pa, log = self.pa, []

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                log.append("record")
                self.t = len(log)

            def synchronize(self):
                log.append("sync")

            def elapsed_time(self, end):  # ms: 2 ms a call
                return 2.0

        torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event, synchronize=lambda: log.append("sync")))
        samples = pa.time_cuda(torch, lambda: log.append("call"), warmup=2, min_samples=12, min_time=0.0, batch=5)
        self.assertEqual(len(samples), 15)  # whole batches: 3 of 5
        self.assertTrue(all(abs(x - 2e-3) < 1e-12 for x in samples))
        # warm-up, one sync; then each batch: record, call, record five times, and one sync.
        self.assertEqual(log[:3], ["call", "call", "sync"])
        batch = ["record", "call", "record"] * 5 + ["sync"]
        self.assertEqual(log[3:], batch * 3)

    def test_the_settle_rule_is_the_harness_rule(self):
        settled = self.pa.clock_settled
        flat = [(i * 0.01, 1500.0) for i in range(1, 101)]  # 1 s at one clock
        self.assertTrue(settled(flat))
        self.assertFalse(settled(flat[:99]))  # less than 1 s
        falling = [(t, 1980.0 - 400.0 * t) for t, _ in flat]  # 400 MHz/s: 10% between the two windows
        self.assertFalse(settled(falling))
        late_drop = flat[:-10] + [(t, 1400.0) for t, _ in flat[-10:]]  # the newest 0.1 s 7% lower
        self.assertFalse(settled(late_drop))
        self.assertFalse(settled([]))
        # Failed reads (NVML gave None) are not clocks: never "settled" on them alone, and
        # left out of the medians otherwise.
        self.assertFalse(settled([(t, None) for t, _ in flat]))
        self.assertFalse(settled([(t, 0) for t, _ in flat]))
        self.assertTrue(settled([(t, None if i % 3 == 1 else m) for i, (t, m) in enumerate(flat)]))
        self.assertTrue(settled([(t, 0 if i % 2 == 0 else m) for i, (t, m) in enumerate(flat)]))  # zeros would halve a median

    def test_steady_warms_up_until_the_clock_settles_and_noise_samples_on(self):
        pa, log, clock = self.pa, [], itertools.chain([1980, 1900, 1700, 1600], itertools.repeat(1500))

        class Event:
            def __init__(self, enable_timing=False):
                pass

            def record(self):
                pass

            def synchronize(self):
                pass

            def elapsed_time(self, end):  # 2 ms, then a 1 ms sample every 2nd batch: noisy until enough
                log.append("sample")
                return 2.0 if len(log) % 20 < 10 else 1.0

        torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event, synchronize=lambda: None))
        now = [0.0]

        def tick():
            now[0] += 0.001
            return now[0]

        sensors = types.SimpleNamespace(sm_mhz=lambda: next(clock), max_mhz=1980)
        with mock.patch.object(pa, "SENSORS", sensors), mock.patch.object(pa.time, "perf_counter", tick), \
                mock.patch.dict(pa.TIMING, steady=True, noise=0.01):
            steady = {}
            samples = pa.time_cuda(torch, lambda: None, warmup=1, min_samples=10, min_time=0.0, max_time=0.05,
                                   batch=5, steady=steady)
        self.assertTrue(steady["reached"])
        self.assertGreaterEqual(steady["seconds"], 1.0)  # the rule's minimum
        # The noise rule (1%) never holds on these samples: sampling stops at max_time.
        self.assertGreater(len(samples), 10)
        with mock.patch.object(pa, "SENSORS", None), mock.patch.dict(pa.TIMING, steady=True, noise=None):
            steady = {}
            self.assertEqual(len(pa.time_cuda(torch, lambda: None, warmup=1, min_samples=10, min_time=0.0,
                                              batch=5, steady=steady)), 10)
        self.assertEqual(steady, {"reached": False, "seconds": 0.0})  # no NVML: no settling
        self.assertTrue(pa.noisy([1.0, 2.0], 0.03))
        self.assertFalse(pa.noisy([1.0, 1.0, 1.0], 0.03))
        self.assertFalse(pa.noisy([1.0, 2.0], None))
        self.assertFalse(pa.noisy([0.0, 0.0], 0.03))  # the harness's rel_noise is 0 at a zero mean

    def test_bad_variants_exit_2(self):
        rc, _, err = no_torch(script("pytorch_attention"), "suites/attention-compare.yaml", "--out", "x.json",
                              "--variants", "sdpa_fp32,sdpa_cudnn")
        self.assertEqual(rc, 2)
        self.assertIn("unknown variant 'sdpa_cudnn'", err)
        rc, _, err = no_torch(script("pytorch_attention"), "suites/attention-sdpa.yaml", "--out", "x.json",
                              "--steady", "--noise", "3")
        self.assertEqual(rc, 2)
        self.assertIn("--noise: 3.0 is not a fraction in (0, 1)", err)

    def test_a_backend_that_cannot_run_the_shape_is_skipped_with_the_message(self):
        pa, torch = self.pa, fake_torch()
        _, bf16 = pa.parse_dry_run(DRY_RUN)[1]

        def refuses(torch_, problem, params, variant):
            warnings.warn("cuDNN attention kernel not used because: head_dim 256 > 128", UserWarning)
            raise RuntimeError("No available kernel. Aborting execution.\nmore lines")

        with contextlib.redirect_stdout(io.StringIO()) as out:
            e = pa.measure(torch, "attention", bf16, "sdpa_cudnn_bf16", runner=refuses)
        self.assertEqual(e["status"], "skipped")
        self.assertEqual(e["reason"], "RuntimeError: No available kernel. Aborting execution. "
                                      "(cuDNN attention kernel not used because: head_dim 256 > 128)")
        self.assertEqual(e["variant"], "sdpa_cudnn_bf16")
        self.assertTrue(e["name"].startswith("attention/sdpa_cudnn_bf16/batch:4/heads:16/"))
        self.assertIn("skipped: RuntimeError: No available kernel", out.getvalue())

        def oom(*_):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")
        with contextlib.redirect_stdout(io.StringIO()):
            e = pa.measure(torch, "attention", bf16, "sdpa_flash_bf16", runner=oom)
        self.assertEqual((e["status"], e["reason"]), ("skipped", "out of memory: CUDA out of memory. Tried to allocate 8.00 GiB"))

    def test_the_sm_clock_of_each_sample_is_recorded_as_the_harness_does(self):
        pa = self.pa
        problem, bf16 = pa.parse_dry_run(DRY_RUN)[2]
        old = pa.SENSORS
        pa.SENSORS = types.SimpleNamespace(max_mhz=1980)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                e = pa.measure(fake_torch(), problem, bf16, "sdpa_cudnn_bf16",
                               runner=lambda *_: ([2e-3, 1e-3, 3e-3], 4096, [1980, 1605, 1590]))
        finally:
            pa.SENSORS = old
        self.assertEqual(e["clocks"]["median_mhz"], 1605.0)
        self.assertEqual(e["clocks"]["max_mhz"], 1980.0)
        self.assertFalse(e["clocks"]["throttled"])

    def test_a_passing_backend_is_a_timed_result(self):
        pa = self.pa
        problem, bf16 = pa.parse_dry_run(DRY_RUN)[2]
        with contextlib.redirect_stdout(io.StringIO()):
            e = pa.measure(fake_torch(), problem, bf16, "sdpa_cudnn_bf16", runner=lambda *_: ([2e-3, 1e-3, 3e-3], 4096))
        self.assertEqual(e["status"], "passed")
        self.assertAlmostEqual(e["stats"]["median_s"], 2e-3)
        self.assertEqual(e["params"]["kv_heads"], 2)
        self.assertIs(e["params"]["causal"], True)
        flops = 4.0 * 4 * 16 * 1024 * 1024 * 128 * 0.5 * 2.5
        self.assertEqual(e["work"]["flops"], flops)
        self.assertAlmostEqual(e["rates"]["gflops"], flops / 2e-3 * 1e-9)
        self.assertEqual(e["extra"]["sdpa_backends"], ["CUDNN_ATTENTION"])
        self.assertEqual(e["memory"]["workspace_peak_bytes"], 4096)

    def test_other_failures_are_not_hidden(self):
        def bug(*_):
            raise TypeError("a bug in the script")
        with self.assertRaises(TypeError), contextlib.redirect_stdout(io.StringIO()):
            self.pa.measure(fake_torch(), "attention", self.pa.parse_dry_run(DRY_RUN)[0][1], "sdpa_fp32", runner=bug)

    @unittest.skipUnless(harness_exe(), "HARNESS_EXE not set or not built (ctest sets it)")
    def test_the_comparison_suite_through_the_harness(self):
        shapes = self.pa.planned_shapes(harness_exe(), os.path.join(ROOT, "suites", "attention-compare.yaml"),
                                        "seq_len:1024/head_dim:64/causal:false")
        dtypes = sorted({(p, s["dtype"], s["kv_heads"], s["heads"]) for p, s in shapes})
        self.assertEqual(len(shapes), len(dtypes))  # flash and flash_3xtf32 give one shape
        self.assertEqual(len(shapes), 2 * 2 * 2 * 2)  # forward/backward x H 16/32 x MHA/GQA x f32/bf16
        n = sum(len(self.pa.variants_for(s, None)) for _, s in shapes)
        self.assertEqual(n, 8 * 1 + 8 * 2)

    def test_as_variants_calls_the_harness_variants_code(self):
        # --as-variants times examples/python/sdpa_ops.py's calls, those of torch_sdpa.py's
        # harness variants: every script variant's first backend is one of them.
        pa = self.pa
        with open(os.path.join(pa.EXAMPLES, "sdpa_ops.py")) as f:
            tree = ast.parse(f.read())
        backends = next(ast.literal_eval(n.value) for n in tree.body
                        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "BACKENDS")
        self.assertEqual({pa.OPS_VARIANT[b[0]] for _, b in pa.VARIANTS.values()}, set(backends))
        self.assertEqual({v[0] for v in backends.values()}, set(pa.OPS_VARIANT))
        rc, _, err = no_torch(script("pytorch_attention"), "suites/attention-compare.yaml", "--out", "x.json",
                              "--as-variants")
        self.assertEqual(rc, 2)
        self.assertIn("PyTorch is not installed", err)

    def test_without_torch_it_says_so(self):
        rc, _, err = no_torch(script("pytorch_attention"), "suites/attention-compare.yaml", "--out", "x.json")
        self.assertEqual(rc, 2)
        self.assertIn("PyTorch is not installed", err)


class TinyPytorchDdp(unittest.TestCase):
    def setUp(self):
        self.ddp = importlib.import_module("pytorch_ddp")

    def args(self, *argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                return self.ddp.parse_args(list(argv)), ""
            except SystemExit as e:
                self.assertEqual(e.code, 2)
                return None, err.getvalue()

    def test_params_give_one_configuration(self):
        a, _ = self.args("--out", "x.json", "--params", "batch=4,seq_len=2048")
        (case, p), = a.configs
        self.assertEqual((case, p["batch"], p["seq_len"], p["d_model"]), ("", 4, 2048, 512))
        self.assertEqual(a.suite, "suites/transformer-ddp.yaml")
        self.assertEqual(self.ddp.result_name(p, 2),
                         "train_transformer/pytorch_ddp/batch:4/seq_len:2048/encoder_layers:6/decoder_layers:6/"
                         "heads:8/d_model:512/hidden:2048/vocab:6880/activation:relu/lr:0.0002/warmup_steps:4/"
                         "schedule_steps:2000/clip_norm:1/check_steps:4/src_len:0/tgt_len:0/world_size:2")
        e = self.ddp.base_entry(p, 2)
        self.assertEqual((e["params"]["world_size"], e["device"]), (2, "cuda:0,cuda:1"))
        self.assertGreater(e["work"]["flops"], 0)

    def test_bf16_precision_is_its_own_variant(self):
        a, _ = self.args("--out", "x.json", "--params", "batch=4,seq_len=2048", "--precision", "bf16")
        self.assertEqual(a.precision, "bf16")
        (_, p), = a.configs
        e = self.ddp.base_entry(p, 2, a.precision)
        self.assertEqual((e["variant"], e["case"]), ("pytorch_ddp_bf16", "pytorch_ddp_bf16"))
        self.assertTrue(e["name"].startswith("train_transformer/pytorch_ddp_bf16/batch:4/"))
        self.assertEqual(self.args("--out", "x.json")[0].precision, "fp32")
        _, err = self.args("--out", "x.json", "--precision", "fp8")
        self.assertIn("invalid choice: 'fp8'", err)

    def test_bf16_gradient_exchange_is_its_own_variant(self):
        a, _ = self.args("--out", "x.json", "--params", "batch=4,seq_len=2048", "--precision", "bf16",
                         "--grad-reduce", "bf16")
        (_, p), = a.configs
        e = self.ddp.base_entry(p, 2, a.precision, a.grad_reduce)
        self.assertEqual((e["variant"], e["case"]), ("pytorch_ddp_bf16_bf16_reduce",) * 2)
        self.assertTrue(e["name"].startswith("train_transformer/pytorch_ddp_bf16_bf16_reduce/batch:4/"))
        self.assertEqual(self.args("--out", "x.json")[0].grad_reduce, "f32")
        _, err = self.args("--out", "x.json", "--grad-reduce", "f16")
        self.assertIn("invalid choice: 'f16'", err)

    def test_bad_arguments_exit_2_with_the_reason(self):
        for argv, message in ((("--params", "batch=4,depth=3"), "unknown parameter 'depth'"),
                              (("--params", "batch=4,seq_len=16,tgt_len=32"), "target length (32) > source length (16)"),
                              (("--steps", "0"), "--steps must be >= 1"), (("--warmup", "-1"), "--warmup must be >= 0"),
                              ((), "--out")):
            with self.subTest(argv=argv):
                a, err = self.args(*(("--out", "x.json") if argv else ()), *argv)
                self.assertIsNone(a)
                self.assertIn(message, err)

    @unittest.skipUnless(harness_exe(), "HARNESS_EXE not set or not built (ctest sets it)")
    def test_the_ddp_suite_through_the_harness(self):
        suite = os.path.join(ROOT, "suites", "transformer-ddp.yaml")
        got = self.ddp.suite_configs(harness_exe(), suite, "")
        self.assertEqual(len(got), 1)  # world_size 1 and 2: one model, world_size is torchrun's
        case, p = got[0]
        self.assertEqual((case, p["batch"], p["seq_len"]), ("seed_b4_n2048", 4, 2048))
        self.assertNotIn("world_size", p)
        try:
            import yaml  # noqa: F401
        except ImportError:
            return
        self.assertEqual(self.ddp.suite_settings(suite)[case], (3, 20))

    def test_mfu_per_gpu(self):
        # extra carries harness_report.mfu_fields of one rank's work and the mean step.
        hr = importlib.import_module("harness_report")
        x = hr.mfu_fields(4.0e12, 40.0, {"peak_tflops": 1000.0, "peak_source": "test peak"})
        self.assertAlmostEqual(x["mfu"], 0.1)
        self.assertEqual(self.ddp.mfu_text(x), "MFU 10.0% per GPU of 1000.0 TFLOP/s")
        unknown = hr.mfu_fields(4.0e12, 40.0, {"peak_tflops": None, "peak_source": "peak unknown: sm_80"})
        self.assertEqual(self.ddp.mfu_text(unknown), "MFU: peak unknown: sm_80")

    def test_without_torch_it_says_so(self):
        rc, _, err = no_torch(script("pytorch_ddp"), "--out", "x.json", "--params", "batch=4,seq_len=64")
        self.assertEqual(rc, 2)
        self.assertIn("PyTorch is not installed", err)


# A compiled mode's child process without torch or a GPU: pytorch_transformer.child_main (the
# protocol of the real child: spec.json in, first_step and result.json out) with a fake
# torch and a runner that behaves as BEHAVIOUR says. argv[1]: the work directory.
FAKE_CHILD = r"""
import os, signal, subprocess, sys, time
sys.path.insert(0, %(reports)r)
import pytorch_transformer as pt
BEHAVIOUR, PIDFILE = %(behaviour)r, %(pidfile)r

class FakeTorch:
    class cuda:
        class OutOfMemoryError(RuntimeError):
            pass

def runner(torch, p, mode, warm, steps, compile_mode, seed, kernel_steps, on_first_step=None):
    if BEHAVIOUR == "hang_compile":  # a compiler that never returns, with a worker process of its own
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        with open(PIDFILE, "w") as f:
            f.write(str(worker.pid))
        time.sleep(120)
    on_first_step(12.5)
    if BEHAVIOUR == "hang_steps":
        time.sleep(120)
    if BEHAVIOUR == "oom":
        raise FakeTorch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    if BEHAVIOUR == "fail":
        raise RuntimeError("inductor: no working C compiler\nmore")
    if BEHAVIOUR == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    return {"samples": [0.010, 0.012, 0.011], "phases": {"forward": 3.0, "backward": 6.0, "optimizer": 2.0,
            "step": 11.0}, "peak": 3 << 20, "base": 1 << 20, "losses": [9.0, 8.5, 8.0], "parameters": 1000,
            "first_s": 12.5, "kernels": None, "spec": [p["batch"], mode, warm, steps, compile_mode, seed]}

sys.exit(pt.child_main(sys.argv[1], torch=FakeTorch, runner=runner))
"""


def gone(pid, within_s=10.0):
    """Whether process `pid` has ended (absent, or a zombie waiting for its reaper) within within_s."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


class TinyPytorchTransformer(unittest.TestCase):
    # Its modes, arguments, FLOPs and entries: tests/pytorch_transformer_test.py (ctest
    # pytorch_transformer_py). Here: the tiny run without torch, and the compiled modes'
    # child processes under --compile-timeout with fake children.
    def setUp(self):
        self.pt = importlib.import_module("pytorch_transformer")
        self.p = dict(self.pt.DEFAULTS, batch=2, seq_len=8)
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def child(self, behaviour):
        pidfile = os.path.join(self.tmp.name, "worker.pid")
        return [sys.executable, "-c", FAKE_CHILD % {"reports": REPORTS, "behaviour": behaviour, "pidfile": pidfile}]

    def isolated(self, behaviour, compile_mode="reduce-overhead", timeout_s=60.0, peak=None):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            e = self.pt.run_mode_isolated("tiny", self.p, "bf16-compile", 1, 3, compile_mode, 7, 0, peak, timeout_s,
                                          child_cmd=self.child(behaviour))
        return e, out.getvalue()

    def test_without_torch_it_says_so(self):
        rc, _, err = no_torch(script("pytorch_transformer"), "suites/transformer.yaml", "--out", "x.json",
                              "--params", "batch=2,seq_len=8", "--modes", "all")
        self.assertEqual(rc, 2)
        self.assertIn("PyTorch is not installed", err)

    def test_new_options_without_torch(self):
        # --compile-modes / --compile-timeout pass the argument checks, then the missing torch ends it.
        rc, _, err = no_torch(script("pytorch_transformer"), "suites/transformer.yaml", "--out", "x.json",
                              "--params", "batch=2,seq_len=8", "--modes", "bf16-compile",
                              "--compile-modes", "all", "--compile-timeout", "0.5")
        self.assertEqual(rc, 2)
        self.assertIn("PyTorch is not installed", err)
        rc, _, err = no_torch(script("pytorch_transformer"), "suites/transformer.yaml", "--out", "x.json",
                              "--compile-modes", "default,max-autotune-no-cudagraph")
        self.assertEqual(rc, 2)
        self.assertIn("unknown compile mode 'max-autotune-no-cudagraph'", err)

    def test_a_compile_past_the_timeout_is_skipped_with_the_reason(self):
        start = time.monotonic()
        e, out = self.isolated("hang_compile", "max-autotune-no-cudagraphs", timeout_s=1.0)
        self.assertLess(time.monotonic() - start, 30)  # not the fake compiler's 120 s
        self.assertEqual(e["status"], "skipped")
        self.assertEqual(e["reason"], "torch.compile (mode max-autotune-no-cudagraphs) did not compile within 1 s "
                                      "(--compile-timeout: the child's start, the compilation and the first step); "
                                      "its process group was ended")
        self.assertEqual(e["variant"], "pytorch_bf16_compile_max_autotune_no_cudagraphs")
        self.assertEqual((e["extra"]["compile_mode"], e["extra"]["compile_timeout_s"]),
                         ("max-autotune-no-cudagraphs", 1.0))
        self.assertIn("pytorch_bf16_compile_max_autotune_no_cudagraphs/batch:2/", e["name"])
        self.assertIn("skipped: torch.compile (mode max-autotune-no-cudagraphs) did not compile within 1 s", out)
        # The fake compiler's worker process went with it (the child's whole process group).
        with open(os.path.join(self.tmp.name, "worker.pid")) as f:
            self.assertTrue(gone(int(f.read())), "the compile worker outlived the timeout")
        json.dumps(harness_report_finish([e]))

    def test_steps_past_the_timeout_after_the_compile(self):
        e, _ = self.isolated("hang_steps", timeout_s=1.0)
        self.assertEqual(e["status"], "skipped")
        self.assertEqual(e["reason"], "torch.compile (mode reduce-overhead): the steps after the first did not finish "
                                      "within 1 s (--compile-timeout); its process group was ended")

    def test_a_compiled_mode_in_its_child_is_a_timed_result(self):
        peak = {"peak_tflops": 1000.0, "peak_source": "test peak"}
        e, out = self.isolated("pass", peak=peak)
        self.assertEqual(e["status"], "passed", e.get("reason"))
        self.assertEqual(e["variant"], "pytorch_bf16_compile_reduce_overhead")
        x = e["extra"]
        self.assertEqual((x["compile_mode"], x["compiled"], x["precision"]), ("reduce-overhead", True, "bf16"))
        self.assertAlmostEqual(e["stats"]["median_s"], 0.011)
        self.assertAlmostEqual(x["compile_s"], 12.5 - 0.011)
        self.assertEqual(x["compile_timeout_s"], 60.0)
        self.assertAlmostEqual(x["mfu"], self.pt.work(self.p) / 0.011 / 1e15)
        self.assertEqual(x["peak_source"], "test peak")
        self.assertIn("pytorch_bf16_compile_reduce_overhead/batch:2/", out)
        self.assertIn("MFU ", out)

    def test_the_spec_reaches_the_child(self):
        status, m = self.pt.run_child(self.p, "fp32-compile", 4, 9, "default", 11, 0, 60.0, self.child("pass"))
        self.assertEqual(status, "passed")
        self.assertEqual(m["spec"], [2, "fp32-compile", 4, 9, "default", 11])

    def test_failures_of_the_child_are_skipped_results(self):
        for behaviour, reason in (
                ("oom", "out of memory: OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
                ("fail", "torch.compile (mode reduce-overhead) failed: RuntimeError: inductor: no working C compiler"),
                ("crash", "torch.compile (mode reduce-overhead): the mode's process ended without a result "
                          f"(signal {int(signal.SIGSEGV)})")):
            with self.subTest(behaviour=behaviour):
                e, _ = self.isolated(behaviour)
                self.assertEqual((e["status"], e["reason"]), ("skipped", reason))

    def test_the_real_child_without_torch(self):
        # The script's own --child (what run_child starts by default): exit 2 without torch,
        # which the parent reports as a skipped result.
        with tempfile.TemporaryDirectory() as d:
            self.pt.write_atomic(os.path.join(d, "spec.json"), {"params": self.p, "mode": "bf16-compile", "warmup": 1,
                                                                "steps": 1, "compile_mode": "default", "seed": 42,
                                                                "kernel_steps": 0})
            rc, _, err = no_torch(script("pytorch_transformer"), "--child", d)
            self.assertEqual(rc, 2)
            self.assertIn("PyTorch is not installed", err)
            self.assertFalse(os.path.exists(os.path.join(d, "result.json")))
        child = [sys.executable, "-c", NO_TORCH, script("pytorch_transformer"), "--child"]
        with contextlib.redirect_stderr(io.StringIO()):
            status, reason = self.pt.run_child(self.p, "bf16-compile", 1, 1, "default", 42, 0, 60.0, child)
        self.assertEqual((status, reason), ("skipped", "torch.compile (mode default): the mode's process ended "
                                                       "without a result (exit code 2)"))

    def test_end_group_escalates_to_sigkill(self):
        proc = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                                 "time.sleep(120)"], start_new_session=True, stdout=subprocess.PIPE, text=True)
        self.assertEqual(proc.stdout.readline().strip(), "ready")
        start = time.monotonic()
        self.pt.end_group(proc, grace_s=0.3)
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        proc.stdout.close()


def harness_report_finish(results):
    return importlib.import_module("harness_report").finish({"results": results})


if __name__ == "__main__":
    unittest.main()
