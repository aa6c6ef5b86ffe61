// The `histogram` problem: counts of n bytes in 256 byte bins or 7 letter bins.
//   x (n) u8 -> counts (256 or 7) u32, exact
// data: uniform (every byte equally likely), skewed (90% one byte, 'e': atomics on one
// bin contend), text (lowercase letters and spaces with English-like frequencies).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "harness/cuda_check.hpp"
#include "harness/registry.hpp"
#include "histogram/histogram.hpp"

namespace {

using harness::DType;
namespace kh = kernels::histogram;

kh::Bins bins_of(const harness::Params& p) {
  return p.get_string("bins") == "letters" ? kh::Bins::letters : kh::Bins::bytes;
}

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Element i's random word: a function of (seed, i) only.
std::uint64_t word(std::uint64_t seed, std::size_t i) { return splitmix64(splitmix64(seed ^ 0x68697374ull) + i); }

void fill_skewed(std::span<std::byte> x, std::uint64_t seed) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint64_t r = word(seed, i);
    x[i] = static_cast<std::byte>((r % 10) != 0 ? 'e' : static_cast<unsigned char>(r >> 32));  // 90% 'e'
  }
}

// Letter frequencies of English text per 10000 letters (a..z), and spaces at 1/5.5 of
// all characters (mean word length 4.5).
constexpr std::array<int, 26> kLetterFreq = {817, 149, 278, 425, 1270, 223, 202, 609, 697, 15, 77, 403, 241,
                                             675, 751, 193, 10,  599, 633, 906, 276, 98,  236, 15,  197, 7};

void fill_text(std::span<std::byte> x, std::uint64_t seed) {
  int total = 0;
  for (int f : kLetterFreq) total += f;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint64_t r = word(seed, i);
    if (r % 11 < 2) {  // 2/11 of the characters
      x[i] = static_cast<std::byte>(' ');
      continue;
    }
    int pick = static_cast<int>((r >> 16) % static_cast<std::uint64_t>(total)), c = 0;
    while (pick >= kLetterFreq[c]) pick -= kLetterFreq[c++];
    x[i] = static_cast<std::byte>('a' + c);
  }
}

class HistogramProblem final : public harness::Problem {
 public:
  std::string name() const override { return "histogram"; }
  std::string description() const override { return "u32 counts of n bytes: 256 byte bins or 7 letter bins (a-d ... y-z)"; }
  std::vector<harness::ParamSpec> params() const override {
    return {harness::enum_param("bins", "bytes", {"bytes", "letters"},
                                "bytes: 256 bins; letters: a-d, e-h, i-l, m-p, q-t, u-x, y-z, other bytes uncounted"),
            harness::enum_param("data", "uniform", {"uniform", "skewed", "text"},
                                "uniform bytes; skewed: 90% 'e' (contention); text: letters and spaces"),
            harness::int_param("n", 1 << 24, 1, 2147483647, "input bytes (cub takes an int count)")};
  }
  std::vector<harness::OperandSpec> operands(const harness::Params& p) const override {
    const std::int64_t n = p.get_int("n");
    const std::string& data = p.get_string("data");
    const harness::Fill fill = data == "skewed" ? harness::custom_fill(fill_skewed)
                               : data == "text" ? harness::custom_fill(fill_text)
                                                : harness::integers(0, 255);
    return {harness::input("x", DType::u8, {n}, fill),
            harness::output("counts", DType::u32, {kh::bin_count(bins_of(p))})};
  }
  // No floating-point work: one bin update per byte (reported as 0 FLOPs). Bytes: the
  // input once and the counts once.
  harness::Work work(const harness::Params& p) const override {
    return {0, static_cast<double>(p.get_int("n")) + 4.0 * kh::bin_count(bins_of(p))};
  }
  harness::Tolerance tolerance(const harness::Params&) const override { return {0, 0}; }
  std::string tolerance_rule() const override { return "exact: integer counts"; }
  std::string reference_variant(const harness::Params&) const override { return "cpu"; }
};

template <kh::Algo kAlgo>
void run_ladder(harness::LaunchContext& ctx) {
  HARNESS_CUDA(kh::launch(kAlgo, bins_of(*ctx.params), ctx.in<std::uint8_t>("x"),
                          static_cast<std::size_t>(ctx.param_int("n")), ctx.out<std::uint32_t>("counts"), ctx.stream));
}

void run_cub(harness::LaunchContext& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param_int("n"));
  const kh::Bins bins = bins_of(*ctx.params);
  const auto* x = ctx.in<std::uint8_t>("x");
  auto* counts = ctx.out<std::uint32_t>("counts");
  std::size_t bytes = 0;
  HARNESS_CUDA(kh::launch_cub(bins, x, n, counts, nullptr, &bytes, ctx.stream));
  void* scratch = ctx.workspace->get(0, bytes > 0 ? bytes : 1);
  HARNESS_CUDA(kh::launch_cub(bins, x, n, counts, scratch, &bytes, ctx.stream));
}

void run_cpu(harness::LaunchContext& ctx) {
  kh::histogram_cpu(bins_of(*ctx.params), ctx.in<std::uint8_t>("x"), static_cast<std::size_t>(ctx.param_int("n")),
                    ctx.out<std::uint32_t>("counts"));
}

using kh::Algo;

}  // namespace

HARNESS_REGISTER_PROBLEM(HistogramProblem);
HARNESS_REGISTER_VARIANT(histogram, cpu, cpu, "host loop", run_cpu);
HARNESS_REGISTER_VARIANT(histogram, global_atomics, cuda, "rung 1: one thread per byte, global atomics",
                         run_ladder<Algo::global_atomics>);
HARNESS_REGISTER_VARIANT(histogram, privatized, cuda, "rung 2: per-block shared-memory copy, merged per block",
                         run_ladder<Algo::privatized>);
HARNESS_REGISTER_VARIANT(histogram, coarsened_contiguous, cuda, "rung 3: privatized, 32 contiguous bytes per thread",
                         run_ladder<Algo::coarsened_contiguous>);
HARNESS_REGISTER_VARIANT(histogram, coarsened_interleaved, cuda, "rung 4: privatized, grid-strided (coalesced)",
                         run_ladder<Algo::coarsened_interleaved>);
HARNESS_REGISTER_VARIANT(histogram, aggregated, cuda, "rung 5: rung 4 + one atomic per run of equal bins",
                         run_ladder<Algo::aggregated>);
HARNESS_REGISTER_VARIANT(histogram, privatized_vectorized, cuda,
                         "rung 6: per-lane shared sub-histograms, 16-byte loads, grid 6 x SMs",
                         run_ladder<Algo::privatized_vectorized>);
HARNESS_REGISTER_VARIANT(histogram, cub, cuda, "cub::DeviceHistogram HistogramEven (bytes) / HistogramRange (letters)",
                         run_cub);
