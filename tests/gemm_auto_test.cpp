// `auto`'s choice (kernels/gemm/gemm_auto.hpp) as a pure function of (M, N, K, SM count):
// which class each shape of suites/gemm.yaml gets, the split counts' invariants, the text
// recorded as the result's config, and the registered variants (auto, splitk, gemv) with
// their constraints. CPU only: nothing here launches a kernel.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "gemm/gemm_auto.hpp"
#include "gemm/gemm_gemv16.hpp"
#include "gemm/gemm_skinny16.hpp"
#include "gemm_params.hpp"
#include "harness/registry.hpp"
#include "test_support.hpp"

namespace {

namespace kg = kernels::gemm;
using kg::AutoKind;
using kg::Tile;

constexpr int kH100 = 132;  // SMs of an H100 SXM (an H200 has 132 too)

struct Expect {
  int M, N, K;
  AutoKind kind;
  Tile tile;  // for splitk and tile
};

// The rule of gemm_auto.hpp: GEMV for a vector operand, rank-1 for K = 1, else the (tile,
// splits) of least modelled time on 132 SMs. The classes below follow from its terms by
// hand (tiles, blocks per SM L = ceil(tiles * splits / 132), tile rates 128x128 > 128x64 >
// 64x64 = 32x64, padding priced in):
const std::vector<Expect> kShapes = {
    {1, 4096, 4096, AutoKind::gemv, Tile::t128x128},      // x^T B
    {4096, 1, 4096, AutoKind::gemv, Tile::t128x128},      // A x
    {1, 1, 1, AutoKind::gemv, Tile::t128x128},
    {1, 4097, 33, AutoKind::gemv, Tile::t128x128},
    {4097, 1, 31, AutoKind::gemv, Tile::t128x128},
    {1024, 1024, 1, AutoKind::outer, Tile::t128x128},
    {8192, 8192, 1, AutoKind::outer, Tile::t128x128},
    {127, 129, 4099, AutoKind::splitk, Tile::t64x64},     // 6 tiles of 64x64 (4 of 128x128: 3/4 padding)
    {33, 65, 70000, AutoKind::splitk, Tile::t32x64},      // M = 33: 32x64 pads least
    {8192, 64, 8192, AutoKind::splitk, Tile::t128x64},    // N = 64: 128x128 would be half padding
    {16, 4096, 4096, AutoKind::splitk, Tile::t32x64},     // batch-like rows
    {32, 4096, 4096, AutoKind::splitk, Tile::t32x64},
    {64, 4096, 4096, AutoKind::splitk, Tile::t64x64},
    {128, 4096, 4096, AutoKind::splitk, Tile::t128x128},  // 32 tiles, split 8: 256 blocks
    {16, 4096, 200, AutoKind::tile, Tile::t128x64},       // K < 256: no split; 4 warps per SM
    {16, 4096, 512, AutoKind::splitk, Tile::t32x64},
    {256, 256, 256, AutoKind::splitk, Tile::t128x64},     // 8 tiles, 4 slices of 64
    {256, 256, 200, AutoKind::tile, Tile::t128x64},       // K < 256
    {512, 512, 512, AutoKind::splitk, Tile::t128x128},    // 16 tiles, split 8: one per SM
    {1000, 1000, 1000, AutoKind::splitk, Tile::t128x128}, // 64 tiles, split 4: 2 per SM
    {1023, 1025, 999, AutoKind::splitk, Tile::t128x128},  // 72 tiles, split 5: L = 3 of 200
    {1024, 1024, 1024, AutoKind::splitk, Tile::t128x128}, // 64 tiles, split 4 (was 64x64 unsplit)
    {1280, 1280, 1024, AutoKind::splitk, Tile::t128x128}, // 100 tiles
    {2048, 2048, 2048, AutoKind::tile, Tile::t128x128},   // 256 tiles: 2 per SM, one wave
    {2048, 2048, 512, AutoKind::tile, Tile::t128x128},
    {4096, 4096, 4096, AutoKind::tile, Tile::t128x128},
    {8192, 8192, 8192, AutoKind::tile, Tile::t128x128},
    {4097, 4095, 4096, AutoKind::tile, Tile::t128x128},
    {3000, 3000, 3000, AutoKind::tile, Tile::t128x128},
};

std::string shape(const Expect& e) {
  return std::to_string(e.M) + "x" + std::to_string(e.N) + "x" + std::to_string(e.K);
}

TEST(GemmAuto, EachShapeGetsItsClass) {
  for (const Expect& e : kShapes) {
    const kg::AutoChoice c = kg::choose_auto(e.M, e.N, e.K, kH100);
    EXPECT_EQ(c.kind, e.kind) << shape(e) << ": " << kg::describe(c);
    if (e.kind == AutoKind::splitk || e.kind == AutoKind::tile) {
      EXPECT_EQ(c.tile, e.tile) << shape(e) << ": " << kg::describe(c);
    }
  }
}

TEST(GemmAuto, SplitCountsCoverKWithWholeSlices) {
  for (const Expect& e : kShapes) {
    const kg::AutoChoice c = kg::choose_auto(e.M, e.N, e.K, kH100);
    if (c.kind != AutoKind::splitk) continue;
    const int slice = kg::splitk_slice(e.K, c.splits);
    EXPECT_GE(c.splits, 2) << shape(e);
    EXPECT_LE(c.splits, kg::kSplitMaxSplits) << shape(e);
    EXPECT_EQ(slice % 8, 0) << shape(e);                        // float4 never straddles slices
    EXPECT_GE(static_cast<long long>(slice) * c.splits, e.K) << shape(e);  // K covered
    EXPECT_LT(static_cast<long long>(slice) * (c.splits - 1), e.K) << shape(e);  // no empty slice
    EXPECT_EQ(kg::splitk_slices(e.K, c.splits), c.splits) << shape(e);  // recorded = used
    EXPECT_GE(slice, kg::kSplitMinSlice) << shape(e);
    EXPECT_LE(kg::auto_workspace_bytes(c, e.M, e.N, e.K), kg::kSplitMaxWorkspaceBytes) << shape(e);
    EXPECT_EQ(kg::auto_workspace_bytes(c, e.M, e.N, e.K),
              static_cast<std::size_t>(c.splits) * e.M * e.N * sizeof(float))
        << shape(e);
    // The split fills the SMs it occupies: the last round of blocks is >= 90% full
    // (wave quantization), wherever K allows enough slices (256^3: 4 slices of 64 only).
    if (e.K / kg::kSplitMinSlice >= c.splits + 1) {
      const long long blocks = kg::tile_count(c.tile, e.M, e.N) * c.splits;
      const long long busiest = (blocks + kH100 - 1) / kH100;
      EXPECT_GE(static_cast<double>(blocks) / static_cast<double>(busiest * kH100), 0.9)
          << shape(e) << ": " << kg::describe(c);
    }
  }
}

// choose_auto is the argmin of auto_modelled_seconds over every tile and split count it
// may run (a candidate wins only by >= 2%), over a grid of shapes and SM counts.
TEST(GemmAuto, ChoiceIsTheModelsMinimum) {
  const Tile tiles[] = {Tile::t128x128, Tile::t128x64, Tile::t64x64, Tile::t32x64};
  for (int sms : {16, 78, 132})
    for (int M : {2, 33, 100, 257, 1000, 3000})
      for (int N : {2, 64, 129, 1024, 5000})
        for (int K : {2, 255, 256, 999, 4096, 30000}) {
          const kg::AutoChoice c = kg::choose_auto(M, N, K, sms);
          ASSERT_TRUE(c.kind == AutoKind::tile || c.kind == AutoKind::splitk);
          const double chosen = kg::auto_modelled_seconds(c.tile, c.splits, M, N, K, sms);
          double best = chosen;
          const long long panel = static_cast<long long>(M) * N * 4;
          for (Tile t : tiles)
            for (int s = 1; s <= kg::kSplitMaxSplits; ++s) {
              const bool splittable = K >= kg::kSplitMinK && s <= K / kg::kSplitMinSlice &&
                                      s * panel <= static_cast<long long>(kg::kSplitMaxWorkspaceBytes) &&
                                      kg::splitk_slices(K, s) == s;
              if (s == 1 || splittable) best = std::min(best, kg::auto_modelled_seconds(t, s, M, N, K, sms));
            }
          EXPECT_LE(chosen, best / 0.98) << M << "x" << N << "x" << K << " on " << sms << ": " << kg::describe(c);
        }
}

// The model's terms: a partial round of blocks costs a whole one (wave quantization), the
// 128x128 tile is the fastest per FLOP, and the split pays for its panels.
TEST(GemmAuto, ModelPricesWavesTilesAndPanels) {
  // 1024^3 on 132 SMs: 64x64 unsplit (256 tiles, 2 per SM of 1024 K steps) vs 128x128 split
  // 4 (256 blocks, 2 per SM of 256): the recorded 87.5 us of the first (H200, 2026-11-23)
  // is what the model says within 10%; the second is modelled faster.
  const double t64 = kg::auto_modelled_seconds(Tile::t64x64, 1, 1024, 1024, 1024, kH100);
  EXPECT_NEAR(t64, 87.5e-6, 8.75e-6);
  EXPECT_LT(kg::auto_modelled_seconds(Tile::t128x128, 4, 1024, 1024, 1024, kH100), 0.8 * t64);
  // 132 blocks cost one round, 133 two.
  const double one = kg::auto_modelled_seconds(Tile::t128x64, 1, 128 * 132, 64, 4096, kH100);
  const double two = kg::auto_modelled_seconds(Tile::t128x64, 1, 128 * 133, 64, 4096, kH100);
  EXPECT_GT(two, 1.2 * one);
  // More slices than the SMs need only add panel traffic.
  EXPECT_LT(kg::auto_modelled_seconds(Tile::t128x128, 2, 1024, 1024, 8192, 64),
            kg::auto_modelled_seconds(Tile::t128x128, 4, 1024, 1024, 8192, 64));
  // More SMs never make a choice slower under the model.
  for (int K : {512, 4096})
    EXPECT_LE(kg::auto_modelled_seconds(kg::choose_auto(1024, 1024, K, kH100).tile,
                                        kg::choose_auto(1024, 1024, K, kH100).splits, 1024, 1024, K, kH100),
              kg::auto_modelled_seconds(kg::choose_auto(1024, 1024, K, 66).tile,
                                        kg::choose_auto(1024, 1024, K, 66).splits, 1024, 1024, K, 66));
}

// Over many K and SM counts: the recorded split count is the one the kernels run (rounding
// slices to multiples of 8 never changes it again), slices are whole and none is empty.
TEST(GemmAuto, RecordedSplitsAreTheSplitsThatRun) {
  for (int K = 1; K <= 20000; K += 37)
    for (int sms : {1, 16, 78, 132}) {
      const kg::AutoChoice c = kg::choose_splitk(40, 70, K, sms);
      if (c.kind != AutoKind::splitk) continue;
      EXPECT_EQ(kg::splitk_slices(K, c.splits), c.splits) << "K=" << K << " SMs=" << sms;
      const long long slice = kg::splitk_slice(K, c.splits);
      EXPECT_TRUE(slice * (c.splits - 1) < K && K <= slice * c.splits) << "K=" << K;
    }
}

TEST(GemmAuto, GemvSlicesOnlyForARowVectorAndLongK) {
  const kg::AutoChoice row = kg::choose_auto(1, 4096, 4096, kH100);
  EXPECT_GE(row.splits, 2);
  EXPECT_EQ(kg::auto_workspace_bytes(row, 1, 4096, 4096), static_cast<std::size_t>(row.splits) * 4096 * sizeof(float));
  EXPECT_EQ(kg::choose_auto(4096, 1, 4096, kH100).splits, 1);  // warp per row: no workspace
  EXPECT_EQ(kg::auto_workspace_bytes(kg::choose_auto(4096, 1, 4096, kH100), 4096, 1, 4096), 0u);
  EXPECT_EQ(kg::choose_auto(1, 4097, 33, kH100).splits, 1);   // K < 64: one slice
}

TEST(GemmAuto, PureFunctionOfShapeAndSmCount) {
  for (const Expect& e : kShapes) {
    const kg::AutoChoice a = kg::choose_auto(e.M, e.N, e.K, kH100), b = kg::choose_auto(e.M, e.N, e.K, kH100);
    EXPECT_TRUE(a.kind == b.kind && a.tile == b.tile && a.splits == b.splits) << shape(e);
  }
  // A smaller GPU: 16 tiles of 128x128 on 16 SMs need only 2 slices (2 blocks per SM), 132
  // SMs take 16 (128 blocks, one per SM); fewer SMs never take more slices.
  EXPECT_EQ(kg::describe(kg::choose_auto(512, 512, 4096, 16)), "splitk tile=128x128 splits=2");
  EXPECT_EQ(kg::describe(kg::choose_auto(512, 512, 4096, kH100)), "splitk tile=128x128 splits=16");
  EXPECT_LE(kg::choose_auto(8192, 64, 8192, 32).splits, kg::choose_auto(8192, 64, 8192, kH100).splits);
  // No SM count (no device): still a valid choice, never a crash.
  EXPECT_EQ(kg::choose_auto(4096, 4096, 4096, 0).kind, AutoKind::tile);
}

TEST(GemmAuto, DescribeNamesKernelTileAndSplits) {
  const kg::AutoChoice s = kg::choose_auto(127, 129, 4099, kH100);
  EXPECT_EQ(kg::describe(s), "splitk tile=64x64 splits=" + std::to_string(s.splits));
  EXPECT_EQ(kg::describe(kg::choose_auto(4096, 4096, 4096, kH100)), "tile 128x128");
  EXPECT_EQ(kg::describe(kg::choose_auto(1024, 1024, 1, kH100)), "outer");
  EXPECT_EQ(kg::describe(kg::choose_auto(4096, 1, 4096, kH100)), "gemv");
  const kg::AutoChoice g = kg::choose_auto(1, 4096, 4096, kH100);
  EXPECT_EQ(kg::describe(g), "gemv splits=" + std::to_string(g.splits));
}

TEST(GemmAuto, SplitkVariantSplitsWhereTheWaveIsNotFull) {
  // 4096^2: two panels would exceed kSplitMaxWorkspaceBytes, so no split is possible: the
  // cheapest plain tile, and no workspace.
  const kg::AutoChoice big = kg::choose_splitk(4096, 4096, 4096, kH100);
  EXPECT_EQ(big.tile, Tile::t128x128);
  EXPECT_EQ(big.kind, AutoKind::tile);
  EXPECT_EQ(kg::auto_workspace_bytes(big, 4096, 4096, 4096), 0u);
  // Where auto splits, splitk makes the same choice.
  for (const Expect& e : kShapes) {
    const kg::AutoChoice a = kg::choose_auto(e.M, e.N, e.K, kH100);
    if (a.kind == AutoKind::splitk) {
      EXPECT_EQ(kg::describe(kg::choose_splitk(e.M, e.N, e.K, kH100)), kg::describe(a)) << shape(e);
    }
  }
  // splitk splits whatever K (down to 64-long slices), even where auto would not (2048^3
  // fills the SMs unsplit); auto only from K = 256.
  EXPECT_EQ(kg::choose_splitk(256, 256, 255, kH100).kind, AutoKind::splitk);
  EXPECT_EQ(kg::choose_auto(256, 256, 255, kH100).kind, AutoKind::tile);
  EXPECT_EQ(kg::choose_auto(2048, 2048, 2048, kH100).kind, AutoKind::tile);
  EXPECT_EQ(kg::choose_splitk(2048, 2048, 2048, kH100).kind, AutoKind::splitk);
  EXPECT_EQ(kg::choose_splitk(64, 64, 127, kH100).kind, AutoKind::tile);  // K / 64 < 2
}

const harness::Variant& variant(const char* name) {
  const harness::Variant* v = harness::Registry::instance().find_variant("gemm", name);
  if (v == nullptr) throw std::logic_error(std::string("no gemm/") + name);
  return *v;
}

harness::Params dims(int M, int N, int K) {
  harness::Params p;
  p.set("M", std::int64_t{M});
  p.set("N", std::int64_t{N});
  p.set("K", std::int64_t{K});
  p.set("alpha", 1.0);
  p.set("beta", 0.0);
  return p;
}

TEST(GemmAuto, VariantsAreRegisteredWithConfigAndWorkspace) {
  for (const char* name : {"auto", "splitk", "gemv"}) {
    const harness::Variant& v = variant(name);
    EXPECT_EQ(v.backend, harness::Backend::cuda) << name;
    EXPECT_TRUE(static_cast<bool>(v.config)) << name;
    EXPECT_TRUE(static_cast<bool>(v.workspace_bytes)) << name;
    ASSERT_TRUE(static_cast<bool>(v.constraint)) << name;
    EXPECT_FALSE(v.constraint(dims(1, 4096, 4096)).has_value()) << name;
    // The config is the choice at this GPU's SM count; without a GPU it says nothing.
    const std::string config = v.config(dims(127, 129, 4099));
    if (harness::test::have_device()) {
      EXPECT_FALSE(config.empty()) << name;
    } else {
      EXPECT_TRUE(config.empty()) << name << ": " << config;
    }
  }
  EXPECT_EQ(variant("auto").config(dims(1, 1, 1)).empty(), !harness::test::have_device());
}

TEST(GemmAuto, GemvSkipsMatricesAndTheFp32KernelsSkipOtherDtypes) {
  const auto why = variant("gemv").constraint(dims(8, 8, 8));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("M == 1 or N == 1"), std::string::npos) << *why;
  EXPECT_FALSE(variant("auto").constraint(dims(8, 8, 8)).has_value());
  harness::Params bf16 = dims(64, 64, 64);
  bf16.set("dtype", std::string("bf16"));
  const auto skip = variant("splitk").constraint(bf16);
  ASSERT_TRUE(skip.has_value());
  EXPECT_NE(skip->find("bf16"), std::string::npos) << *skip;
  const auto matrix = variant("gemv").constraint(bf16);
  ASSERT_TRUE(matrix.has_value());
  EXPECT_NE(matrix->find("M == 1 or N == 1"), std::string::npos) << *matrix;
  harness::Params tf32 = dims(1, 64, 64);
  tf32.set("dtype", std::string("tf32"));
  const auto dtype = variant("gemv").constraint(tf32);
  ASSERT_TRUE(dtype.has_value());
  EXPECT_NE(dtype->find("tf32"), std::string::npos) << *dtype;
  // Every layout runs (the kernels read transposed operands in place).
  for (const char* layout : {"nn", "nt", "tn", "tt"}) {
    harness::Params p = dims(64, 64, 64);
    p.set("layout", std::string(layout));
    for (const char* name : {"auto", "splitk"}) EXPECT_FALSE(variant(name).constraint(p).has_value()) << name;
  }
}

// The 16-bit GEMV (bf16, f16) takes the matrix operand K contiguous only: M == 1 with B
// stored (N, K) (nt, tt), N == 1 with A stored (M, K) (nn, nt), M == N == 1 in any layout; the
// `gemv` variant says why it skips the other layouts, and `auto` runs it where it applies
// (its config names it where a device answers) and a GEMM kernel elsewhere.
TEST(GemmAuto, Gemv16TakesKContiguousMatrixOperands) {
  using kg::Layout;
  for (Layout l : {Layout::nt, Layout::tt}) EXPECT_EQ(kg::gemm_gemv16_unsupported(l, 1, 4096), nullptr);
  for (Layout l : {Layout::nn, Layout::nt}) EXPECT_EQ(kg::gemm_gemv16_unsupported(l, 4096, 1), nullptr);
  for (Layout l : {Layout::nn, Layout::nt, Layout::tn, Layout::tt}) EXPECT_EQ(kg::gemm_gemv16_unsupported(l, 1, 1), nullptr);
  EXPECT_NE(std::string(kg::gemm_gemv16_unsupported(Layout::nn, 1, 4096)).find("B stored (N, K)"), std::string::npos);
  EXPECT_NE(std::string(kg::gemm_gemv16_unsupported(Layout::tn, 4096, 1)).find("A stored (M, K)"), std::string::npos);
  EXPECT_NE(std::string(kg::gemm_gemv16_unsupported(Layout::nt, 8, 8)).find("M == 1 or N == 1"), std::string::npos);
  // Several vectors: layout nt, min(M, N) <= 8, K % 8 == 0; `gemv` runs them in 16 bits.
  EXPECT_EQ(kg::gemm_gemv16_multi_unsupported(Layout::nt, 8, 4096, 4096), nullptr);
  EXPECT_EQ(kg::gemm_gemv16_multi_unsupported(Layout::nt, 4096, 2, 8), nullptr);
  EXPECT_NE(std::string(kg::gemm_gemv16_multi_unsupported(Layout::nn, 8, 4096, 4096)).find("layout nt"),
            std::string::npos);
  EXPECT_NE(std::string(kg::gemm_gemv16_multi_unsupported(Layout::nt, 9, 4096, 4096)).find("<= 8"),
            std::string::npos);
  EXPECT_NE(std::string(kg::gemm_gemv16_multi_unsupported(Layout::nt, 8, 4096, 4092)).find("K % 8"),
            std::string::npos);
  {
    harness::Params p = dims(8, 4096, 4096);
    p.set("dtype", std::string("bf16"));
    p.set("layout", std::string("nt"));
    EXPECT_FALSE(variant("gemv").constraint(p).has_value());
    EXPECT_NE(variant("gemv").config(p).find("up to 8"), std::string::npos) << variant("gemv").config(p);
    p.set("M", std::int64_t{9});
    EXPECT_TRUE(variant("gemv").constraint(p).has_value());
  }
  for (const char* dtype : {"bf16", "f16"}) {
    harness::Params nt = dims(1, 4096, 4096);
    nt.set("dtype", std::string(dtype));
    nt.set("layout", std::string("nt"));
    EXPECT_FALSE(variant("gemv").constraint(nt).has_value()) << dtype;
    EXPECT_FALSE(variant("auto").constraint(nt).has_value()) << dtype;
    EXPECT_EQ(variant("gemv").workspace_bytes(nt), 0u);
    EXPECT_EQ(variant("auto").workspace_bytes(nt), 0u);
    EXPECT_NE(variant("gemv").config(nt).find("16-bit"), std::string::npos) << variant("gemv").config(nt);
    if (harness::test::have_device()) {
      EXPECT_NE(variant("auto").config(nt).find("gemv"), std::string::npos) << variant("auto").config(nt);
    }
    harness::Params nn = nt;
    nn.set("layout", std::string("nn"));
    const auto why = variant("gemv").constraint(nn);
    ASSERT_TRUE(why.has_value()) << dtype;
    EXPECT_NE(why->find("layouts nt, tt"), std::string::npos) << *why;
    if (harness::test::have_device()) {
      EXPECT_EQ(variant("auto").config(nn).find("gemv"), std::string::npos) << variant("auto").config(nn);
    }
  }
}

// The skinny 16-bit GEMM (gemm_skinny16.hpp): layout nt with a side of at most 64 rows and
// K % 8 == 0, each refusal saying why; K split into up to 8 slices (a cluster) until the grid
// has two CTAs an SM, never under 8 k steps a slice; the plan line names the roles. The
// `skinny` variant skips other dtypes and layouts with those reasons; `auto` takes the shape
// without a skip either way.
TEST(GemmAuto, SkinnyTakesNtWithASmallSide) {
  using kg::Layout;
  for (int small : {1, 2, 8, 33, 64}) {
    EXPECT_EQ(kg::gemm_skinny16_unsupported(-1, Layout::nt, small, 4096, 4096), nullptr) << small;
    EXPECT_EQ(kg::gemm_skinny16_unsupported(-1, Layout::nt, 14336, small, 4096), nullptr) << small;
  }
  for (Layout l : {Layout::nn, Layout::tn, Layout::tt})
    EXPECT_NE(std::string(kg::gemm_skinny16_unsupported(-1, l, 8, 4096, 4096)).find("layout nt only"),
              std::string::npos);
  EXPECT_NE(std::string(kg::gemm_skinny16_unsupported(-1, Layout::nt, 65, 4096, 4096)).find("<= 64"),
            std::string::npos);
  EXPECT_NE(std::string(kg::gemm_skinny16_unsupported(-1, Layout::nt, 8, 4096, 4093)).find("K % 8"),
            std::string::npos);
  EXPECT_NE(std::string(kg::gemm_skinny16_unsupported(-1, Layout::nt, 8, 65535 * 128 + 1, 64)).find("65535"),
            std::string::npos);
  // Splits at 8 rows (3 CTAs an SM): all resident at once, 396 CTAs on 132 SMs: 32 row blocks
  // of N = 4096 -> 8 (256 CTAs); 112 of N = 14336 -> 3 (336). Above 8 rows, the fewest that give
  // two CTAs an SM: 112 -> 4 (448 CTAs, >= 264). K = 512 (16 steps) -> 2 at most (8 steps a
  // slice); K = 64 -> 1.
  EXPECT_TRUE(kg::skinny_three_ctas(8));
  EXPECT_FALSE(kg::skinny_three_ctas(16));
  EXPECT_EQ(kg::gemm_skinny16_splits(8, 4096, 4096, 132), 8);
  EXPECT_EQ(kg::gemm_skinny16_splits(4096, 8, 4096, 132), 8);
  EXPECT_EQ(kg::gemm_skinny16_splits(8, 14336, 4096, 132), 3);
  EXPECT_EQ(kg::gemm_skinny16_splits(14336, 5, 4096, 132), 3);
  EXPECT_EQ(kg::gemm_skinny16_splits(5, 14336, 1000, 132), 3);  // the GPU test's 3-slice case
  EXPECT_EQ(kg::gemm_skinny16_splits(16, 14336, 4096, 132), 4);
  EXPECT_EQ(kg::gemm_skinny16_splits(32, 14336, 4096, 132), 4);
  EXPECT_EQ(kg::gemm_skinny16_splits(8, 4096, 512, 132), 2);
  EXPECT_EQ(kg::gemm_skinny16_splits(8, 4096, 64, 132), 1);
  EXPECT_EQ(kg::gemm_skinny16_splits(8, 100000, 4096, 132), 1);
  EXPECT_EQ(kg::gemm_skinny16_plan(8, 4096, 4096, 132),
            "skinny (mma.sync m16n8k16): 32 blocks of 128 B rows x 8 K slices (clusters of 8), M = 8 padded to 8, "
            "its slice in shared memory");
  EXPECT_EQ(kg::gemm_skinny16_plan(4096, 33, 4096, 132),
            "skinny (mma.sync m16n8k16): 32 blocks of 128 A rows x 8 K slices (clusters of 8), N = 33 padded to 64, "
            "its slice in shared memory");
  // The small operand's slice should fit in shared memory (96 KiB): K = 14336 in 8 slices of 56 steps
  // (3648 bytes a row) fits at 16 rows, not at 64: more slices are tried, then it is read from L1/L2.
  EXPECT_EQ(kg::gemm_skinny16_splits(64, 14336, 14336, 132), 8);
  EXPECT_EQ(kg::gemm_skinny16_splits(16, 14336, 14336, 132), 8);  // 4 by the grid, 8 for shared memory
  EXPECT_TRUE(kg::gemm_skinny16_x_in_smem(16, 14336, 8));
  EXPECT_FALSE(kg::gemm_skinny16_x_in_smem(64, 14336, 8));
  EXPECT_NE(kg::gemm_skinny16_plan(64, 4096, 14336, 132).find("read from L1/L2"), std::string::npos);
  // auto prefers it (measured) for M <= 8, M <= 16 while N <= 8192, N <= 32; wgmma's tiles beyond.
  EXPECT_TRUE(kg::gemm_skinny16_preferred(8, 14336));
  EXPECT_TRUE(kg::gemm_skinny16_preferred(16, 4096));
  EXPECT_FALSE(kg::gemm_skinny16_preferred(16, 14336));
  EXPECT_FALSE(kg::gemm_skinny16_preferred(17, 4096));
  EXPECT_TRUE(kg::gemm_skinny16_preferred(14336, 32));
  EXPECT_FALSE(kg::gemm_skinny16_preferred(14336, 33));
  for (const char* dtype : {"bf16", "f16"}) {
    harness::Params p = dims(8, 4096, 4096);
    p.set("dtype", std::string(dtype));
    p.set("layout", std::string("nt"));
    if (!harness::test::have_device()) {
      EXPECT_FALSE(variant("skinny").constraint(p).has_value()) << dtype;
    }
    EXPECT_FALSE(variant("auto").constraint(p).has_value()) << dtype;
    p.set("layout", std::string("nn"));
    const auto why = variant("skinny").constraint(p);
    ASSERT_TRUE(why.has_value()) << dtype;
    EXPECT_NE(why->find("layout nt only"), std::string::npos) << *why;
    EXPECT_FALSE(variant("auto").constraint(p).has_value()) << dtype;
  }
  for (const char* dtype : {"f32", "tf32"}) {
    harness::Params p = dims(8, 4096, 4096);
    p.set("dtype", std::string(dtype));
    p.set("layout", std::string("nt"));
    const auto why = variant("skinny").constraint(p);
    ASSERT_TRUE(why.has_value()) << dtype;
    EXPECT_NE(why->find("bf16 or f16"), std::string::npos) << *why;
  }
}

// The layout changes only the GEMV kernel: the column-block kernel (with K slices) for a
// matrix operand stored with its output dimension contiguous, the warp-per-row kernel (no
// slices, no workspace) for one stored with K contiguous. Tiles and splits do not change.
TEST(GemmAuto, LayoutPicksTheGemvKernel) {
  using kg::Layout;
  const int sms = kH100;
  // M == 1: B 'n' (K, N) -> column blocks; B 't' (N, K) -> warp per row.
  EXPECT_GT(kg::choose_auto(Layout::nn, 1, 4096, 4096, sms).splits, 1);
  EXPECT_GT(kg::choose_auto(Layout::tn, 1, 4096, 4096, sms).splits, 1);
  EXPECT_EQ(kg::choose_auto(Layout::nt, 1, 4096, 4096, sms).splits, 1);
  EXPECT_EQ(kg::auto_workspace_bytes(kg::choose_auto(Layout::tt, 1, 4096, 4096, sms), 1, 4096, 4096), 0u);
  // N == 1: A 'n' (M, K) -> warp per row; A 't' (K, M) -> column blocks over M, panels of M.
  EXPECT_EQ(kg::choose_auto(Layout::nn, 4096, 1, 4096, sms).splits, 1);
  const kg::AutoChoice t = kg::choose_auto(Layout::tn, 4096, 1, 4096, sms);
  EXPECT_EQ(t.kind, kg::AutoKind::gemv);
  EXPECT_GT(t.splits, 1);
  EXPECT_EQ(kg::auto_workspace_bytes(t, 4096, 1, 4096), static_cast<std::size_t>(t.splits) * 4096 * sizeof(float));
  EXPECT_TRUE(kg::gemv_uses_cols(Layout::tt, 4096, 1));
  EXPECT_FALSE(kg::gemv_uses_cols(Layout::nt, 4096, 1));
  for (Layout l : {Layout::nt, Layout::tn, Layout::tt}) {
    EXPECT_EQ(kg::describe(kg::choose_auto(l, 127, 129, 4099, sms)), kg::describe(kg::choose_auto(127, 129, 4099, sms)));
    EXPECT_EQ(kg::describe(kg::choose_auto(l, 4096, 4096, 4096, sms)), "tile 128x128");
    EXPECT_EQ(kg::choose_auto(l, 64, 64, 64, sms).layout, l);
  }
}

}  // namespace

// auto in the reduced-precision dtypes runs wgmma or mma (the unaligned path: mma takes any
// shape), so it runs wherever one of them does; where neither can (fp8 in a layout other
// than nt: wgmma's fp8 path is nt only, mma has no fp8), it skips with both reasons.
TEST(GemmAuto, ReducedPrecisionRunsWgmmaOrMmaAndSkipsOnlyWhenNeitherCan) {
  const auto have_sm80 = [] {
    const auto cc = plugins::gemm::current_compute_capability();
    return !cc || *cc >= 80;  // no device: the constraints leave the device to the run
  }();
  for (const char* dtype : {"bf16", "f16", "tf32"}) {
    for (const auto& [M, N, K] : {std::tuple{64, 64, 64}, std::tuple{67, 35, 45}}) {  // K % 8 != 0: mma only
      harness::Params p = dims(M, N, K);
      p.set("dtype", std::string(dtype));
      p.set("layout", std::string("nt"));
      const auto skip = variant("auto").constraint(p);
      EXPECT_EQ(skip.has_value(), !have_sm80) << dtype << " " << M << "x" << N << "x" << K << ": " << skip.value_or("");
      // The config names the kernel and, for wgmma, its plan; for mma, why not wgmma (nothing
      // without a device).
      const std::string config = variant("auto").config(p);
      if (!harness::test::have_device()) {
        EXPECT_TRUE(config.empty()) << config;
      } else if (have_sm80) {
        EXPECT_TRUE(config.rfind("wgmma: 128x", 0) == 0 || config.rfind("mma (wgmma: ", 0) == 0) << config;
      }
    }
  }
  harness::Params fp8 = dims(64, 64, 64);
  fp8.set("dtype", std::string("fp8_e4m3"));
  fp8.set("layout", std::string("nn"));
  const auto skip = variant("auto").constraint(fp8);
  ASSERT_TRUE(skip.has_value());
  EXPECT_EQ(skip->rfind("auto: wgmma: ", 0), 0u) << *skip;
  EXPECT_NE(skip->find("mma: no fp8 path"), std::string::npos) << *skip;
}
