#include <cmath>

#include <gtest/gtest.h>

#include "harness/params.hpp"

namespace harness {
namespace {

TEST(Params, IntegerDomainRejectsOutOfRangeAndWrongType) {
  const ParamSpec n = int_param("n", 16, 1, 1024, "elements");
  EXPECT_FALSE(n.reject(std::int64_t{1}));
  EXPECT_FALSE(n.reject(std::int64_t{1024}));
  ASSERT_TRUE(n.reject(std::int64_t{0}));
  EXPECT_EQ(*n.reject(std::int64_t{0}), "value 0 of 'n' is out of range: expected integer in [1, 1024]");
  ASSERT_TRUE(n.reject(2.5));
  EXPECT_NE(n.reject(2.5)->find("expects an integer"), std::string::npos);
}

TEST(Params, FloatAcceptsIntegersAndRejectsNonFinite) {
  const ParamSpec a = float_param("alpha", 1.0, -10.0, 10.0, "");
  EXPECT_FALSE(a.reject(std::int64_t{3}));
  EXPECT_FALSE(a.reject(-2.5));
  EXPECT_TRUE(a.reject(11.0));
  EXPECT_TRUE(a.reject(std::nan("")));
  EXPECT_TRUE(a.reject(std::string("x")));
}

TEST(Params, EnumListsItsChoices) {
  const ParamSpec op = enum_param("op", "copy", {"copy", "triad"}, "");
  EXPECT_FALSE(op.reject(std::string("triad")));
  ASSERT_TRUE(op.reject(std::string("add")));
  EXPECT_EQ(*op.reject(std::string("add")), "'op' must be one of {copy, triad}, got 'add'");
  EXPECT_EQ(op.describe_domain(), "one of {copy, triad}");
}

TEST(Params, WithDefaultsKeepsDeclarationOrderAndWidensIntegersForFloats) {
  const std::vector<ParamSpec> specs = {int_param("M", 8, 1, {}, ""), float_param("alpha", 1.0, {}, {}, ""),
                                        bool_param("causal", false, "")};
  Params given;
  given.set("alpha", std::int64_t{2});
  given.set("M", std::int64_t{64});
  const Params p = with_defaults(specs, given);
  EXPECT_EQ(p.describe(), "M=64 alpha=2 causal=false");
  EXPECT_DOUBLE_EQ(p.get_float("alpha"), 2.0);
  EXPECT_TRUE(std::holds_alternative<double>(p.at("alpha")));
  EXPECT_THROW(p.at("nope"), std::out_of_range);
}

}  // namespace
}  // namespace harness
