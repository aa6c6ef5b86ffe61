#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace harness {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance over lower-cased characters: insertions,
  // deletions, substitutions and transpositions of neighbours ("cdua" -> "cuda") cost 1.
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  // A typo changes a few characters; beyond a third of the word it is another word.
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  if (best && best_d <= limit) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto m = closest_match(word, candidates)) return "; did you mean '" + *m + "'?";
  return {};
}

}  // namespace harness
