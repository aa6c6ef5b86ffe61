// Python variants (issue 35) on the cuda backend: a PyTorch variant of `stream`
// (tests/data/python/torch_variants.py) wraps the harness's device buffers through
// __cuda_array_interface__ and launches on its stream; it is checked and timed beside the
// C++ cuda variant. Skips without a GPU, without Python in the build, or without PyTorch
// (with CUDA) in the interpreter the harness was built against.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "test_support.hpp"

namespace harness {
namespace {

TEST(PythonGpu, ATorchVariantPassesBesideTheCudaVariant) {
  if (!test::have_device()) GTEST_SKIP() << "no CUDA device";
  if (!HARNESS_HAVE_PYTHON) GTEST_SKIP() << "this build has no Python";
  const auto torch = test::run_command(std::string("\"") + HARNESS_PYTHON_PROGRAM +
                                       "\" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'");
  if (torch.exit_code != 0) GTEST_SKIP() << "no PyTorch with CUDA in " << HARNESS_PYTHON_PROGRAM << ": " << torch.output;

  const std::string out = test::temp_path("python-torch.json");
  const auto r = test::run_command(std::string(HARNESS_EXE) + " run tests/data/python/torch_stream.yaml --python "
                                   "tests/data/python/torch_variants.py --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int passed = 0;
  const auto report = nlohmann::json::parse(test::read_file(out));  // alive for the loop
  for (const auto& result : report["results"]) {
    if (result["variant"] != "py_torch") continue;
    if (result["params"]["op"] == "triad") {
      EXPECT_EQ(result["status"], "skipped") << result.dump();
      continue;
    }
    EXPECT_EQ(result["status"], "passed") << result["name"] << ": " << result.value("reason", "");
    passed += result["status"] == "passed";
  }
  EXPECT_EQ(passed, 6) << r.output;
  test::remove_report(out);
}

}  // namespace
}  // namespace harness
