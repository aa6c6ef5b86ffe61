#pragma once
// "did you mean ...?" for misspelt names.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

std::size_t edit_distance(std::string_view a, std::string_view b);
// The closest candidate when it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);
// "; did you mean 'tiled'?" or "" (ready to append to a message).
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace harness
