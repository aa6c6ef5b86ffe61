// Python variants (issue 35) on the cpu backend, through the harness executable: pure-
// Python variants of `stream` (tests/data/python/stream_variants.py) are registered,
// checked, timed, journaled and reported like the C++ cpu variant beside them; a wrong
// result fails its check, an exception is its result's error (the traceback's last line,
// located) and the run goes on, supports() skips with its reason; every bad file is one
// located error, exit 2, before any work (tests/data/python/bad/).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "test_support.hpp"

namespace harness {
namespace {

using test::run_command;

constexpr const char* kVariants = "tests/data/python/stream_variants.py";
constexpr const char* kSuite = "tests/data/python/stream.yaml";

std::string harness_run(const std::string& args) { return std::string(HARNESS_EXE) + " run " + args; }

// `harness run ARGS --out <temp>`: the command's exit code and output, the report's
// results by name and the journal (both files removed).
struct HarnessRun {
  test::CommandResult command;
  std::map<std::string, nlohmann::json> results;
  std::string journal;
};
HarnessRun run_and_read(const std::string& args, const std::string& name, const std::string& env = "") {
  const std::string out = test::temp_path(name);
  HarnessRun run;
  run.command = run_command(env + harness_run(args + " --out " + out));
  if (const std::string text = test::read_file(out); !text.empty()) {
    const auto doc = nlohmann::json::parse(text);
    for (const auto& r : doc["results"]) run.results[r["name"].get<std::string>()] = r;
  }
  run.journal = test::read_file(out + ".journal.jsonl");
  test::remove_report(out);
  return run;
}

// tests/data/python/<stem>.yaml with the variants of <stem>_variants.py.
HarnessRun run_data(const std::string& stem) {
  const std::string dir = "tests/data/python/";
  return run_and_read(dir + stem + ".yaml --python " + dir + stem + "_variants.py", "python-" + stem + ".json");
}

class PythonVariants : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HARNESS_HAVE_PYTHON) GTEST_SKIP() << "this build has no Python (python3-dev not found by CMake)";
  }
};

TEST_F(PythonVariants, CheckedTimedAndReportedLikeACppVariant) {
  const HarnessRun run = run_and_read(std::string(kSuite) + " --python " + kVariants, "python-stream.json");
  const auto& r = run.command;
  const auto& results = run.results;
  EXPECT_EQ(r.exit_code, 1) << r.output;  // checks failed and variants errored, by design
  ASSERT_EQ(results.size(), 21u) << r.output;  // 3 ops x 7 variants: the run went on after every error

  // Passed, timed, with rates, beside the C++ cpu variant.
  for (const char* op : {"copy", "scale"}) {
    const auto& ok = results.at(std::string("stream/py_ok/op:") + op + "/n:257");
    EXPECT_EQ(ok["status"], "passed") << ok.dump();
    EXPECT_EQ(ok["backend"], "cpu");
    EXPECT_GT(ok["stats"]["median_s"].get<double>(), 0);
    EXPECT_EQ(results.at(std::string("stream/cpu/op:") + op + "/n:257")["status"], "passed");
  }
  // supports() returned a reason: skipped with it.
  const auto& skipped = results.at("stream/py_ok/op:triad/n:257");
  EXPECT_EQ(skipped["status"], "skipped");
  EXPECT_EQ(skipped["reason"], "op triad: copy and scale only");
  // A wrong result fails its check, named in the output, and is never timed.
  const auto& wrong = results.at("stream/py_wrong/op:copy/n:257");
  EXPECT_EQ(wrong["status"], "failed");
  EXPECT_NE(wrong["reason"].get<std::string>().find("check failed"), std::string::npos);
  EXPECT_NE(r.output.find("failed  stream/py_wrong op=copy n=257  check failed"), std::string::npos) << r.output;
  // An exception: the result's error is the traceback's last line, at the raising line.
  const auto& raised = results.at("stream/py_raises/op:scale/n:257");
  EXPECT_EQ(raised["status"], "error");
  EXPECT_EQ(raised["reason"], "tests/data/python/stream_variants.py:27: ValueError: planted failure at n=257");
  // Inputs are read-only memoryviews: writing one is an error, named.
  EXPECT_EQ(results.at("stream/py_writes_input/op:copy/n:257")["reason"],
            "tests/data/python/stream_variants.py:37: TypeError: cannot modify read-only memory");
  // An exception in supports() is that result's error too (not a skip).
  const auto& supports = results.at("stream/py_supports_raises/op:triad/n:257");
  EXPECT_EQ(supports["status"], "error");
  EXPECT_EQ(supports["reason"], "tests/data/python/stream_variants.py:40: KeyError: 'no_such_parameter'");
  // An output of its own (returned, never written into the harness's): the check names it.
  const auto& own = results.at("stream/py_own_output/op:copy/n:257");
  EXPECT_EQ(own["status"], "failed");
  EXPECT_NE(own["reason"].get<std::string>().find("257 unwritten"), std::string::npos) << own["reason"];
  // Journaled as they finished: a header line and one line per result.
  EXPECT_EQ(std::count(run.journal.begin(), run.journal.end(), '\n'), 22) << run.journal;
  EXPECT_NE(run.journal.find("stream/py_ok/op:copy/n:257"), std::string::npos);
}

// A suite that names its variants still runs the ones --python loaded, beside its own.
TEST_F(PythonVariants, LoadedVariantsJoinTheCasesOfTheirProblem) {
  const HarnessRun run = run_and_read("tests/data/python/stream_cpu_only.yaml --python tests/data/python/"
                                      "stream_variants.py --variants cpu,py_ok",
                                      "python-cpu-only.json");
  ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
  ASSERT_EQ(run.results.size(), 2u) << run.command.output;
  EXPECT_EQ(run.results.at("stream/cpu/op:copy/n:257")["status"], "passed");
  EXPECT_EQ(run.results.at("stream/py_ok/op:copy/n:257")["status"], "passed");
}

TEST_F(PythonVariants, ListSaysWhereTheyCameFrom) {
  const auto r = run_command(std::string(HARNESS_EXE) + " list variants --python " + kVariants);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("copy and scale in a Python loop  [constrained]  [from tests/data/python/stream_variants.py]"),
            std::string::npos) << r.output;
  // No constraint stated, none listed; the description given wins over the docstring.
  EXPECT_NE(r.output.find("writes 1.0 everywhere  [from tests/data/python/stream_variants.py]"), std::string::npos);
}

TEST_F(PythonVariants, IsolatedChildrenLoadTheSameFiles) {
  const HarnessRun run = run_and_read(std::string(kSuite) + " --python " + kVariants +
                               " --isolate --variants py_ok,py_raises --filter op:copy", "python-isolate.json");
  EXPECT_EQ(run.command.exit_code, 1) << run.command.output;
  EXPECT_EQ(run.results.at("stream/py_ok/op:copy/n:257")["status"], "passed");
  EXPECT_EQ(run.results.at("stream/py_raises/op:copy/n:257")["status"], "error");
}

TEST_F(PythonVariants, GoogleBenchmarkTimesThemToo) {
  const auto r = run_command(std::string(HARNESS_EXE) + " gbench " + kSuite + " --python " + kVariants +
                             " --variants py_ok --filter op:copy --benchmark_min_time=0.01");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stream/py_ok/op:copy/n:257"), std::string::npos) << r.output;
  // A suite that lists only its C++ variant: the loaded ones join it here too.
  const auto joined = run_command(std::string(HARNESS_EXE) +
                                  " gbench tests/data/python/stream_cpu_only.yaml --python " + kVariants +
                                  " --variants cpu,py_ok --benchmark_min_time=0.01");
  EXPECT_EQ(joined.exit_code, 0) << joined.output;
  EXPECT_NE(joined.output.find("stream/py_ok/op:copy/n:257"), std::string::npos) << joined.output;
  EXPECT_NE(joined.output.find("stream/cpu/op:copy/n:257"), std::string::npos) << joined.output;
}

// The journal's header names the --python files with their content's hash: --resume
// completes the run that wrote it, not one whose Python variants are others.
TEST_F(PythonVariants, ResumeRefusesOtherPythonFiles) {
  const std::string out = test::temp_path("python-resume.json");
  const std::string edited = test::temp_path("edited_variants.py");
  std::ofstream(edited) << test::read_file(kVariants) << "# edited\n";
  const std::string run = harness_run(std::string(kSuite) + " --variants py_ok --filter op:copy");
  ASSERT_EQ(run_command(run + " --python " + kVariants + " --out " + out).exit_code, 0);
  const std::string journal = out + ".journal.jsonl";
  auto r = run_command(run + " --python " + edited + " --resume " + journal);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, "harness: error: --resume " + journal + ": it was written by a run of " + kSuite + " with --python " +
                          kVariants + "; this run is " + kSuite + " with --python " + edited + "\n");
  r = run_command(run + " --python " + kVariants + " --resume " + journal);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::remove(edited.c_str());
  test::remove_report(out);
}

TEST_F(PythonVariants, TheExampleFromTheDocsPasses) {
  const HarnessRun run = run_and_read("examples/python/gemm_tiny.yaml --python examples/python/cpu_matmul.py", "python-example.json");
  EXPECT_EQ(run.command.exit_code, 0) << run.command.output;
  EXPECT_EQ(run.results.at("gemm/py_matmul/M:16/N:16/K:16/alpha:1/beta:0.5/dtype:f32/layout:nn")["status"], "passed");
  EXPECT_EQ(run.results.at("gemm/py_matmul/M:8/N:8/K:8/alpha:1/beta:0/dtype:f32/layout:tn")["reason"], "layout tn: nn only");
  // dtypes=["f32"]: other values of the problem's dtype parameter are skipped, saying why.
  EXPECT_EQ(run.results.at("gemm/py_matmul/M:8/N:8/K:8/alpha:1/beta:0/dtype:bf16/layout:nn")["reason"],
            "dtype bf16 is not one of this variant's dtypes (f32)");
}

// Runs `body` with the build's Python after putting the stand-in torch, harness.py and
// examples/python first on sys.path (then `import harness, <module>` works on the CPU
// machines); the command's exit code and output.
test::CommandResult with_stand_in_torch(const std::string& name, const std::string& body) {
  const std::string file = test::temp_path(name);
  std::ofstream(file) << "import sys, os; sys.path[:0] = ['tests/data/python/stand_in_torch', 'harness/src/python', "
                         "'examples/python']\n" << body;
  const auto r = run_command(std::string("\"") + HARNESS_PYTHON_PROGRAM + "\" " + file);
  std::remove(file.c_str());
  return r;
}

// The lines a script printed: has(line) expects `line` among them, whole.
struct PrintedLines {
  const std::string& out;
  void operator()(const std::string& line) const {
    EXPECT_NE(out.find(line + "\n"), std::string::npos) << line << "\n" << out;
  }
};

// examples/python/torch_sdpa.py needs PyTorch; here a stand-in torch
// (tests/data/python/stand_in_torch) lets it import, so its registration (both problems,
// three backends) and its static skip reasons are tested on the CPU machines. Its runs are
// tests/python_gpu_test.cpp's.
TEST_F(PythonVariants, TheSdpaReferencesRegisterWithAStandInTorch) {
  const std::string env = "PYTHONPATH=tests/data/python/stand_in_torch ";
  for (const char* problem : {"attention", "attention_backward"}) {
    const auto r = run_command(env + HARNESS_EXE + " list " + problem + " --python examples/python/torch_sdpa.py");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char* name : {"sdpa_flash ", "sdpa_cudnn ", "sdpa_efficient "})
      EXPECT_NE(r.output.find(std::string("    ") + name), std::string::npos) << problem << ": " << r.output;
    EXPECT_NE(r.output.find("[from examples/python/torch_sdpa.py]"), std::string::npos) << r.output;
  }
  // supports() of each variant, called as the harness calls it (a dict of the case's params).
  const auto r = with_stand_in_torch("sdpa_supports.py",
      "import harness, torch_sdpa\n"
      "base = dict(batch=1, heads=4, kv_heads=0, seq_len=999, head_dim=64, causal=False, scale=0.0, dtype='bf16')\n"
      "for r in harness._registered:\n"
      "    for change in (dict(), dict(head_dim=60), dict(head_dim=320), dict(heads=6, kv_heads=4),\n"
      "                   dict(deterministic=True)):\n"
      "        print(r['problem'], r['name'], r['dtypes'], sorted(change.items()), r['supports'](dict(base, **change)))\n");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
  const PrintedLines has{out};
  has("attention sdpa_flash ['bf16', 'f16'] [] None");  // PyTorch's own check is asked on a GPU only
  has("attention sdpa_efficient ['f32', 'bf16', 'f16'] [] None");
  has("attention_backward sdpa_cudnn ['bf16', 'f16'] [('head_dim', 60)] head_dim 60 is not a multiple of 8 "
      "(the public SDPA pads it; the backend's op does not)");
  has("attention sdpa_flash ['bf16', 'f16'] [('head_dim', 320)] FlashAttention-2 has head dims up to 256, not 320");
  has("attention sdpa_cudnn ['bf16', 'f16'] [('head_dim', 320)] None");
  has("attention sdpa_efficient ['f32', 'bf16', 'f16'] [('heads', 6), ('kv_heads', 4)] "
      "heads 6 is not a multiple of kv_heads 4");
  has("attention_backward sdpa_flash ['bf16', 'f16'] [('deterministic', True)] deterministic: not asked of PyTorch "
      "(torch.use_deterministic_algorithms is process-wide)");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 6 * 5) << out;
}

// examples/python/torch_distributed.py (torch.distributed as the nccl family's `torch`
// variants) with the stand-in torch: it registers on all six collectives, and its supports()
// gives the reasons a run shows (one rank; torch's in-place-only and out-of-place-only
// forms; less than an element per rank). Its runs are tests/python_gpu_test.cpp's.
TEST_F(PythonVariants, TheTorchDistributedVariantsRegisterWithAStandInTorch) {
  const std::string env = "PYTHONPATH=tests/data/python/stand_in_torch ";
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv"}) {
    const auto r = run_command(env + HARNESS_EXE + " list nccl_" + c + " --python examples/python/torch_distributed.py");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("    torch        cuda  torch.distributed's ") + c), std::string::npos) << r.output;
  }
  // The experiment beside it (tests/data/python/torch_distributed_ab.py) loads the example
  // and adds torch_set_stream and torch_timed on all_reduce.
  const auto ab = run_command(env + HARNESS_EXE + " list nccl_all_reduce --python tests/data/python/torch_distributed_ab.py");
  EXPECT_EQ(ab.exit_code, 0) << ab.output;
  EXPECT_NE(ab.output.find("    torch        cuda  torch.distributed's all_reduce"), std::string::npos) << ab.output;
  EXPECT_NE(ab.output.find("    torch_set_stream cuda  torch.distributed's all_reduce, the harness's stream set"),
            std::string::npos) << ab.output;
  EXPECT_NE(ab.output.find("    torch_timed  cuda  torch.distributed's all_reduce as `torch`, its host time per phase"),
            std::string::npos) << ab.output;
  const auto r = with_stand_in_torch("torch_distributed_supports.py",
      "import harness, torch_distributed\n"
      "for world in ('1', '2', '4'):\n"
      "    os.environ['WORLD_SIZE'] = world\n"
      "    for r in harness._registered:\n"
      "        for p in (dict(bytes=8, dtype='f32', in_place=True), dict(bytes=8, dtype='f32', in_place=False),\n"
      "                  dict(bytes=1024, dtype='bf16', in_place=False)):\n"
      "            print(world, r['problem'], sorted(p.items()), r['supports'](p))\n");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
  const PrintedLines has{out};
  const std::string f32_in = "[('bytes', 8), ('dtype', 'f32'), ('in_place', True)]";
  const std::string f32_out = "[('bytes', 8), ('dtype', 'f32'), ('in_place', False)]";
  const std::string bf16_out = "[('bytes', 1024), ('dtype', 'bf16'), ('in_place', False)]";
  has("1 nccl_all_reduce " + f32_in + " needs at least 2 ranks; WORLD_SIZE is not set above 1 (run `harness run "
      "--devices all` on a host with 2 or more GPUs, or set torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)");
  has("2 nccl_all_reduce " + f32_in + " None");
  has("2 nccl_all_reduce " + f32_out + " torch.distributed.all_reduce works in place only (the in_place: true rows)");
  has("2 nccl_broadcast " + f32_out + " torch.distributed.broadcast works in place only (the in_place: true rows)");
  has("2 nccl_alltoall " + f32_in + " torch.distributed.all_to_all_single has no in-place form");
  has("2 nccl_sendrecv " + f32_in + " torch.distributed.batch_isend_irecv has no in-place form");
  has("2 nccl_all_gather " + f32_out + " None");  // 2 f32 elements: one per rank
  has("4 nccl_all_gather " + f32_out + " 8 bytes is less than one element per rank at 4 ranks");
  has("4 nccl_sendrecv " + f32_out + " None");  // not split among the ranks
  has("4 nccl_reduce_scatter " + bf16_out + " None");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3 * 6 * 3) << out;
}

// The --devices launcher gives each worker torchrun's variables (RANK, WORLD_SIZE,
// LOCAL_RANK 0, MASTER_ADDR, MASTER_PORT) for torch.distributed's env:// rendezvous; a run without the
// launcher has none, and the same variant's check of them fails there.
TEST_F(PythonVariants, WorkersOfTheLauncherHaveTorchrunsVariables) {
  const std::string args = "tests/data/python/rank_env.yaml --python tests/data/python/rank_env_variants.py";
  const HarnessRun run = run_and_read(args + " --devices cpu:2", "python-rank-env.json");
  EXPECT_EQ(run.command.exit_code, 0) << run.command.output;
  for (const char* n : {"7", "9"})
    EXPECT_EQ(run.results.at(std::string("stream/py_rank_env/op:copy/n:") + n)["status"], "passed") << run.command.output;
  // Alone, with the variables cleared (a CI job may run inside torchrun).
  const HarnessRun alone = run_and_read(args, "python-rank-env-alone.json",
                                        "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u MASTER_ADDR -u MASTER_PORT ");
  EXPECT_NE(alone.results.at("stream/py_rank_env/op:copy/n:7")["reason"].get<std::string>().find(
                "torchrun variables not as the launcher sets them: {'RANK': None"),
            std::string::npos) << alone.command.output;
}

TEST_F(PythonVariants, AViewKeptPastItsBuffersIsReleased) {
  const HarnessRun run = run_data("keep_view");
  EXPECT_EQ(run.results.at("stream/py_keep/op:copy/n:3")["status"], "passed") << run.command.output;
  EXPECT_EQ(run.results.at("stream/py_keep/op:copy/n:5")["reason"],
            "tests/data/python/keep_view_variants.py:12: ValueError: operation forbidden on released memoryview object");
}

TEST_F(PythonVariants, TwoDimensionalViewsAndBf16Bits) {
  // softmax's (rows, cols) operands as 2-D memoryviews; bf16 elements as their 16 bits.
  const HarnessRun run = run_data("softmax");
  for (const char* dtype : {"f32", "bf16"})
    EXPECT_EQ(run.results.at(std::string("softmax/py_softmax/rows:5/cols:33/inputs:uniform/dtype:") + dtype)["status"],
              "passed") << run.command.output;
}

// Every bad file: exactly one line, located, exit 2, and nothing run or written.
TEST_F(PythonVariants, ABadFileIsOneLocatedErrorBeforeAnyWork) {
  const std::string dir = "tests/data/python/bad/";
  const std::map<std::string, std::string> expected = {
      {"syntax_error.py", "syntax_error.py:4: SyntaxError: expected ':'"},
      {"import_error.py", "import_error.py:2: ModuleNotFoundError: No module named 'no_such_module_for_harness_tests'"},
      {"raises.py", "raises.py:5: TypeError: unsupported operand type(s) for /: 'dict' and 'int'"},
      {"unknown_problem.py", "unknown_problem.py:4: unknown problem 'streem'; did you mean 'stream'?"},
      {"clash.py", "clash.py:4: variant 'stream/cpu' is already built in"},
      {"twice.py", "twice.py:9: variant 'stream/py_twice' is already registered by " + dir + "twice.py"},
      {"bad_backend.py", "bad_backend.py:4: ValueError: backend must be 'cpu' or 'cuda', not 'gpu'"},
      {"bad_dtype.py", "bad_dtype.py:4: 'f31' is not a dtype of problem 'softmax' (one of {f32, bf16}); did you mean 'f32'?"},
      {"no_dtype_parameter.py", "no_dtype_parameter.py:4: problem 'stream' has no dtype parameter; leave out dtypes= "
                                "(supports= can check any parameter)"},
  };
  for (const auto& [file, message] : expected) {
    const HarnessRun run = run_and_read(std::string(kSuite) + " --python " + dir + file, "python-bad.json");
    EXPECT_EQ(run.command.exit_code, 2) << file << ": " << run.command.output;
    EXPECT_EQ(run.command.output, "harness: error: " + dir + message + "\n") << file;
    EXPECT_TRUE(run.results.empty() && run.journal.empty()) << file << ": a report or journal was written";
  }
}

TEST_F(PythonVariants, ANameFromAnotherFileClashesToo) {
  // The same file twice: its second run registers names the first already has.
  const auto r = run_command(std::string(HARNESS_EXE) + " list --python " + kVariants + " --python tests/data/python/./stream_variants.py");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("harness: error: tests/data/python/./stream_variants.py:10: variant 'stream/py_ok' is already "
                          "registered by tests/data/python/stream_variants.py"),
            std::string::npos) << r.output;
}

// A virtual environment is a folder with bin/python3 (a link to its base interpreter) and
// pyvenv.cfg naming the base's folder: the harness started as that program uses the venv
// (its site-packages: PyTorch on the GPU machine), as `python3` of the venv would.
TEST_F(PythonVariants, HarnessPythonPicksAVirtualEnvironment) {
  namespace fs = std::filesystem;
  const fs::path venv = test::temp_path("venv");
  fs::create_directories(venv / "bin");
  const fs::path base = HARNESS_PYTHON_PROGRAM;
  fs::create_symlink(base, venv / "bin" / "python3");
  std::ofstream(venv / "pyvenv.cfg") << "home = " << base.parent_path().string() << "\ninclude-system-site-packages = false\n";
  const std::string list = std::string(HARNESS_EXE) + " list problems --python tests/data/python/print_prefix.py";
  const auto r = run_command("HARNESS_PYTHON=" + (venv / "bin" / "python3").string() + " " + list);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sys.prefix=" + venv.string() + "\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("harness: warning: tests/data/python/print_prefix.py: declares no variant"), std::string::npos);
  // Without it, the interpreter CMake built against.
  const auto plain = run_command("env -u HARNESS_PYTHON " + list);
  EXPECT_EQ(plain.output.find("sys.prefix=" + venv.string()), std::string::npos) << plain.output;
  fs::remove_all(venv);
}

TEST(PythonBuild, WithoutPythonTheOptionIsRefusedInOneLine) {
  if (HARNESS_HAVE_PYTHON) GTEST_SKIP() << "this build embeds Python (the stub is built with -DHARNESS_PYTHON=OFF)";
  const auto r = run_command(harness_run(std::string(kSuite) + " --python " + kVariants));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("harness: error: --python: this harness was built without Python", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

}  // namespace
}  // namespace harness
