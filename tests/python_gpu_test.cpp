// Python variants (issue 35) on the cuda backend: PyTorch variants of `stream`
// (tests/data/python/torch_variants.py) wrap the harness's device buffers through
// __cuda_array_interface__ and through DLPack (torch.from_dlpack, two operands taken on
// another stream) and launch on its stream; they are checked and timed beside the C++ cuda
// variant. PyTorch SDPA's backends (examples/python/torch_sdpa.py, issue 35 item
// 3) as variants of attention and attention_backward beside the C++ flash variant.
// torch.distributed (examples/python/torch_distributed.py) as the nccl family's `torch`
// variants on every GPU (2 or more) beside the harness's NCCL calls. Skips
// without a GPU, without Python in the build, or without PyTorch (with CUDA) in the
// interpreter the harness was built against.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "test_support.hpp"

namespace harness {
namespace {

// Why this machine cannot run a PyTorch variant, or "" where it can.
std::string no_torch() {
  if (!test::have_device()) return "no CUDA device";
  if (!HARNESS_HAVE_PYTHON) return "this build has no Python";
  const auto torch = test::run_command(std::string("\"") + HARNESS_PYTHON_PROGRAM +
                                       "\" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'");
  if (torch.exit_code != 0) return "no PyTorch with CUDA in " + std::string(HARNESS_PYTHON_PROGRAM) + ": " + torch.output;
  return "";
}

TEST(PythonGpu, ATorchVariantPassesBesideTheCudaVariant) {
  if (const std::string why = no_torch(); !why.empty()) GTEST_SKIP() << why;

  const std::string out = test::temp_path("python-torch.json");
  const auto r = test::run_command(std::string(HARNESS_EXE) + " run tests/data/python/torch_stream.yaml --python "
                                   "tests/data/python/torch_variants.py --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int passed = 0;
  const auto report = nlohmann::json::parse(test::read_file(out));  // alive for the loop
  for (const auto& result : report["results"]) {
    if (result["variant"] != "py_torch" && result["variant"] != "py_torch_dlpack") continue;
    if (result["params"]["op"] == "triad") {
      EXPECT_EQ(result["status"], "skipped") << result.dump();
      continue;
    }
    EXPECT_EQ(result["status"], "passed") << result["name"] << ": " << result.value("reason", "");
    passed += result["status"] == "passed";
  }
  EXPECT_EQ(passed, 12) << r.output;  // copy, scale, add at two sizes, for each of the two
  test::remove_report(out);
}

// Each SDPA backend passes its check (O and LSE forward; dQ, dK, dV backward) or is
// skipped with a reason (its dtypes, or PyTorch's own check for it); never an error. The
// flash backend (FlashAttention-2) takes every bf16 case here, so it must pass them.
TEST(PythonGpu, SdpaBackendsPassOrSkipWithAReasonBesideFlash) {
  if (const std::string why = no_torch(); !why.empty()) GTEST_SKIP() << why;
  const std::string out = test::temp_path("python-torch-sdpa.json");
  const auto r = test::run_command(std::string(HARNESS_EXE) + " run tests/data/python/torch_sdpa.yaml --python "
                                   "examples/python/torch_sdpa.py --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int sdpa = 0, flash_bf16 = 0;
  const auto report = nlohmann::json::parse(test::read_file(out));  // alive for the loop
  for (const auto& result : report["results"]) {
    const std::string variant = result["variant"], status = result["status"], name = result["name"];
    const std::string reason = result.value("reason", "");
    if (variant == "flash") {
      EXPECT_EQ(status, "passed") << name << ": " << reason;
      continue;
    }
    ++sdpa;
    const bool bf16 = result["params"]["dtype"] == "bf16";
    if (variant == "sdpa_flash" && bf16) {
      EXPECT_EQ(status, "passed") << name << ": " << reason;
      flash_bf16 += status == "passed";
      continue;
    }
    EXPECT_TRUE(status == "passed" || (status == "skipped" && !reason.empty())) << name << ": " << status << ": " << reason;
    if (variant != "sdpa_efficient" && !bf16) {
      EXPECT_EQ(status, "skipped") << name;  // f32: dtypes=
    }
  }
  EXPECT_EQ(sdpa, 2 * 7 * 3) << r.output;  // 2 problems x 7 shapes x 3 backends
  EXPECT_EQ(flash_bf16, 2 * 5);
  test::remove_report(out);
}

// Every collective of torch.distributed on every GPU (`--devices all`: one worker per GPU,
// torchrun's variables from the launcher), checked against the same expected output as
// the `nccl` variant and merged over the ranks the same way; the forms torch lacks (in place
// or not) skip with the reason.
TEST(PythonGpu, TorchDistributedCollectivesPassBesideNccl) {
  if (const std::string why = no_torch(); !why.empty()) GTEST_SKIP() << why;
  const int n = test::gpu_count();
  if (n < 2) GTEST_SKIP() << "needs 2 or more GPUs (found " << n << ")";
  const std::string out = test::temp_path("python-torch-nccl.json");
  const auto r = test::run_command("NCCL_NVLS_ENABLE=0 " + std::string(HARNESS_EXE) +
                                   " run suites/nccl.yaml --devices all --python examples/python/torch_distributed.py "
                                   "--variants nccl,torch --filter 'bytes:(8|4096|2097152)/' --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(test::read_file(out));
  std::set<std::string> passed;
  int torch_results = 0, nccl_results = 0;
  for (const auto& res : report["results"]) {
    const std::string name = res["name"], status = res["status"], reason = res.value("reason", "");
    nccl_results += res["variant"] == "nccl";
    if (res["variant"] != "torch") continue;
    ++torch_results;
    if (status == "skipped") {
      const bool torch_form = reason.find("in place only") != std::string::npos ||
                              reason.find("has no in-place form") != std::string::npos;
      EXPECT_TRUE(torch_form || reason.find("less than one element per rank") != std::string::npos) << name << ": " << reason;
      continue;
    }
    ASSERT_EQ(status, "passed") << name << ": " << reason << "\n" << r.output;
    const auto& x = res["extra"];
    EXPECT_EQ(x["ranks"].size(), static_cast<std::size_t>(n)) << name;
    EXPECT_GT(x["busbw_gbps"].get<double>(), 0) << name;
    passed.insert(x["collective"].get<std::string>());
  }
  EXPECT_EQ(torch_results, nccl_results) << r.output;  // a torch result beside every nccl one
  EXPECT_GE(torch_results, 6 * 3 * 2) << r.output;     // collectives x sizes x dtypes (x in_place where it exists)
  EXPECT_EQ(passed.size(), 6u) << r.output;            // each collective in the form torch has
  test::remove_report(out);
}

}  // namespace
}  // namespace harness
