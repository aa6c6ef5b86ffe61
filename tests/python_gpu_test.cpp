// Python variants (issue 35) on the cuda backend: PyTorch variants of `stream`
// (tests/data/python/torch_variants.py) wrap the harness's device buffers through
// __cuda_array_interface__ and through DLPack (torch.from_dlpack, two operands taken on
// another stream) and launch on its stream; they are checked and timed beside the C++ cuda
// variant. PyTorch SDPA's backends (examples/python/torch_sdpa.py, issue 35 item
// 3) as variants of attention and attention_backward beside the C++ flash variant. Skips
// without a GPU, without Python in the build, or without PyTorch (with CUDA) in the
// interpreter the harness was built against.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace harness
