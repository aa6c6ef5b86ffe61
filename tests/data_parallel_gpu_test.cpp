// Data-parallel training on GPUs (label gpu): the engine's leaf-gradient hook (one GPU),
// then train_transformer at world_size 2 through `harness run --devices all` (needs 2
// GPUs: identical weights checked on both ranks, tokens/s and the scaling efficiency in
// the merged result), a world_size the job does not have (a skip with the reason), and a
// rank missing at start (a clear error within the NCCL deadline, no hang).
#include <cstdio>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/context.hpp"
#include "models/ops.hpp"
#include "models/tensor.hpp"
#include "test_support.hpp"

namespace {

using harness::test::gpu_count;
using harness::test::run_command;
const std::string kExe = HARNESS_EXE;

// A leaf used twice by one node and once more by another is reported once, after its
// last accumulation; a leaf no gradient reaches is reported too, with no gradient.
TEST(LeafGradHookGpu, EachLeafOnceWhenItsGradientIsFinal) {
  if (!harness::test::have_device()) GTEST_SKIP() << "no CUDA device";
  models::Context context;
  models::ContextScope scope(context);
  models::Tensor x = models::Tensor::from_host(std::vector<float>{1, 2, 3, 4}, {4}).set_requires_grad(true);
  models::Tensor w = models::Tensor::from_host(std::vector<float>{5, 6, 7, 8}, {4}).set_requires_grad(true);
  models::Tensor y = models::add(models::add(x, x), models::add(x, w));  // dy/dx = 3, dy/dw = 1
  models::Tensor target = models::Tensor::from_host(std::vector<float>{0, 0, 0, 0}, {4});
  models::Tensor loss = models::mse_loss(y, target);
  std::map<const models::TensorImpl*, int> calls;
  std::map<const models::TensorImpl*, models::Tensor> at_call;
  {
    models::LeafGradHook hook([&](const models::Tensor& leaf) {
      ++calls[leaf.impl()];
      at_call[leaf.impl()] = models::clone(leaf.grad());  // the value at the call, in stream order
    });
    models::backward(loss);
  }
  EXPECT_EQ(calls[x.impl()], 1);
  EXPECT_EQ(calls[w.impl()], 1);
  EXPECT_EQ(calls.size(), 2u);
  EXPECT_EQ(at_call[x.impl()].to_host(), x.grad().to_host());
  EXPECT_EQ(at_call[w.impl()].to_host(), w.grad().to_host());
  // y = 3x + w: d(mean (y)^2)/dx = 2 y * 3 / 4.
  const auto gx = x.grad().to_host();
  const std::vector<double> yv = {8, 12, 16, 20};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(gx[static_cast<std::size_t>(i)], 2 * yv[static_cast<std::size_t>(i)] * 3 / 4, 1e-4);
}

// The tiny model at `world_sizes`; with bf16_exchange, a second case at world_size 2 with
// the gradients exchanged in bf16 (grad_reduce: bf16).
std::string write_suite(const std::string& name, const std::string& world_sizes, bool bf16_exchange = false) {
  const std::string path = harness::test::temp_path(name);
  std::ofstream(path) << "suite: ddp-test\n"
                         "settings: {warmup: 2, stopping: {rule: samples, samples: 8}, max_time: 60, cache: hot}\n"
                         "cases:\n"
                         "  - name: tiny\n"
                         "    problem: train_transformer\n"
                         "    params: {batch: 3, seq_len: 37, encoder_layers: 1, decoder_layers: 2, heads: 2, d_model: 64,\n"
                         "             hidden: 96, vocab: 61, bucket_mb: 1, baseline_steps: 3, world_size: "
                      << world_sizes << "}\n    variants: [cublas_flash]\n"
                      << (bf16_exchange ? "  - name: tiny_bf16_exchange\n"
                                          "    problem: train_transformer\n"
                                          "    params: {batch: 3, seq_len: 37, encoder_layers: 1, decoder_layers: 2, heads: 2,\n"
                                          "             d_model: 64, hidden: 96, vocab: 61, bucket_mb: 1, baseline_steps: 3,\n"
                                          "             world_size: 2, grad_reduce: bf16}\n"
                                          "    variants: [cublas_flash]\n"
                                        : "");
  return path;
}

TEST(DataParallelGpu, TwoRanksKeepIdenticalWeightsAndReportTheScaling) {
  const int n = gpu_count();
  if (n < 2) GTEST_SKIP() << "needs 2 GPUs for two ranks (found " << n << ")";
  const std::string suite = write_suite("ddp.yaml", "[1, 2, 4]", true);
  const std::string out = harness::test::temp_path("ddp.json");
  const auto r = run_command("NCCL_NVLS_ENABLE=0 HARNESS_NCCL_TIMEOUT=60 " + kExe + " run " + suite +
                             " --devices 0,1 --no-profile --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(harness::test::read_file(out));
  int seen = 0;
  for (const auto& res : report["results"]) {
    const std::string name = res["name"];
    const int world = res["params"]["world_size"].is_number() ? res["params"]["world_size"].get<int>()
                                                               : std::stoi(res["params"]["world_size"].get<std::string>());
    if (world == 4) {  // a job of 2 ranks
      EXPECT_EQ(res["status"], "skipped") << name;
      EXPECT_NE(res["reason"].get<std::string>().find("world_size 4 needs a job of 4 ranks"), std::string::npos)
          << res["reason"];
      ++seen;
      continue;
    }
    ASSERT_EQ(res["status"], "passed") << name << ": " << res["reason"];
    const auto& x = res["extra"];
    EXPECT_GT(x["tokens_per_s"].get<double>(), 0) << name;
    if (world == 2) {
      EXPECT_EQ(res["device"], "cuda:0,cuda:1") << name;
      const auto& dp = x["data_parallel"];
      EXPECT_GE(dp["weight_checks"].get<int>(), 6) << dp.dump();  // build + 4 check steps + after timing
      EXPECT_TRUE(dp["weights_identical"].get<bool>());
      const bool bf16_exchange = name.find("/grad_reduce:bf16/") != std::string::npos;
      EXPECT_EQ(dp["grad_reduce"], bf16_exchange ? "bf16" : "f32") << name;
      EXPECT_GT(dp["tokens_per_s_one_gpu"].get<double>(), 0);
      EXPECT_GT(dp["scaling_efficiency"].get<double>(), 0.05);
      EXPECT_LT(dp["scaling_efficiency"].get<double>(), 2.0);
      EXPECT_NEAR(x["tokens_per_s"].get<double>(), 2 * x["tokens_per_s_per_gpu"].get<double>(), 1e-6 * x["tokens_per_s"].get<double>());
      EXPECT_EQ(x["ranks"].size(), 2u);
      // The exchange's exposed part: part of the backward phase.
      ASSERT_TRUE(x["phase_ms"].contains("exchange_wait")) << x["phase_ms"].dump();
      EXPECT_GE(x["phase_ms"]["exchange_wait"].get<double>(), 0.0);
      EXPECT_LE(x["phase_ms"]["exchange_wait"].get<double>(), x["phase_ms"]["backward"].get<double>());
    } else {
      EXPECT_FALSE(x["phase_ms"].contains("exchange_wait")) << x["phase_ms"].dump();
    }
    ++seen;
  }
  EXPECT_EQ(seen, 4);
  harness::test::remove_report(out);
  std::remove(suite.c_str());
}

TEST(DataParallelGpu, AMissingRankIsAClearErrorWithinTheDeadline) {
  if (gpu_count() < 1) GTEST_SKIP() << "no CUDA device";
  // Rank 0 of 2 with no rank 1: the communicator never completes.
  const std::string suite = write_suite("ddp-missing.yaml", "2");
  const std::string out = harness::test::temp_path("ddp-missing.json");
  const std::string id = harness::test::temp_path("ddp-nccl-id");
  const auto [r, seconds] = harness::test::run_rank0_without_rank1(kExe + " run " + suite + " --no-profile --out " + out, id);
  EXPECT_LT(seconds, 90);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("a rank is missing"), std::string::npos) << r.output;
  harness::test::remove_report(out);
  std::remove(suite.c_str());
  std::remove(id.c_str());
}

}  // namespace
