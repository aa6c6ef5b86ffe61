// Host reference of the histogram (histogram.hpp).
#include "histogram/histogram.hpp"

namespace kernels::histogram {

int bin_count(Bins bins) { return bins == Bins::bytes ? 256 : 7; }

void histogram_cpu(Bins bins, const unsigned char* x, std::size_t n, unsigned* counts) {
  for (int b = 0; b < bin_count(bins); ++b) counts[b] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = x[i];
    if (bins == Bins::bytes) ++counts[c];
    else if (c >= 'a' && c <= 'z') ++counts[(c - 'a') / 4];
  }
}

}  // namespace kernels::histogram
