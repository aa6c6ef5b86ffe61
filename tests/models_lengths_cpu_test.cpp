// Unequal source and target lengths (issue 18), host side: the train_transformer
// problem's src_len / tgt_len parameters (0: seq_len), the rejection of a target longer
// than the source (also through the CLI), the step's FLOPs with two lengths, TrainConfig's
// length resolution, and the suite's `unequal` case.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "harness/registry.hpp"
#include "models/trainer.hpp"
#include "test_support.hpp"

namespace {

const harness::Problem& problem() {
  const auto* p = harness::Registry::instance().find_problem("train_transformer");
  if (!p) throw std::runtime_error("train_transformer is not registered");
  return *p;
}

harness::Params seed_params() { return harness::with_defaults(problem().params(), {}); }

// The step's FLOPs restated term by term: encoder on Ns tokens, decoder on Nt tokens
// except the cross-attention's K and V projections (on the Ns memory tokens), attention
// cores Ns^2 (encoder), Nt^2 / 2 (causal decoder self-attention), Nt*Ns (cross).
double expected_flops(double B, double Ns, double Nt) {
  const double E = 512, F = 2048, V = 6880, L = 6;
  const double enc_gemm = L * 2 * B * Ns * (4 * E * E + 2 * E * F);
  const double dec_gemm = L * 2 * (B * Nt * (4 * E * E) + B * Nt * (2 * E * E) + B * Ns * (2 * E * E) + B * Nt * 2 * E * F);
  const double gen = 2 * B * Nt * E * V;
  const double attn = L * 4 * B * Ns * Ns * E + L * (0.5 * 4 * B * Nt * Nt * E + 4 * B * Nt * Ns * E);
  return 3 * (enc_gemm + dec_gemm + gen) + 3.5 * attn;
}

TEST(ModelsLengthsCpu, LengthParametersDefaultToSeqLen) {
  const auto p = seed_params();
  EXPECT_EQ(p.get_int("src_len"), 0);
  EXPECT_EQ(p.get_int("tgt_len"), 0);
  harness::Params same = p;
  same.set("src_len", std::int64_t{13});
  same.set("tgt_len", std::int64_t{13});
  EXPECT_DOUBLE_EQ(problem().work(same).flops, problem().work(p).flops);
  EXPECT_DOUBLE_EQ(problem().work(p).flops, expected_flops(100, 13, 13));
  EXPECT_EQ(problem().reference_variant(p), "cublas_flash");
}

TEST(ModelsLengthsCpu, FlopsCountSourceAndTargetSeparately) {
  harness::Params p = seed_params();
  p.set("seq_len", std::int64_t{64});
  p.set("tgt_len", std::int64_t{48});  // src_len 0: seq_len = 64
  EXPECT_DOUBLE_EQ(problem().work(p).flops, expected_flops(100, 64, 48));
  harness::Params q = seed_params();
  q.set("src_len", std::int64_t{64});
  q.set("tgt_len", std::int64_t{48});  // seq_len 13 unused
  EXPECT_DOUBLE_EQ(problem().work(q).flops, expected_flops(100, 64, 48));
  EXPECT_FALSE(problem().reject(q).has_value());
}

TEST(ModelsLengthsCpu, TargetLongerThanSourceIsRejected) {
  harness::Params p = seed_params();
  p.set("src_len", std::int64_t{48});
  p.set("tgt_len", std::int64_t{64});
  EXPECT_EQ(problem().reject(p).value_or(""),
            "target length (64) > source length (48): the copy task's target is a prefix of the source");
  harness::Params q = seed_params();  // seq_len 13 for the source
  q.set("tgt_len", std::int64_t{14});
  EXPECT_NE(problem().reject(q).value_or("").find("target length (14) > source length (13)"), std::string::npos);
}

TEST(ModelsLengthsCpu, TrainConfigResolvesLengths) {
  models::TrainConfig c;
  c.seq_len = 20;
  EXPECT_EQ(c.source_length(), 20);
  EXPECT_EQ(c.target_length(), 20);
  c.src_len = 64;
  EXPECT_EQ(c.source_length(), 64);
  EXPECT_EQ(c.target_length(), 20);
  c.tgt_len = 48;
  EXPECT_EQ(c.target_length(), 48);
}

TEST(ModelsLengthsCpu, SuiteHasTheUnequalCase) {
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " HARNESS_SOURCE_DIR
                                            "/suites/transformer.yaml --dry-run --filter tgt_len:48");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* v : {"cublas_flash", "ours", "naive_attention", "ours_bf16", "cublas_bf16"})
    EXPECT_NE(r.output.find(std::string("unequal              train_transformer/") + v +
                            "/batch:100/seq_len:64/encoder_layers:6/decoder_layers:6/heads:8/d_model:512/"
                            "hidden:2048/vocab:6880/activation:relu/lr:0.0002/warmup_steps:4/schedule_steps:2000/"
                            "clip_norm:1/check_steps:4/src_len:64/tgt_len:48"),
              std::string::npos)
        << r.output;
  EXPECT_NE(r.output.find("5 results in "), std::string::npos) << r.output;  // (of every case of the suite)
}

TEST(ModelsLengthsCpu, CliRejectsTargetLongerThanSource) {
  const std::string suite = harness::test::temp_path("lengths_bad.yaml");
  std::ofstream(suite) << "suite: lengths_bad\ncases:\n  - problem: train_transformer\n    params: {seq_len: 8, tgt_len: 9}\n";
  const auto r = harness::test::run_command(std::string(HARNESS_EXE) + " run " + suite + " --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // bad input: nothing was run
  EXPECT_NE(r.output.find("target length (9) > source length (8)"), std::string::npos) << r.output;
}

}  // namespace
