#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

#include "harness/error.hpp"

#include <gtest/gtest.h>

#include "harness/check.hpp"
#include "harness/operands.hpp"

namespace harness {
namespace {

std::vector<Output> one(std::vector<float> v) { return {{"out", std::move(v)}}; }

TEST(Check, IdenticalOutputsPass) {
  const auto r = compare_outputs(one({1, 2, 3}), one({1, 2, 3}), {0, 0});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.elements, 3u);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 0);
}

TEST(Check, PoisonedElementsAreUnwrittenAndFail) {
  std::vector<float> got = {1, 2, 3, 4};
  poison_host(std::span<float>(got).subspan(2));
  EXPECT_TRUE(is_poison(got[3]));
  const auto r = compare_outputs(one(got), one({1, 2, 3, 4}), {1e9, 1e9});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.unwritten, 2u);
  EXPECT_NE(r.summary().find("2 unwritten"), std::string::npos);
}

TEST(Check, NanAndInfFailEvenWithHugeTolerance) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto r = compare_outputs(one({nan, inf, 1}), one({1, 1, 1}), {1e30, 1e30});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite, 2u);
  EXPECT_EQ(r.unwritten, 0u);  // an arithmetic NaN is not the poison pattern
}

TEST(Check, ToleranceIsAbsPlusRelTimesReference) {
  // |1.1 - 1| = 0.1 <= 0.05 + 0.1 * 1  passes; |110 - 100| = 10 > 0.05 + 0.05*100 fails.
  EXPECT_TRUE(compare_outputs(one({1.1f}), one({1.0f}), {0.05, 0.1}).passed);
  const auto r = compare_outputs(one({110.0f}), one({100.0f}), {0.05, 0.05});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_NEAR(r.max_abs_error, 10, 1e-9);
  EXPECT_NEAR(r.rel_l2_error, 0.1, 1e-9);
  EXPECT_NE(r.worst.find("out[0]"), std::string::npos);
}

TEST(Check, RelL2BoundsEachOutputOnItsOwn) {
  // Every element within the loose element bound (abs 1), but O is off by 10% in L2:
  // ||(0.1, 0.1)|| / ||(1, 1)|| = 0.1.
  Output o{"O", {1.1f, 0.9f}}, ref_o{"O", {1.0f, 1.0f}};
  EXPECT_TRUE(compare_outputs({o}, {ref_o}, {1, 0, 0.11}).passed);
  auto r = compare_outputs({o}, {ref_o}, {1, 0, 0.05});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.l2_failures, 1u);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_NE(r.worst.find("O: rel L2 err 0.1 > 0.05"), std::string::npos) << r.worst;
  EXPECT_NE(r.summary().find("1 output(s) over their rel L2 bound"), std::string::npos) << r.summary();
  // Per output: a large exact output beside it does not dilute O's error (together the
  // ratio would be ~1e-4), and an output whose own tolerance has no rel_l2 is not held to it.
  Output big{"LSE", {1000.0f, 1000.0f}}, ref_big{"LSE", {1000.0f, 1000.0f}};
  r = compare_outputs({o, big}, {ref_o, ref_big}, {1, 0, 0.05});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.l2_failures, 1u);
  o.tolerance = Tolerance{1, 0};
  EXPECT_TRUE(compare_outputs({o, big}, {ref_o, ref_big}, {1, 0, 0.05}).passed);
}

TEST(Check, MissingOutputFails) {
  const auto r = compare_outputs({{"other", {1}}}, one({1}), {0, 0});
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.worst.find("missing"), std::string::npos);
}


template <class T>
Output typed(std::vector<T> v) {
  return Output::of<T>("out", std::span<const T>(v));
}

TEST(CheckDtypes, IntegersAreExactWhateverTheTolerance) {
  auto r = compare_outputs({typed<std::int32_t>({1, -7, 3})}, {typed<std::int32_t>({1, -7, 3})}, {1e9, 1});
  EXPECT_TRUE(r.passed) << r.summary();
  r = compare_outputs({typed<std::int32_t>({1, -6, 3})}, {typed<std::int32_t>({1, -7, 3})}, {1e9, 1});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_NE(r.worst.find("out[1] got -6 want -7"), std::string::npos) << r.worst;
  // An operand's own tolerance applies to integers too.
  auto got = typed<std::int64_t>({10}), ref = typed<std::int64_t>({12});
  got.tolerance = Tolerance{2, 0};
  EXPECT_TRUE(compare_outputs({got}, {ref}, {}).passed);
}

TEST(CheckDtypes, PoisonIsUnwrittenInEveryFloatDtypeAndWhereAnIntegerDiffers) {
  Output f16 = typed<__half>({__float2half(1.0f), __float2half(2.0f)});
  poison_bytes(std::span<std::byte>(f16.data).subspan(2));
  const auto r = compare_outputs({f16}, {typed<__half>({__float2half(1.0f), __float2half(2.0f)})}, {1, 1});
  EXPECT_EQ(r.unwritten, 1u) << r.summary();
  // u8: 0xFF is the poison byte and also the value 255; it counts as unwritten only where
  // the reference holds something else.
  Output u8 = typed<std::uint8_t>({255, 255});
  const auto same = compare_outputs({u8}, {typed<std::uint8_t>({255, 7})}, {});
  EXPECT_EQ(same.unwritten, 1u) << same.summary();
  EXPECT_EQ(same.elements, 2u);
}

TEST(CheckDtypes, Bf16UsesTheToleranceOnItsRoundedValues) {
  const auto a = typed<__nv_bfloat16>({__float2bfloat16_rn(1.0f), __float2bfloat16_rn(100.0f)});
  const auto b = typed<__nv_bfloat16>({__float2bfloat16_rn(1.0f), __float2bfloat16_rn(100.5f)});
  // bf16 has 8 significant bits: between 64 and 128 its ulp is 2^(6-7) = 0.5, so 100
  // and 100.5 are both exact and differ by 0.5, within 1/64 relative of 100.5.
  EXPECT_TRUE(compare_outputs({a}, {b}, {0, 1.0 / 64}).passed);
  EXPECT_FALSE(compare_outputs({typed<__nv_bfloat16>({__float2bfloat16_rn(-3.0f)})},
                               {typed<__nv_bfloat16>({__float2bfloat16_rn(3.0f)})}, {0, 1.0 / 64})
                   .passed);
}

TEST(CheckDtypes, DtypeNamesRoundTripAndMismatchedDtypesFail) {
  for (DType d : kAllDTypes) EXPECT_EQ(dtype_from_string(to_string(d)), d);
  EXPECT_FALSE(dtype_from_string("f8").has_value());
  const auto r = compare_outputs({typed<float>({1})}, {typed<double>({1})}, {1, 1});
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.worst.find("of another dtype"), std::string::npos) << r.worst;
}

TEST(CheckSampled, OnlyTheSampledRowsAreComparedButEveryElementIsScanned) {
  // 4 rows of 2: the reference computed rows 1 and 3 only (the rest poisoned).
  Output ref = typed<float>({0, 0, 5, 6, 0, 0, 7, 8});
  poison_bytes(std::span<std::byte>(ref.data).subspan(0, 8));
  poison_bytes(std::span<std::byte>(ref.data).subspan(16, 8));
  ref.sample = {2, {1, 3}};
  auto r = compare_outputs({typed<float>({9, 9, 5, 6, 9, 9, 7, 8})}, {ref}, {0, 0});
  EXPECT_TRUE(r.passed) << r.summary();
  EXPECT_TRUE(r.sampled);
  EXPECT_EQ(r.elements, 4u);
  // A never-written element outside the sample still fails.
  Output got = typed<float>({9, 9, 5, 6, 9, 9, 7, 8});
  poison_bytes(std::span<std::byte>(got.data).subspan(0, 4));
  r = compare_outputs({got}, {ref}, {0, 0});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.unwritten, 1u) << r.summary();
  // And a wrong value inside it.
  r = compare_outputs({typed<float>({9, 9, 5, 6.5f, 9, 9, 7, 8})}, {ref}, {0, 0});
  EXPECT_EQ(r.mismatches, 1u) << r.summary();
}

TEST(Operands, SizesOverflowAsInputErrorsAndTypedAccessIsChecked) {
  const auto big = input("x", DType::f64, {std::int64_t{1} << 40, std::int64_t{1} << 30}, uniform(-1, 1));
  EXPECT_THROW((void)big.count(), InputError);
  const auto bytes = input("y", DType::f64, {std::int64_t{1} << 62}, uniform(-1, 1));
  EXPECT_THROW((void)bytes.bytes(), InputError);
  const std::vector<OperandSpec> specs = {input("a", DType::f32, {3}, uniform(-1, 1)),
                                          inout("c", DType::bf16, {5}, uniform(-1, 1))};
  const OperandBytes need = operand_bytes(specs);
  EXPECT_EQ(need.device, 12u + 2 * 10u);   // c and its pristine copy
  EXPECT_EQ(need.host, 2 * 12u + 6 * 10u);  // inputs twice: the re-check's second seed
  float a[3];
  __nv_bfloat16 c[5];
  Operands view(Backend::cpu, {{&specs[0], a}, {&specs[1], c}});
  EXPECT_EQ(view.in<float>("a"), a);
  EXPECT_EQ(view.out<__nv_bfloat16>("c"), c);
  EXPECT_THROW((void)view.out<float>("a"), std::logic_error);       // an input
  EXPECT_THROW((void)view.in<double>("a"), std::logic_error);       // not its dtype
  EXPECT_THROW((void)view.in<float>("nope"), std::logic_error);
}
}  // namespace
}  // namespace harness
