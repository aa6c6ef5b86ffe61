#!/usr/bin/env python3
"""reports/pytorch_transformer.py without PyTorch (ctest `pytorch_transformer_py`, label
cpu): the modes and their variant names, the argument checks (argparse exit 2 with the
message), the lengths and FLOPs (against the harness's own FLOPs when HARNESS_EXE is
set), the dry-run parsing and the suite's settings per case, the data schedule (the
engine's check steps on batch 0, then the cycle), the loss-curve stride,
failed results (a failing torch.compile is a skipped result, not a crash) and --help.
The training itself needs PyTorch and a GPU: it is run on the device machine
(`--modes all`), not here.
"""
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "reports", "pytorch_transformer.py")
SUITE = os.path.join(ROOT, "suites", "transformer.yaml")
sys.path.insert(0, os.path.join(ROOT, "reports"))
import harness_report  # noqa: E402
import pytorch_transformer as pt  # noqa: E402

SEED = dict(pt.DEFAULTS)


def args_of(*argv):
    """pt.parse_args; (None, stderr) when argparse exits."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            return pt.parse_args(list(argv)), ""
        except SystemExit as e:
            assert e.code == 2, e.code
            return None, err.getvalue()


class Modes(unittest.TestCase):
    def test_all_modes_in_order_with_distinct_variants(self):
        self.assertEqual(pt.parse_modes("all"), ["fp32", "fp32-compile", "bf16", "bf16-compile"])
        variants = [pt.MODES[m][0] for m in pt.parse_modes("all")]
        self.assertEqual(variants, ["pytorch_eager", "pytorch_compile", "pytorch_bf16", "pytorch_bf16_compile"])

    def test_list_keeps_order_and_drops_repeats(self):
        self.assertEqual(pt.parse_modes("bf16-compile, fp32,bf16-compile"), ["bf16-compile", "fp32"])

    def test_unknown_and_empty_modes(self):
        with self.assertRaisesRegex(ValueError, "unknown mode 'fp16'"):
            pt.parse_modes("fp32,fp16")
        with self.assertRaisesRegex(ValueError, "no mode given"):
            pt.parse_modes(" , ")

    def test_precision_and_compile_flags_name_one_mode(self):
        self.assertEqual(args_of(SUITE, "--out", "x.json")[0].mode_list, ["fp32"])
        self.assertEqual(args_of(SUITE, "--out", "x.json", "--precision", "bf16")[0].mode_list, ["bf16"])
        self.assertEqual(args_of(SUITE, "--out", "x.json", "--compile")[0].mode_list, ["fp32-compile"])
        a = args_of(SUITE, "--out", "x.json", "--precision", "bf16", "--compile", "--compile-mode", "max-autotune")[0]
        self.assertEqual(a.mode_list, ["bf16-compile"])
        self.assertEqual(a.compile_mode, "max-autotune")

    def test_compile_modes_each_a_variant(self):
        self.assertEqual(pt.parse_compile_modes("all"), ["default", "reduce-overhead", "max-autotune-no-cudagraphs"])
        self.assertEqual(pt.parse_compile_modes("reduce-overhead, default,reduce-overhead"),
                         ["reduce-overhead", "default"])
        self.assertEqual([pt.variant_name("bf16-compile", m) for m in pt.parse_compile_modes("all")],
                         ["pytorch_bf16_compile", "pytorch_bf16_compile_reduce_overhead",
                          "pytorch_bf16_compile_max_autotune_no_cudagraphs"])
        self.assertEqual(pt.variant_name("fp32-compile", "max-autotune"), "pytorch_compile_max_autotune")
        self.assertEqual(pt.variant_name("bf16", "reduce-overhead"), "pytorch_bf16")  # eager: no compile mode
        a = args_of(SUITE, "--out", "x.json", "--modes", "bf16,bf16-compile", "--compile-modes", "all")[0]
        self.assertEqual(a.compile_mode_list, ["default", "reduce-overhead", "max-autotune-no-cudagraphs"])
        self.assertEqual(a.compile_timeout, 600.0)
        self.assertEqual(pt.runs_of(a.mode_list, a.compile_mode_list),
                         [("bf16", "default"), ("bf16-compile", "default"), ("bf16-compile", "reduce-overhead"),
                          ("bf16-compile", "max-autotune-no-cudagraphs")])
        a = args_of(SUITE, "--out", "x.json", "--compile", "--compile-mode", "reduce-overhead",
                    "--compile-timeout", "0")[0]
        self.assertEqual((a.compile_mode_list, a.compile_timeout), (["reduce-overhead"], 0.0))
        self.assertEqual(args_of(SUITE, "--out", "x.json")[0].compile_mode_list, ["default"])

    def test_bad_arguments_exit_2_with_the_reason(self):
        for argv, message in [
            (("--compile-modes", "default,fast"), "unknown compile mode 'fast'"),
            (("--compile-modes", "default", "--compile-mode", "default"), "not both"),
            (("--compile-timeout", "-1"), "--compile-timeout must be >= 0"),
            (("--compile-timeout", "nan"), "--compile-timeout must be >= 0"),
            (("--modes", "all", "--compile"), "--modes lists the modes"),
            (("--modes", "fp32,int8"), "unknown mode 'int8'"),
            (("--precision", "fp16"), "invalid choice: 'fp16'"),
            (("--compile-mode", "fastest"), "invalid choice: 'fastest'"),
            (("--steps", "0"), "--steps must be >= 1"),
            (("--warmup", "-1"), "--warmup must be >= 0"),
            (("--kernels", "-2"), "--kernels must be >= 0"),
            (("--params", "batch=8,tgt_len=20,seq_len=10"), "target length (20) > source length (10)"),
            (("--params", "batch=8,depth=3"), "unknown parameter 'depth'"),
            (("--params", "batch"), "'batch' is not k=v"),
        ]:
            a, err = args_of(SUITE, "--out", "x.json", *argv)
            self.assertIsNone(a, argv)
            self.assertIn(message, err, argv)

    def test_params_give_one_configuration(self):
        a = args_of(SUITE, "--out", "x.json", "--params", "batch=8,src_len=29,tgt_len=13", "--modes", "all")[0]
        self.assertEqual(len(a.configs), 1)
        case, p = a.configs[0]
        self.assertEqual((p["batch"], p["src_len"], p["tgt_len"], p["seq_len"]), (8, 29, 13, 13))
        self.assertEqual(pt.lengths(p), (29, 13))


class Lengths(unittest.TestCase):
    def test_zero_means_seq_len(self):
        self.assertEqual(pt.lengths(SEED), (13, 13))
        self.assertEqual(pt.lengths(dict(SEED, seq_len=64, tgt_len=48)), (64, 48))
        self.assertEqual(pt.lengths(dict(SEED, src_len=64, tgt_len=48)), (64, 48))
        with self.assertRaisesRegex(ValueError, r"target length \(14\) > source length \(13\)"):
            pt.lengths(dict(SEED, tgt_len=14))

    def test_flops_reduce_to_the_equal_length_count(self):
        # The count of the earlier (equal-length) script: every decoder GEMM on N tokens.
        B, N, E, F, V, L = 100, 13, 512, 2048, 6880, 6
        T = B * N
        gemm = L * 2 * T * (4 * E * E + 2 * E * F) + L * 2 * T * (8 * E * E + 2 * E * F) + 2 * T * E * V
        attn = L * 4 * B * N * N * E + L * 6 * B * N * N * E
        self.assertEqual(pt.work(SEED), 3.0 * gemm + 3.5 * attn)
        self.assertEqual(pt.work(dict(SEED, src_len=13, tgt_len=13)), pt.work(SEED))

    def test_flops_with_two_lengths(self):
        B, E, F, V, L, Ns, Nt = 100, 512, 2048, 6880, 6, 64, 48
        enc = L * 2 * B * Ns * (4 * E * E + 2 * E * F)
        dec = L * 2 * (B * Nt * (6 * E * E + 2 * E * F) + B * Ns * 2 * E * E)  # K, V of the memory: Ns tokens
        attn = L * 4 * B * Ns * Ns * E + L * (2 * B * Nt * Nt * E + 4 * B * Nt * Ns * E)
        want = 3.0 * (enc + dec + 2 * B * Nt * E * V) + 3.5 * attn
        self.assertEqual(pt.work(dict(SEED, src_len=64, tgt_len=48)), want)
        self.assertLess(pt.work(dict(SEED, src_len=64, tgt_len=48)), pt.work(dict(SEED, seq_len=64)))

    def test_result_names_write_values_as_the_harness(self):
        self.assertEqual(pt.result_name(SEED, "pytorch_bf16"),
                         "train_transformer/pytorch_bf16/batch:100/seq_len:13/encoder_layers:6/decoder_layers:6/"
                         "heads:8/d_model:512/hidden:2048/vocab:6880/activation:relu/lr:0.0002/warmup_steps:4/"
                         "schedule_steps:2000/clip_norm:1/check_steps:4/src_len:0/tgt_len:0/graph:false/world_size:1/"
                         "bucket_mb:25/grad_reduce:f32/baseline_steps:10/fused:true")

    @unittest.skipUnless(os.environ.get("HARNESS_EXE"), "HARNESS_EXE not set (ctest sets it)")
    def test_result_names_match_the_harness(self):
        # So that `harness compare` pairs a PyTorch result with the engine's of one case.
        text = subprocess.run([os.environ["HARNESS_EXE"], "run", SUITE, "--dry-run"], check=True,
                              capture_output=True, text=True).stdout
        for case, p in pt.parse_dry_run(text):
            line = next(x for x in text.splitlines() if x.split()[0] == case and "/cublas_flash/" in x)
            tail = re.search(r"train_transformer/cublas_flash(/\S+)", line).group(1)
            self.assertEqual(pt.result_name(dict(pt.DEFAULTS, **p), "pytorch_eager"),
                             "train_transformer/pytorch_eager" + tail)


class DryRun(unittest.TestCase):
    TEXT = (
        "seed                 train_transformer/cublas_flash/batch:100/seq_len:13/lr:0.0002/src_len:0/tgt_len:0  "
        "(suites/transformer.yaml:29:5)\n"
        "seed                 train_transformer/ours/batch:100/seq_len:13/lr:0.0002/src_len:0/tgt_len:0  (x:1:1)\n"
        "seed                 train_transformer/ours/batch:100/seq_len:13/lr:0.0002/src_len:0/tgt_len:0/graph:true  "
        "(x:1:1)\n"
        "unequal              train_transformer/ours/batch:100/seq_len:64/lr:0.0002/src_len:64/tgt_len:48  (x:2:1)\n"
        "smoke                row_sum/cpu/n:5  (x:3:1)\n"
        "3 results in 2 cases (dry run: nothing was executed)\n")

    def test_one_config_per_parameter_set_with_its_case(self):
        got = pt.parse_dry_run(self.TEXT)
        self.assertEqual([c for c, _ in got], ["seed", "unequal"])  # graph:true is the engine's only
        self.assertNotIn("graph", got[0][1])
        self.assertEqual(got[1][1], {"batch": 100, "seq_len": 64, "lr": 0.0002, "src_len": 64, "tgt_len": 48})

    @unittest.skipUnless(os.environ.get("HARNESS_EXE"), "HARNESS_EXE not set (ctest sets it)")
    def test_the_suite_through_the_harness(self):
        got = dict(pt.planned(os.environ["HARNESS_EXE"], SUITE, ""))
        self.assertEqual(sorted(got), ["b4-n2048", "long", "seed", "unequal"])
        self.assertEqual(pt.lengths(dict(pt.DEFAULTS, **got["unequal"])), (64, 48))
        self.assertEqual(pt.lengths(dict(pt.DEFAULTS, **got["seed"])), (13, 13))

    def test_suite_settings_by_case(self):
        try:
            import yaml  # noqa: F401
        except ImportError:
            self.skipTest("PyYAML not installed")
        s = pt.suite_settings(SUITE)
        self.assertEqual(s["seed"], (50, 200))
        self.assertEqual(s["long"], (3, 10))
        self.assertEqual(s["unequal"], (50, 200))


class DataSchedule(unittest.TestCase):
    """The engine's schedule (plugins/transformer: the checked run's check_steps steps on
    batch 0, then the trainer's step counter runs on over 4 batches), which PyTorch must
    follow for the loss curves to be compared."""

    def test_check_steps_on_batch_zero_then_the_engine_cycle(self):
        plan = pt.step_plan(4, 50, 200)
        self.assertEqual(len(plan), 4 + 50 + 200)  # the engine's curve: check + warm-up + timed
        self.assertEqual([b for _, b in plan[:10]], [0, 0, 0, 0, 0, 1, 2, 3, 0, 1])
        self.assertEqual([ph for ph, _ in plan[:6]], ["first", "check", "check", "check", "warmup", "warmup"])
        self.assertEqual([ph for ph, _ in plan].count("timed"), 200)
        self.assertEqual(plan[-1], ("timed", 253 % 4))
        for i, (_, b) in enumerate(plan[4:], start=4):
            self.assertEqual(b, i % 4, i)

    def test_without_check_steps_every_step_cycles(self):
        plan = pt.step_plan(0, 2, 2)
        self.assertEqual(plan, [("first", 0), ("warmup", 1), ("warmup", 2), ("timed", 3), ("timed", 0)])
        self.assertEqual([pt.batch_index(i, 2) for i in range(6)], [0, 0, 2, 3, 0, 1])

    def test_seed_argument(self):
        self.assertEqual(args_of(SUITE, "--out", "x.json")[0].seed, 42)
        self.assertEqual(args_of(SUITE, "--out", "x.json", "--seed", "7")[0].seed, 7)
        a, err = args_of(SUITE, "--out", "x.json", "--seed", "x")
        self.assertIsNone(a)
        self.assertIn("--seed", err)

    @unittest.skipUnless(os.environ.get("HARNESS_EXE"), "HARNESS_EXE not set (ctest sets it)")
    def test_the_suite_gives_the_check_steps(self):
        # Every configuration PyTorch runs carries the engine's check_steps (4 in the suite).
        for case, p in pt.planned(os.environ["HARNESS_EXE"], SUITE, ""):
            self.assertEqual(p.get("check_steps"), 4, case)
            self.assertEqual(pt.step_plan(p["check_steps"], 50, 200)[4], ("warmup", 0), case)


class Results(unittest.TestCase):
    def test_loss_curve_strides_as_the_plugin(self):
        self.assertEqual(pt.loss_curve(list(range(251))), (list(range(251)), 1))
        self.assertEqual(pt.loss_curve(list(range(2000)))[1], 1)
        curve, stride = pt.loss_curve(list(range(4001)))
        self.assertEqual(stride, 3)  # ceil(4001 / 2000)
        self.assertEqual(curve[:3], [0, 3, 6])
        self.assertLessEqual(len(curve), 2000)

    def test_passed_entry_carries_the_curve_and_compile_time(self):
        m = {"samples": [0.010, 0.012, 0.011], "phases": {"forward": 3.0, "backward": 6.0, "optimizer": 2.0,
                                                          "step": 11.0},
             "peak": 3 << 20, "base": 1 << 20, "losses": [9.0, 8.5, 8.0, 7.0, 6.0, 5.0], "parameters": 1000,
             "first_s": 42.011}
        p = dict(SEED, src_len=64, tgt_len=48)
        e = pt.passed_entry("unequal", p, "bf16-compile", m, 2, 3, "default")
        self.assertEqual(e["variant"], "pytorch_bf16_compile")
        self.assertTrue(e["name"].startswith("train_transformer/pytorch_bf16_compile/batch:100/"))
        self.assertIn("/src_len:64/tgt_len:48/", e["name"])
        x = e["extra"]
        self.assertEqual((x["precision"], x["compiled"], x["compile_mode"]), ("bf16", True, "default"))
        self.assertAlmostEqual(x["compile_s"], 42.0)  # first step minus the median step
        self.assertEqual(x["loss_curve"], m["losses"])
        self.assertEqual(x["loss_curve_stride"], 1)
        self.assertEqual((x["src_len"], x["tgt_len"]), (64, 48))
        self.assertEqual((x["check_steps"], x["seed"]), (4, 42))
        self.assertAlmostEqual(x["tokens_per_s"], 100 * 48 / 0.011)
        # MFU: the plugin's FLOPs / the mean step (phase_ms.step) / the peak; unknown without one.
        self.assertEqual(x["model_flops_per_step"], pt.work(p))
        self.assertIsNone(x["mfu"])
        self.assertIsNone(x["peak_tflops"])
        self.assertTrue(x["peak_source"].startswith("peak unknown"))
        tflops, source = harness_report.dense_bf16_peak(9, 0, 132, 1980000, "NVIDIA H200")
        peaked = pt.passed_entry("unequal", p, "bf16-compile", m, 2, 3, "reduce-overhead",
                                 peak={"peak_tflops": tflops, "peak_source": source})
        y = peaked["extra"]
        self.assertEqual(peaked["variant"], "pytorch_bf16_compile_reduce_overhead")
        self.assertEqual(y["compile_mode"], "reduce-overhead")
        self.assertAlmostEqual(y["peak_tflops"], 1070.53056)
        self.assertAlmostEqual(y["mfu"], pt.work(p) / 0.011 / 1070.53056e12)
        self.assertIn("132 SMs x 4096 FLOP/clk x 1980 MHz", y["peak_source"])
        self.assertIn("phase_ms.step", y["mfu_basis"])
        eager = pt.passed_entry("seed", SEED, "fp32", m, 2, 3, "default")
        self.assertIsNone(eager["extra"]["compile_s"])
        self.assertEqual(eager["variant"], "pytorch_eager")
        report = harness_report.finish({"results": [e, eager]})
        self.assertEqual(report["summary"]["passed"], 2)
        json.dumps(report)

    def test_kernel_breakdown_is_carried_with_totals(self):
        m = {"samples": [0.010], "phases": {"forward": 3.0, "backward": 6.0, "optimizer": 2.0, "step": 11.0},
             "peak": 3 << 20, "base": 1 << 20, "losses": [9.0, 8.0], "parameters": 1000, "first_s": 1.0,
             "kernels": [{"name": "gemm", "calls": 12.0, "time_s": 0.006},
                         {"name": "softmax", "calls": 3.0, "time_s": 0.002}]}
        x = pt.passed_entry("seed", SEED, "bf16", m, 0, 1, "default")["extra"]
        self.assertEqual([k["name"] for k in x["kernels"]], ["gemm", "softmax"])
        self.assertAlmostEqual(x["kernel_time_s_per_step"], 0.008)
        self.assertAlmostEqual(x["kernels_per_step"], 15.0)
        del m["kernels"]
        self.assertNotIn("kernels", pt.passed_entry("seed", SEED, "bf16", m, 0, 1, "default")["extra"])

    def test_a_failing_mode_is_a_result_not_a_crash(self):
        class Boom(RuntimeError):
            pass

        class FakeTorch:  # fails inside the mode, as a broken torch.compile would
            class cuda:
                class OutOfMemoryError(RuntimeError):
                    pass
                empty_cache = staticmethod(lambda: None)

            class _dynamo:
                resets = 0

                @classmethod
                def reset(cls):
                    cls.resets += 1

            nn = None

            def __init__(self, exc):
                self.exc = exc

            def manual_seed(self, seed):
                raise self.exc

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            comp = pt.run_mode(FakeTorch(Boom("inductor: no working C compiler\ndetails")), "seed", SEED,
                               "bf16-compile", 1, 2, "max-autotune")
            eager = pt.run_mode(FakeTorch(Boom("bad")), "seed", SEED, "fp32", 1, 2, "default")
            oom = pt.run_mode(FakeTorch(FakeTorch.cuda.OutOfMemoryError("CUDA out of memory")), "long", SEED,
                              "bf16", 1, 2, "default")
        self.assertEqual(comp["status"], "skipped")
        self.assertEqual(comp["reason"], "torch.compile (mode max-autotune) failed: Boom: inductor: no working C compiler")
        self.assertEqual(comp["variant"], "pytorch_bf16_compile_max_autotune")  # the compile mode in the name
        self.assertEqual(comp["extra"]["compile_mode"], "max-autotune")
        self.assertEqual(FakeTorch._dynamo.resets, 1)
        self.assertEqual((eager["status"], eager["reason"]), ("error", "Boom: bad"))
        self.assertEqual(oom["status"], "skipped")
        self.assertIn("out of memory", oom["reason"])
        self.assertIn("skipped: torch.compile (mode max-autotune) failed", out.getvalue())
        report = harness_report.finish({"results": [comp, eager, oom]})
        self.assertEqual((report["summary"]["skipped"], report["summary"]["error"]), (2, 1))


class CommandLine(unittest.TestCase):
    def test_help_needs_no_torch(self):
        r = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for word in ("--modes", "--precision", "--compile", "--compile-mode", "pytorch_bf16_compile", "tgt_len",
                     "--compile-modes", "--compile-timeout", "pytorch_bf16_compile_reduce_overhead", "MFU"):
            self.assertIn(word, r.stdout)

    def test_without_torch_it_says_so(self):
        try:
            import torch  # noqa: F401
            self.skipTest("PyTorch is installed here")
        except ImportError:
            pass
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, SCRIPT, SUITE, "--out", os.path.join(d, "r.json"), "--modes", "all"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("PyTorch is not installed", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "r.json")))


if __name__ == "__main__":
    unittest.main()
